"""LoCoMo (``locomo10.json``) conversations: two people talking over weeks, for memory tests.

Representation (the model is a listener that reads the whole conversation):

- one DSH turn per LoCoMo session, in session order, timed at the session's date;
- its first user message is a short note with the session number, the two speakers and
  the session's ``date_time`` verbatim (source ``{kind: plugin, plugin: locomo, form:
  snapshot}``), since temporal questions need the date;
- every utterance of either speaker is one user message, id ``locomo:<sample_id>:<dia_id>``,
  source ``{kind: user, speaker, diaId}``, content ``["<speaker>: ", <text verbatim>]`` plus
  ``" [shared an image: <blip_caption>]"`` when the turn shared a photo (two human speakers
  fit no user/assistant split: 124 of the 272 sessions open with speaker B);
- the turn ends with one short assistant acknowledgement (source ``{kind: model, provider:
  ctxsdk, model: locomo-import}``), so every step is answered as DSH expects; it is the only
  text the importer writes, and its provenance says ``synthetic``.

Image URLs, search queries and other turn fields stay in the provenance events, not in the
content.
The data is CC BY-NC 4.0: read it from where it lives, never copy it into a package.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._common import MAX_IMPORT_BYTES, JsonDict, fail, load_json, source_name, well_formed
from ._emit import ImportedLog, build_log
from ._items import AssistantItem, Item, Origin, UserItem

__all__ = ["read_locomo"]

_SESSION = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
_UTTERANCE_MS = 30_000  # the data has one date per session: utterances are spaced 30 s apart
_ACK_SOURCE = ("ctxsdk", "locomo-import")
_NOTE_SOURCE = {"kind": "plugin", "plugin": "locomo", "form": "snapshot"}
_IN_CONTENT = frozenset({"speaker", "dia_id", "text", "blip_caption"})
_EPOCH = 1_600_000_000_000  # only for a session whose date cannot be read


def read_locomo(
    data: list[Any] | str | Path,
    conversation: int | str = 0,
    *,
    session_id: str | None = None,
    max_bytes: int = MAX_IMPORT_BYTES,
) -> ImportedLog:
    """The v3 log ``ctxsdk.session.importers.from_locomo`` makes a session of (it documents
    the arguments), built and checked as the harness checks a log on load."""
    label = "locomo data"
    if isinstance(data, str | Path):
        label = str(source_name(data))
        data = load_json(data, max_bytes)
    if not isinstance(data, list):
        fail(label, "expected the list of LoCoMo samples (locomo10.json)")
    sample, index = _pick(data, conversation, label)
    sample = well_formed(sample)  # lone surrogates (which json keeps) become U+FFFD
    where = f"{label}, conversation {index}"
    raw_id = sample.get("sample_id")
    sid = raw_id if isinstance(raw_id, str) else str(index)
    conv = sample.get("conversation")
    if not isinstance(conv, dict):
        fail(where, "'conversation' must be an object")
    a, b = conv.get("speaker_a"), conv.get("speaker_b")
    if not isinstance(a, str) or not isinstance(b, str):
        fail(where, "speaker_a and speaker_b must be strings")
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conv
        if (m := _SESSION.fullmatch(key)) and isinstance(conv[key], list) and conv[key]
    )
    if not sessions:
        fail(where, "no session_<N> with turns")
    items: list[Item] = []
    start = _EPOCH
    for number, key in sessions:
        date = conv.get(f"{key}_date_time")
        at = f"{where}, {key}"
        begin = _when(date) or start
        items += _session(sid, number, key, conv[key], date, begin, (a, b), at)
        start = begin + (len(conv[key]) + 2) * _UTTERANCE_MS
    return build_log(
        items,
        fmt="locomo",
        source=None if label == "locomo data" else label,
        session_id=session_id or f"locomo:{sid}",
        created_at=items[0].time or _EPOCH,
        title=(f"LoCoMo {sid}: {a} and {b}", {"kind": "fallback"}),
    )


def _pick(data: list[Any], conversation: int | str, label: str) -> tuple[JsonDict, int]:
    if isinstance(conversation, str):
        for i, sample in enumerate(data):
            if isinstance(sample, dict) and sample.get("sample_id") == conversation:
                return sample, i
        fail(label, f"no conversation with sample_id {conversation!r}")
    if not 0 <= conversation < len(data):
        fail(label, f"conversation {conversation} is out of range (0..{len(data) - 1})")
    sample = data[conversation]
    if not isinstance(sample, dict):
        fail(f"{label}, conversation {conversation}", "a sample must be an object")
    return sample, conversation


def _when(date: Any) -> int | None:
    """A session date as epoch ms (the data has no time zone: read as UTC)."""
    if not isinstance(date, str):
        return None
    try:
        dt = datetime.strptime(date.strip(), _DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None
    return round(dt.timestamp() * 1000)


def _session(
    sid: str,
    number: int,
    key: str,
    turns: list[Any],
    date: Any,
    begin: int,
    speakers: tuple[str, str],
    where: str,
) -> list[Item]:
    a, b = speakers
    when = date if isinstance(date, str) else "unknown"
    note = f"Session {number} of the conversation between {a} and {b}. Date and time: {when}."
    items: list[Item] = [
        UserItem(
            f"locomo:{sid}:{key}",
            [{"type": "text", "text": note}],
            dict(_NOTE_SOURCE),
            Origin(f"{key}_date_time", f"{where}_date_time", {"session": number}),
            time=begin,
        )
    ]
    for k, turn in enumerate(turns):
        at = f"{where}[{k}]"
        if not isinstance(turn, dict):
            fail(at, "a turn must be an object")
        speaker, dia, text = turn.get("speaker"), turn.get("dia_id"), turn.get("text")
        if not isinstance(speaker, str) or not isinstance(dia, str) or not isinstance(text, str):
            fail(at, "a turn needs string speaker, dia_id and text")
        blocks = [{"type": "text", "text": f"{speaker}: "}, {"type": "text", "text": text}]
        caption = turn.get("blip_caption")
        if isinstance(caption, str) and caption:
            blocks.append({"type": "text", "text": f" [shared an image: {caption}]"})
        extra = {k2: v for k2, v in turn.items() if k2 not in _IN_CONTENT}  # img_url, query ...
        items.append(
            UserItem(
                f"locomo:{sid}:{dia}",
                blocks,
                {"kind": "user", "speaker": speaker, "diaId": dia},
                Origin(dia, f"{at} ({dia})", {"session": number, **extra}),
                time=begin + (k + 1) * _UTTERANCE_MS,
                prompt=False,
            )
        )
    ack = f"(session {number} read: {len(turns)} turns)"
    items.append(
        AssistantItem(
            f"locomo:{sid}:{key}:ack",
            [{"type": "text", "text": ack}],
            [Origin(key, where, {"session": number, "synthetic": True})],
            *_ACK_SOURCE,
            time=begin + (len(turns) + 1) * _UTTERANCE_MS,
        )
    )
    return items
