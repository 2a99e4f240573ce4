"""``ctxsdk bench realworld``: what the engines keep of real agent sessions.

**Labels.** ``_realworld_labels.json``: facts a teammate would write down, labelled by people
who read real sessions of ``shared/data/agent-sessions`` (Claude Code, Codex, Gemini CLI,
OpenHands, Aider, mini-swe-agent, SWE-agent) before any engine ran on them. Each fact has a
kind (instruction, preference, decision, project, error_fix, setting, outcome), a natural
question and 1–4 ``terms`` that any correct answer contains (all of them, case-insensitive).
Two passes: the first (210 facts) was sparse, so a true memory it left out counted as noise;
a second, blind one (273 facts, ``"pass": 2``) added the other facts a teammate would want,
its annotators reading only the raw files, never an engine's output.
The ``check`` split is whole sessions kept aside: nobody tunes on them; ``tune`` is the rest.
``cross_session`` facts hold in two or more sessions of one project (for Merge);
``disagreements`` are pairs of sessions that state different values for one thing (three
real, four synthetic chats built with ``Session.from_messages``, one of them a negation).

**Measured, per split (``_tune``, ``_check``, ``_all``).**

- baseline ``bm25_top5``: BM25 (``session.BM25``) over the raw messages of all labelled
  sessions indexed together, one document per user / assistant message or tool result; a
  fact is answered when one of the top 5 documents for its question holds all its terms.
- ``memory_stored``: ``Memory.open(path)``, ``ingest`` of every labelled session with the
  defaults; a fact is stored when one non-observation node's name + text holds its terms.
- ``memory_find_top5``: ``m.find(question)``, top 5 hits; answered when one hit's node
  (name, text and the ``to_json`` text a user sees) holds all terms.
- ``memory_map``: the ``m.map(budget=400)`` text holds all terms.
- ``memory_noise``: the fraction of non-observation nodes that hold the terms of no fact.
- ``merge_cross_session``: ``Merge(sessions).run()`` per cross-session group at its default
  budget; the fraction of groups whose terms are all in ``result.block.text``.
- ``merge_noise``: the fraction of block slots whose key and values hold the terms of no
  labelled fact of those sessions (nor of a cross-session fact of some of them, nor of a
  labelled disagreement's side one of them states).
- ``memory_noise_pass1`` and ``merge_noise_pass1`` (notes): the same against the first
  labelling pass alone (``"pass"`` 1: 210 facts), for comparison with earlier reports; the
  second pass (``"pass": 2``) added 273 facts the first left out.
- ``merge_disputed``: the fraction of disagreements for which the merge of the two sessions
  has a ``disputed`` slot with a claim holding one side's terms and a claim holding the
  other's; ``merge_negation_disputed`` the same for the negation case alone.
- ``fold_received`` (the target): what the model is given after a fold. The session is
  folded at a window of a quarter of its tokens (at least 1,024; ``Fold(session,
  window=…).run(force=True)``, the default policy otherwise), so the fold must give up most
  of it; the fraction of decision, preference, instruction, project and setting facts
  whose terms are all in the messages the model then receives (the checkpoint and the
  verbatim tail after it). A session too short to fold at that window is left out
  (``notes["fold_not_folded"]``). ``fold_checkpoint``: the same against the checkpoint's
  text alone.
- ``fold_state``: ``Fold(session, store=tmp).run()``, then ``f.state``: the same facts in
  the state's text and JSON. The state is what a checkpoint is built from; until every
  group of it reached the checkpoint, this figure counted what the model never saw.

``--quick`` runs the same on a fixed subset of sessions (a few per split).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ctxsdk.session import BM25
from ctxsdk.session.kernel import message_of, search_text

from .._progress import Progress, resolve_progress
from ..errors import CtxError
from ..session import Session
from ._result import BenchResult, Target

__all__ = [
    "FOLD_KINDS",
    "answered",
    "bm25_top5",
    "corpus_dir",
    "labels",
    "load_session",
    "raw_documents",
    "run",
]

FOLD_KINDS = frozenset({"decision", "preference", "instruction", "project", "setting"})
_OVER_WINDOW = 4  # fold_received: the session is this many times its context window
_MIN_WINDOW = 1024  # the smallest window a fold is measured at (a shorter session never folds)
SPLITS = ("tune", "check", "all")
_SURFACE = ("user/message", "assistant/message", "tool/result")
# --quick: a few whole sessions of each split (small ones, several agents)
QUICK_SESSIONS = (
    "openhands/wrong_initial_state.json",
    "aider/aider-website__pong.md",
    "mini-swe-agent/django__django-16255.traj.json",
    "openhands/basic_interactions.json",
    "openhands/basic.json",
    "aider/aider-website__hello-world-flask.md",
    "mini-swe-agent/django__django-11163.traj.json",
)


def corpus_dir() -> Path | None:
    """``$CTXSDK_SHARED_DATA/agent-sessions``, else ``shared/data/agent-sessions`` next to the
    checkout; None when absent."""
    env = os.environ.get("CTXSDK_SHARED_DATA")
    base = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    root = base / "agent-sessions"
    return root if root.is_dir() else None


def labels() -> dict[str, Any]:
    """The label file shipped with the package."""
    text = resources.files("ctxsdk.bench").joinpath("_realworld_labels.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def load_session(root: Path, rel: str) -> Session:
    """Import one corpus file by its folder (the agent's format)."""
    from ..session.importers import import_file

    agent = rel.split("/", 1)[0]
    return import_file(agent, root / rel)


def raw_documents(session: Session) -> list[str]:
    """One text per user / assistant message and tool result of the whole log."""
    out: list[str] = []
    for ev in session.raw_events:
        if ev.get("type") in _SURFACE:
            msg = message_of(ev)
            if msg is not None:
                text = search_text(msg)
                if text:
                    out.append(text)
    return out


def answered(text: str, terms: Sequence[str]) -> bool:
    low = text.casefold()
    return all(t.casefold() in low for t in terms)


def bm25_top5(docs: Sequence[str], facts: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Per fact: is one of the top 5 BM25 documents for its question holding its terms."""
    index = BM25(docs)
    out: list[bool] = []
    for f in facts:
        scores = index.scores(str(f["question"]))
        top = sorted(range(len(scores)), key=lambda i: -scores[i])[:5]
        out.append(any(answered(docs[i], f["terms"]) for i in top if scores[i] > 0))
    return out


def _frac(flags: Iterable[bool]) -> float:
    xs = list(flags)
    return sum(xs) / len(xs) if xs else math.nan


def _per_split(
    name: str, facts: Sequence[Mapping[str, Any]], ok: Sequence[bool], into: dict[str, float]
) -> None:
    for split in SPLITS:
        pick = [o for f, o in zip(facts, ok, strict=True) if split == "all" or f["split"] == split]
        if pick:
            into[f"{name}_{split}"] = _frac(pick)


def _node_text(node: Any) -> str:
    return f"{node.name}\n{node.text}"


def _memory(
    sessions: Mapping[str, Session], facts: Sequence[Mapping[str, Any]], tmp: Path
) -> tuple[dict[str, list[bool]], float, dict[str, Any]]:
    from ..memory import Memory

    # ``Memory.open(path)`` where the class has it (the documented call), else ``Memory(path)``
    opener: Any = getattr(Memory, "open", None) or Memory
    m = opener(tmp / "realworld.db")
    for s in sessions.values():
        m.ingest(s)
    nodes = [n for n in m.nodes() if n.type not in ("observation", "workspace")]
    texts = [_node_text(n) for n in nodes]
    stored = [any(answered(t, f["terms"]) for t in texts) for f in facts]
    found: list[bool] = []
    for f in facts:
        hits = m.find(str(f["question"])).hits[:5]
        found.append(
            any(
                answered(_node_text(h.node) + "\n" + json.dumps(h.to_json()), f["terms"])
                for h in hits
            )
        )
    map_text = m.map(budget=400).text
    in_map = [answered(map_text, f["terms"]) for f in facts]
    noisy = [t for t in texts if not any(answered(t, f["terms"]) for f in facts)]
    noise = len(noisy) / len(texts) if texts else 0.0
    first = [f["terms"] for f in facts if f.get("pass", 1) == 1]
    noisy_first = [t for t in texts if not any(answered(t, terms) for terms in first)]
    notes = {
        "memory_noise_pass1": len(noisy_first) / len(texts) if texts else 0.0,
        "memory_nodes": dict(Counter(n.type for n in m.nodes())),
        "memory_noise_examples": [" ".join(t.split())[:120] for t in noisy[:8]],
    }
    m.close()
    return {"stored": stored, "find": found, "map": in_map}, noise, notes


def _disputed(result: Any, terms_a: Sequence[str], terms_b: Sequence[str]) -> bool:
    for slot in result.slots:
        if slot.status != "disputed":
            continue
        texts = [f"{c.key} {c.value} {c.text}" for c in slot.claims]
        if any(answered(t, terms_a) for t in texts) and any(answered(t, terms_b) for t in texts):
            return True
    return False


def _disagreement_sides(
    disagreements: Iterable[Mapping[str, Any]], sessions: Sequence[str]
) -> list[list[str]]:
    """The terms of each labelled disagreement's side stated by one of ``sessions``: a slot
    that shows what one of them said on a labelled disagreement is about a labelled fact."""
    out: list[list[str]] = []
    for d in disagreements:
        pair = d.get("sessions") or ()
        for rel, side in zip(pair, ("terms_a", "terms_b"), strict=False):
            if rel in sessions:
                out.append(list(d[side]))
    return out


def _merge(
    root: Path,
    data: Mapping[str, Any],
    sessions: Mapping[str, Session],
    quick: bool,
) -> tuple[dict[str, float], dict[str, Any]]:
    from ..merge import Merge

    def get(rel: str) -> Session:
        return sessions[rel] if rel in sessions else load_session(root, rel)

    metrics: dict[str, float] = {}
    cross_ok: dict[str, list[bool]] = {"tune": [], "check": [], "all": []}
    slots_total = slots_noise = slots_noise_first = 0
    noise_examples: list[str] = []
    groups = list(data["cross_session"])
    if quick:
        groups = groups[-4:]
    for g in groups:
        result = Merge([get(r) for r in g["sessions"]]).run()
        ok = answered(result.block.text, g["terms"])
        cross_ok["all"].append(ok)
        if g["split"] in cross_ok:
            cross_ok[g["split"]].append(ok)
        # a cross-session fact holds in every merge of a superset of its sessions
        shared = [
            o["terms"] for o in data["cross_session"] if set(o["sessions"]) <= set(g["sessions"])
        ]
        shared += _disagreement_sides(data["disagreements"], g["sessions"])
        # every labelled fact of the merged sessions: --quick merges groups whose sessions
        # reach past its subset, and their own labels must count
        mine = [f for f in data["facts"] if f["session"] in g["sessions"]]
        known = [f["terms"] for f in mine] + shared
        first = [f["terms"] for f in mine if f.get("pass", 1) == 1] + shared
        for slot in result.block.slots:
            line = f"{slot.key} {' '.join(slot.presented)}"
            slots_total += 1
            if not any(answered(line, t) for t in first):
                slots_noise_first += 1
            if not any(answered(line, t) for t in known):
                slots_noise += 1
                if len(noise_examples) < 8:
                    noise_examples.append(line[:100])
    for split, flags in cross_ok.items():
        if flags:
            metrics[f"merge_cross_session_{split}"] = _frac(flags)
    metrics["merge_noise"] = slots_noise / slots_total if slots_total else 0.0
    disputed: list[bool] = []
    negation: list[bool] = []
    real: list[bool] = []
    for d in data["disagreements"]:
        if d.get("synthetic"):
            pair = [
                Session.from_messages(d["messages_a"], format="openai"),
                Session.from_messages(d["messages_b"], format="openai"),
            ]
        elif quick:
            continue
        else:
            pair = [get(r) for r in d["sessions"]]
        ok = _disputed(Merge(pair).run(), d["terms_a"], d["terms_b"])
        disputed.append(ok)
        (real if not d.get("synthetic") else []).append(ok)
        if d.get("negation"):
            negation.append(ok)
    metrics["merge_disputed"] = _frac(disputed)
    if real:
        metrics["merge_disputed_real"] = _frac(real)
    metrics["merge_negation_disputed"] = _frac(negation)
    notes = {
        "merge_noise_examples": noise_examples,
        "merge_slots": slots_total,
        "merge_noise_pass1": slots_noise_first / slots_total if slots_total else 0.0,
    }
    return metrics, notes


@dataclass
class _Folded:
    """Per session: the state's text, and after a fold at a quarter of the session's size
    the checkpoint's text and all the model receives (None: the fold did not fold)."""

    state: dict[str, str] = field(default_factory=dict)
    checkpoint: dict[str, str | None] = field(default_factory=dict)
    received: dict[str, str | None] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _fold(sessions: Mapping[str, Session], tmp: Path) -> _Folded:
    from ..fold import Fold

    out = _Folded()
    for i, (rel, s) in enumerate(sessions.items()):
        try:
            f = Fold(s, store=tmp / f"fold{i}")
            f.run()
            st = f.state
            out.state[rel] = str(st) + "\n" + json.dumps(st.to_json(), ensure_ascii=False)
            # the session four times over its window: the fold must give up most of it
            window = max(_MIN_WINDOW, s.tokens().total // _OVER_WINDOW)
            g = Fold(s, store=tmp / f"window{i}", window=window)
            done = g.run(force=True)
            if done.folded and done.record is not None:
                out.checkpoint[rel] = done.record.text
                out.received[rel] = "\n".join(search_text(m) for m in g.session.messages())
            else:
                out.checkpoint[rel] = out.received[rel] = None
        except CtxError as e:  # a session the fold refuses: its facts count as missed
            out.errors[rel] = f"{type(e).__name__}: {e}"[:200]
            out.state[rel] = out.checkpoint[rel] = out.received[rel] = ""
    return out


def run(
    *,
    quick: bool = False,
    progress: Progress | None = None,
    root: Path | None = None,
    sessions_filter: Callable[[str], bool] | None = None,
) -> BenchResult:
    report = resolve_progress(progress)
    base = root if root is not None else corpus_dir()
    if base is None:
        raise CtxError(
            "bench realworld needs the agent-sessions corpus: set CTXSDK_SHARED_DATA to the "
            "shared data folder (the one holding agent-sessions/), or check out shared/ next "
            "to the repository"
        )
    data = labels()
    facts: list[dict[str, Any]] = list(data["facts"])
    keep = sessions_filter or ((lambda rel: rel in QUICK_SESSIONS) if quick else None)
    if keep is not None:
        facts = [f for f in facts if keep(f["session"])]
    rels = sorted({f["session"] for f in facts})
    steps = 6
    report(0, steps, "realworld: import")
    sessions = {rel: load_session(base, rel) for rel in rels}
    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    notes: dict[str, Any] = {
        "quick": quick,  # quick: the QUICK_SESSIONS subset, every measure
        "sessions": len(rels),
        "facts": dict(Counter(f["split"] for f in facts)),
        "kinds": dict(Counter(f["kind"] for f in facts)),
    }
    report(1, steps, "realworld: bm25")
    docs = [d for s in sessions.values() for d in raw_documents(s)]
    bm = bm25_top5(docs, facts)
    _per_split("bm25_top5", facts, bm, baselines)
    for agent in sorted({f["agent"] for f in facts}):
        got = [o for f, o in zip(facts, bm, strict=True) if f["agent"] == agent]
        baselines[f"bm25_top5_{agent}"] = _frac(got)
    with tempfile.TemporaryDirectory(prefix="ctxsdk-realworld-") as tmpdir:
        tmp = Path(tmpdir)
        report(2, steps, "realworld: memory")
        mem, noise, mem_notes = _memory(sessions, facts, tmp)
        notes.update(mem_notes)
        for key, flags in mem.items():
            name = {"stored": "memory_stored", "find": "memory_find_top5", "map": "memory_map"}
            _per_split(name[key], facts, flags, metrics)
        for agent in sorted({f["agent"] for f in facts}):
            hit = [o for f, o in zip(facts, mem["find"], strict=True) if f["agent"] == agent]
            metrics[f"memory_find_top5_{agent}"] = _frac(hit)
        metrics["memory_noise"] = noise
        for split in SPLITS:
            a, b = metrics.get(f"memory_find_top5_{split}"), baselines.get(f"bm25_top5_{split}")
            if a is not None and b is not None:
                metrics[f"memory_find_top5_minus_bm25_{split}"] = a - b
        report(3, steps, "realworld: merge")
        merge_metrics, merge_notes = _merge(base, data, sessions, quick)
        metrics.update(merge_metrics)
        notes.update(merge_notes)
        report(4, steps, "realworld: fold")
        folded = _fold(sessions, tmp)
        fold_facts = [f for f in facts if f["kind"] in FOLD_KINDS]
        fold_ok = [answered(folded.state[f["session"]], f["terms"]) for f in fold_facts]
        _per_split("fold_state", fold_facts, fold_ok, metrics)
        # what the model is given after a fold: only sessions the fold did fold count
        after = [f for f in fold_facts if folded.received[f["session"]] is not None]
        for label, texts in (
            ("fold_checkpoint", folded.checkpoint),
            ("fold_received", folded.received),
        ):
            ok = [answered(texts[f["session"]] or "", f["terms"]) for f in after]
            _per_split(label, after, ok, metrics)
        notes["fold_not_folded"] = sorted(r for r, t in folded.received.items() if t is None)
        if folded.errors:
            notes["fold_errors"] = folded.errors
    report(5, steps, "realworld: score")
    metrics = {k: (v if math.isfinite(v) else 0.0) for k, v in metrics.items()}
    targets = [
        Target.at_least("memory_find_top5_minus_bm25_all", 0.10),
        Target.at_least("memory_stored_all", 0.60),
        Target.at_most("memory_noise", 0.25),
        Target.at_least("merge_cross_session_all", 0.60),
        Target.at_most("merge_noise", 0.20),
        Target.at_least("merge_disputed", 1.0),
        Target.at_least("merge_negation_disputed", 1.0),
        Target.at_least("fold_received_all", 0.80),
    ]
    report(6, steps, "realworld")
    return BenchResult(
        name="realworld",
        metrics=metrics,
        baselines=baselines,
        targets=targets,
        notes=notes,
    )
