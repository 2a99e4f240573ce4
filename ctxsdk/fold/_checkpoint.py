"""The text a fold leaves on the surface in place of what it archived.

A state checkpoint opens with its mark line (``[cx-fold L cp:<id>]``), says what it folded
and where that is archived, then renders the current state the reducer derived from the raw
log (never from a summary), every item with the seqs it came from. The framing (what the
checkpoints are, how to search and recall) is written once, in the first checkpoint on the
surface; later checkpoints carry one short recall line, so the frozen prefix does not pay for
the same paragraph again and again.

A ``basic`` checkpoint is the harness's own (``checkpoint_content``: its preamble and
``<compacted-summary>``) around the eight sections compaction-basic asks its model for;
without a model the sections are filled deterministically from the same state.

A leaf checkpoint after earlier ones carries only what they did not already show (new
items, changed values, and the failures and obligations closed since): the frozen prefix
holds the state once, not once per checkpoint, so its load grows with the state, not with
the number of folds. A root checkpoint renders the whole current state again.

A masked tool result keeps its call and says where its bytes went, in one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any

from ..session.kernel import (
    checkpoint_content,
    estimate_text,
    fold_line,
    message_of,
    message_text,
)
from ._state import RUN_KEY_PREFIX, STATEMENT_KEY_PREFIX

__all__ = [
    "BASIC_SECTIONS",
    "FRAMING",
    "basic_content",
    "basic_summary",
    "mask_text",
    "shown_in",
    "shown_key",
    "state_checkpoint_text",
    "state_lines",
    "told_run",
    "unshown",
]

FRAMING = (
    "Earlier messages of this conversation are folded into checkpoints like this one and "
    "archived exactly. Find anything in them with context_search(query); read them verbatim "
    'with context_recall(ref="cp:<id>", depth="exact"). The state below is derived from the '
    "log itself (the user's words, tool results), not from a summary; [seq N] says where."
)

# A checkpoint stands in for what it folds: at most this share of the folded tokens goes to
# the state's derived groups (the rest of the state is always shown, and does not shrink
# that share: a long task template's rules no longer starve the findings), so a fold of a
# short span still reclaims what the policy asks. (bench realworld fold_received, one tree: a
# tenth 0.716, an eighth 0.740 (check 0.640 -> 0.680), 0.15 0.753 with no more held-out
# facts; bench fold --quick economy prompt tokens over basic: mean 0.921, 0.929, 0.937 and
# the dearest workload 0.968, 0.981, 0.994: a fifth passed 1. The share no longer shrunk by
# the rest: fold_received +10 facts (tune +7, check +3), W2 0.981 -> 0.989, mean 0.934.)
CHECKPOINT_SHARE = 0.125

_COMMANDS = "Commands run (the latest)"

BASIC_SECTIONS = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code",
    "Errors and Fixes",
    "Pending Jobs",
    "Current Work",
    "Next Step",
    "Critical Context",
)


def _refs(sources: Sequence[int]) -> str:
    shown = ", ".join(str(s) for s in list(sources)[:3])
    more = f" +{len(sources) - 3}" if len(sources) > 3 else ""
    return f"[seq {shown}{more}]"


def _value(anchor: Any) -> str:
    return " ".join(str(anchor.value).split())


def _item(anchor: Any) -> str:
    return f"- {_value(anchor)} {_refs(anchor.sources)}"


def _head_line(key: str, anchor: Any, superseded: Iterable[Any]) -> str:
    was = [a for a in superseded if a.state_key == key]
    tail = f" (was {_value(was[-1])} {_refs(was[-1].sources)})" if was else ""
    if key.startswith(STATEMENT_KEY_PREFIX):  # a statement: its words are the whole line
        return f"- {_value(anchor)} {_refs(anchor.sources)}{tail}"
    name = key.split("/", 1)[1] if key.startswith("value/") else key
    return f"- {name} = {_value(anchor)} {_refs(anchor.sources)}{tail}"


def _head_order(item: tuple[str, Any]) -> tuple[str, int]:
    """Heads by key, the statements (keyed by a digest of their words) in the order said."""
    key, anchor = item
    if key.startswith(STATEMENT_KEY_PREFIX):
        return STATEMENT_KEY_PREFIX, min(anchor.sources, default=0)
    return key, 0


def _shown_value(key: str, anchor: Any, told: AbstractSet[str] = frozenset()) -> bool:
    """A value head the checkpoint shows: not the run's settings (``run/<key>``: its model,
    sandbox, shell) the harness keeps to itself (a request's header, an importer's banner),
    which the model never read as a message; those a message told the model (``told``:
    Codex's environment context, a user turn) fold away with it, so the checkpoint says them."""
    return bool(anchor.kind == "value" and (not key.startswith(RUN_KEY_PREFIX) or key in told))


# the messages a conversation gives the model, which a fold takes away
_TOLD_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_PASTED_MIN = 8  # characters of a setting's value a pasted banner must hold to tell it


def told_run(state: Any, events: Sequence[Mapping[str, Any]], last_seq: int) -> frozenset[str]:
    """The run settings (``run/<key>`` heads) a message the fold takes away (a seq up to
    ``last_seq``) told the model: the checkpoint must say them (``_shown_value``). A setting
    read from the harness's own banner is told too when a user message the fold takes away
    holds its value (the user pasted the banner: Aider's "Main model: …" lines)."""
    out: set[str] = set()
    pasted: list[str] | None = None
    for key, anchor in state.heads.items():
        if not key.startswith(RUN_KEY_PREFIX):
            continue
        seqs = [q for q in anchor.sources if 0 <= q <= last_seq and q < len(events)]
        if any(events[q].get("type") in _TOLD_TYPES for q in seqs):
            out.add(key)
            continue
        head = _value(anchor).split(" (", 1)[0]
        if len(head) < _PASTED_MIN:
            continue  # a short value ("on", "bash") is in many messages by chance
        if pasted is None:
            pasted = [
                message_text(message_of(ev) or {})
                for ev in events[: last_seq + 1]
                if ev.get("type") == "user/message"
            ]
        if any(head in text for text in pasted):
            out.add(key)
    return frozenset(out)


def shown_key(anchor: Any) -> tuple[str, str]:
    """What makes an item already shown: its id and its value."""
    return str(anchor.id), " ".join(str(anchor.value).split())


def shown_in(state: Any, text: str) -> set[tuple[str, str]]:
    """The items of ``state`` a checkpoint's ``text`` shows (``shown_key``): an item whose
    value the text holds. A derived group's item the checkpoint's budget left out is not
    shown, so a later checkpoint may still carry it. An empty text (a checkpoint whose text
    is not known) shows every active item, as before texts were read."""
    active = state.active()
    if not text:
        return {shown_key(a) for a in active}
    # the user's earlier requests too: a later checkpoint need not repeat them
    return {shown_key(a) for a in (*active, *state.requests) if _value(a) in text}


def unshown(state: Any, shown: AbstractSet[tuple[str, str]]) -> Any:
    """``state`` without the items earlier checkpoints already show."""
    if not shown:
        return state

    def keep(anchors: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(a for a in anchors if shown_key(a) not in shown)

    def one(anchor: Any) -> Any:
        return None if anchor is None or shown_key(anchor) in shown else anchor

    return replace(
        state,
        objective=one(state.objective),
        current_request=one(state.current_request),
        constraints=keep(state.constraints),
        rules=keep(state.rules),
        heads={k: a for k, a in state.heads.items() if shown_key(a) not in shown},
        open_failures=keep(state.open_failures),
        open_obligations=keep(state.open_obligations),
        decisions=keep(state.decisions),
        evidence=keep(state.evidence),
        artifacts=keep(state.artifacts),
        requests=keep(state.requests),
        files=keep(state.files),
        findings=keep(state.findings),
        names=keep(state.names),
        commands=keep(state.commands),
    )


def state_lines(
    state: Any,
    closed: Sequence[Any] = (),
    *,
    budget: int | None = None,
    told: AbstractSet[str] = frozenset(),
) -> list[str]:
    """The state as checkpoint lines, empty sections left out; ``closed`` lists failures and
    obligations an earlier checkpoint showed open that are closed now; ``told`` the run
    settings a folded message told the model (``told_run``), shown with the values.

    Every group of the state reaches the model: what the state holds and what a checkpoint
    shows are one thing. The slots, values, failures, obligations, decisions, evidence and
    files are always shown; the groups derived to help resume the work (the user's earlier
    requests, what the key files hold, the names the work keeps naming, the assistant's
    findings) share ``budget`` tokens (None: no limit; what is always shown does not count
    against it), each group its share in that order, what one leaves passing to the next,
    best items first."""
    out: list[str] = []
    if state.objective is not None:
        out.append(f"Objective: {_value(state.objective)} {_refs(state.objective.sources)}")
    req = getattr(state, "current_request", None)
    if req is not None and (state.objective is None or req.sources != state.objective.sources):
        out.append(f"Latest request: {_value(req)} {_refs(req.sources)}")

    def section(title: str, lines: list[str]) -> None:
        if lines:
            out.append(f"{title}:")
            out.extend(lines)

    section("Constraints", [_item(a) for a in state.constraints])
    # the project's agent files (AGENTS.md …): the message that held them may fold away
    section("Project rules", [_item(a) for a in state.rules])
    heads = [
        _head_line(k, a, state.superseded)
        for k, a in sorted(state.heads.items(), key=_head_order)
        if _shown_value(k, a, told)
    ]
    section("Current values", heads)
    section("Open failures", [_item(a) for a in state.open_failures])
    section("Open obligations", [_item(a) for a in state.open_obligations])
    section("Decisions", [_item(a) for a in state.decisions])
    section("Evidence", [_item(a) for a in state.evidence])
    section("Files", [_item(a) for a in state.artifacts])
    section("Closed since the earlier checkpoints", [_item(a) for a in closed])
    derived = [
        ("Earlier requests", [_item(a) for a in state.earlier_requests()]),
        ("What the files hold", [_item(a) for a in state.files]),
        ("Key names", [_item(a) for a in state.names]),
        ("Findings (the assistant's, unverified)", [_item(a) for a in state.findings]),
    ]
    derived = [(title, lines) for title, lines in derived if lines]
    # the commands the work ran take only what the groups above leave
    ran = [_item(a) for a in getattr(state, "commands", ())]
    if ran:
        derived.append((_COMMANDS, ran))
    shared = sum(1 for title, _ in derived if title != _COMMANDS)
    left = budget  # the derived groups' own share: what is always shown does not shrink it
    for i, (title, lines) in enumerate(derived):
        share = None if left is None else left // max(shared - i, 1)
        kept: list[str] = []
        used = estimate_text(title) + 1
        for line in lines:
            cost = estimate_text(line) + 1
            if share is not None and used + cost > share:
                break
            kept.append(line)
            used += cost
        if kept:
            section(title, kept)
            if left is not None:
                left -= used
    return out


def state_checkpoint_text(
    *,
    checkpoint_id: str,
    mode: str,
    state: Any,
    first_seq: int,
    last_seq: int,
    messages: int,
    tokens: int,
    framing: bool,
    rationale: str | None = None,
    closed: Sequence[Any] = (),
    told: AbstractSet[str] = frozenset(),
    share: float = CHECKPOINT_SHARE,
) -> str:
    """The full text of a state checkpoint (``state`` already without what earlier
    checkpoints show; ``closed`` what they showed open that is closed now; ``told`` the run
    settings a folded message told the model; ``share`` of the folded tokens for the
    derived groups, 0 for none)."""
    span = f"seq {first_seq}–{last_seq}, {messages} message(s), {tokens:,} tokens"
    if framing:
        lines = [
            fold_line(mode, checkpoint_id),
            f"Folded {span}, archived verbatim and verified "
            f'(context_recall(ref="cp:{checkpoint_id}", depth="exact")).',
            FRAMING,
        ]
    else:  # the first checkpoint explains; a later one says what it holds, in one line
        lines = [fold_line(mode, checkpoint_id, f"{span}, archived")]
    body = state_lines(state, closed, budget=int(tokens * share), told=told)
    if body:
        since = ":" if framing else " (new since the earlier checkpoints):"
        lines.append(f"State as of seq {state.upto}{since}")
        lines.extend(body)
    if rationale:
        lines.append("Rationale (model-written, not state):")
        lines.append(rationale.strip())
    return "\n".join(lines)


def basic_summary(state: Any, current_work: str) -> str:
    """compaction-basic's eight sections, filled from the state (no model): terse bullets,
    ``(none)`` where a section has nothing, exact paths and errors kept."""

    def bullets(items: Iterable[str]) -> str:
        got = [f"- {i}" for i in items if i]
        return "\n".join(got) if got else "(none)"

    def vals(anchors: Iterable[Any]) -> list[str]:
        return [_value(a) for a in anchors]

    objective = [_value(state.objective)] if state.objective is not None else []
    req = getattr(state, "current_request", None)
    heads = [
        _value(a) if k.startswith(STATEMENT_KEY_PREFIX) else f"{k.split('/', 1)[-1]} = {_value(a)}"
        for k, a in sorted(state.heads.items(), key=_head_order)
        if _shown_value(k, a)
    ]
    sections = {
        "Primary Request and Intent": bullets(objective),
        "Key Technical Concepts": bullets(vals(state.decisions)),
        "Files and Code": bullets(vals(state.artifacts)),
        "Errors and Fixes": bullets(vals(state.open_failures)),
        "Pending Jobs": bullets(vals(state.open_obligations)),
        "Current Work": bullets([" ".join(current_work.split())[:600]]),
        "Next Step": bullets([_value(req)] if req is not None else []),
        "Critical Context": bullets([*vals(state.constraints), *heads, *vals(state.evidence)]),
    }
    return "\n\n".join(f"## {title}\n{sections[title]}" for title in BASIC_SECTIONS)


def basic_content(summary: str) -> list[dict[str, Any]]:
    """The harness's checkpoint message content around ``summary``."""
    return checkpoint_content(summary)


def mask_text(checkpoint_id: str, seq: int, tool: str, lines: int, tokens: int) -> str:
    """The one line a masked tool result keeps."""
    return (
        fold_line("mask", checkpoint_id, f"seq {seq}")
        + f" {tool} output ({lines:,} lines, {tokens:,} tokens) archived; "
        f'context_recall(ref="cp:{checkpoint_id}", depth="exact") reads it.'
    )
