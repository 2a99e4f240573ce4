"""Every writer's log, checked by the harness's own session-format code.

The oracle (``../shared/oracle/dsh-harness``) runs the harness's published packages: header
validation, the v0 -> v3 migration chain and the artifact restorer with its relationship
checks. Each writer that goes through the one ``EventWriter`` is exercised here: the test-log
builder (every version, compaction, prune, fork, subagent), the importers, the agent loop,
crash repair, forks, every kind of assembly edit (collapse, lone tool-result rewrite, expand,
presets, fit) and ``save()`` at every version. Each log is read in full validation (the
restorer's relationship checks, strict recovery). The tests skip when the oracle is absent or
node is older than 20; with ``CI=true`` and node >= 20 they fail instead of skipping when npm
or the oracle's packages are missing. The terminal summary shows how many logs of how many
kinds the oracle checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

import ctxsdk as cx
from ctxsdk._agent import run_agent
from ctxsdk.assemble import Rule
from ctxsdk.errors import SessionFormatError
from ctxsdk.llm import LLM
from ctxsdk.samples import sample, sample_paths
from ctxsdk.testing import LogBuilder, ToolOutput
from ctxsdk.tools import default_registry

from .conftest import SHARED
from .test_agent import reply

ORACLE = SHARED / "oracle" / "dsh-harness"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "dsh-oracle"


MIN_NODE = 20
CHECKED: Counter[str] = Counter()  # logs the oracle read, by kind of writer / edit


def _node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60)
    found = re.match(r"v(\d+)\.", out.stdout.strip())
    return int(found.group(1)) if found else None


@pytest.fixture(scope="session")
def oracle_home(request: pytest.FixtureRequest) -> Path:
    if not (ORACLE / "oracle.mjs").is_file():
        pytest.skip(f"{ORACLE} is not available")
    major = _node_major()
    if major is None or major < MIN_NODE:
        found = "no node" if major is None else f"node {major}"
        pytest.skip(f"the harness's own code needs node >= {MIN_NODE}; this machine has {found}")
    # From here the oracle can run: under CI a missing piece is a failure, not a skip.
    unavailable = pytest.fail if os.environ.get("CI", "").lower() == "true" else pytest.skip
    if shutil.which("npm") is None:
        unavailable("npm is needed to install the harness's own packages")
    home = os.environ.get("DSH_ORACLE_HOME") or str(CACHE)
    done = subprocess.run(
        ["bash", str(ORACLE / "setup.sh"), home], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        unavailable(f"the oracle's packages could not be installed: {done.stderr[-400:]}")
    # The count goes into the terminal summary, once: a module that imports this fixture
    # (test_read_rules) gets an instance of its own, and each used to print the line.
    plugins = request.config.pluginmanager
    if plugins.get_plugin(_SUMMARY_PLUGIN) is None:
        plugins.register(_OracleSummary(), _SUMMARY_PLUGIN)
    return Path(done.stdout.strip())


_SUMMARY_PLUGIN = "ctxsdk-harness-oracle-summary"


class _OracleSummary:
    """Prints how many logs the oracle accepted, once, in the terminal summary."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if CHECKED:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(CHECKED.items()))
            terminalreporter.write_line(
                f"harness oracle: {sum(CHECKED.values())} logs of {len(CHECKED)} kinds "
                f"accepted ({kinds})"
            )


def check(home: Path, path: Path, *extra: str, kind: str | None = None) -> dict[str, Any]:
    """The oracle's verdict on one log file; an accepted log counts under ``kind``."""
    out = subprocess.run(
        ["node", str(ORACLE / "oracle.mjs"), *extra, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DSH_ORACLE_HOME": str(home)},
    )
    try:
        verdict: dict[str, Any] = json.loads(out.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"oracle gave no verdict for {path}: {out.stderr[-800:]}") from None
    if verdict.get("ok") and kind is not None:
        CHECKED[kind] += 1
    return verdict


def accepted(
    home: Path, session: cx.Session, tmp_path: Path, name: str, kind: str = "other"
) -> dict[str, Any]:
    """Write ``session`` (pending events included) as plain JSONL and have the oracle read it."""
    path = session.save(tmp_path / name / f"session.v{session.version}.jsonl", compression="none")
    verdict = check(home, path, kind=kind)
    assert verdict["ok"], (name, verdict.get("error"))
    if not verdict["migrated"]:  # a v0/v1 log loses its loose chunks on the way to v3
        assert verdict["events"] == len(session)
    return verdict


# --- the builder -------------------------------------------------------------------------------


def test_the_shipped_samples(oracle_home: Path) -> None:
    for name, path in sample_paths().items():
        verdict = check(oracle_home, path, kind="sample")
        assert verdict["ok"], (name, verdict.get("error"))


def _busy_builder(version: int) -> LogBuilder:
    b = LogBuilder(version=version, cwd="/home/dev/app")
    b.turn("Run the tests").assistant(
        reasoning="Start with the suite.", tool_calls=[("bash", {"command": "pytest -q"})]
    )
    b.tool_results([ToolOutput.failed("1 failed, 2 passed", "bash", "EXIT_1")]).next_step()
    b.assistant(text="One test fails; reading it.", tool_calls=[("read", {"path": "t.py"})])
    read_call = b.last_call_ids[0]
    b.tool_results(["1\tdef test_x():\n" * 800]).next_step().assistant(text="Found it.")
    b.end_turn()
    b.turn("Fix it").prune_tool_result(b.result_seq(read_call))  # the pruner runs in a turn
    b.assistant(tool_calls=[("edit", {"path": "t.py", "old_string": "a"})])
    b.tool_results(["ok"]).next_step().assistant(text="Fixed.").end_turn()
    b.compact(keep_last=2, summary_text="The suite had one failing test; it is fixed.")
    b.turn("Anything else?").assistant(text="No.").end_turn()
    return b


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_builder_logs_of_every_version(oracle_home: Path, tmp_path: Path, version: int) -> None:
    b = _busy_builder(version)
    path = b.write(b.canonical_path(tmp_path, compression="none"), compression="none")
    verdict = check(oracle_home, path, kind=f"builder v{version}")
    assert verdict["ok"], verdict.get("error")
    assert verdict["storedVersion"] == version and verdict["version"] == 3


def test_builder_forks_and_subagents(oracle_home: Path, tmp_path: Path) -> None:
    b = _busy_builder(3)
    child = b.fork(b.turn_end_seq(1))
    child.turn("Try another fix").assistant(text="Done differently.").end_turn()
    sub = b.subagent("audit the docs")
    sub.turn("Audit the docs").assistant(text="They are current.").end_turn()
    for name, builder in (("fork", child), ("subagent", sub)):
        path = builder.write(builder.canonical_path(tmp_path, "none"), compression="none")
        verdict = check(oracle_home, path, kind=f"builder {name}")
        assert verdict["ok"], (name, verdict.get("error"))


# --- the importers, the agent loop, repair, forks ---------------------------------------------


def test_imported_chat_logs(oracle_home: Path, tmp_path: Path) -> None:
    chat = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is in README.md?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "README.md"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "# app"},
        {"role": "assistant", "content": "A one-line README."},
        {"role": "user", "content": "Thanks."},
    ]
    s = cx.Session.from_messages(chat, format="openai")
    accepted(oracle_home, s, tmp_path, "openai", kind="import openai")
    anthropic = [
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "ls will do."},
                {"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "a.py b.py"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Two files."}]},
    ]
    s = cx.Session.from_messages(anthropic, format="anthropic")
    accepted(oracle_home, s, tmp_path, "anthropic", kind="import anthropic")


def test_imported_real_logs(oracle_home: Path, tmp_path: Path) -> None:
    data = SHARED / "data"
    claude = sorted((data / "claude-code-transcript").glob("*.jsonl"))
    swe = sorted((data / "swe-agent-trajectories").rglob("*.traj"))[:3]
    locomo = data / "locomo" / "locomo10.json"
    if not (claude or swe or locomo.is_file()):
        pytest.skip("no real third-party logs in ../shared/data")
    sessions = [cx.Session.from_claude_code(p) for p in claude]
    sessions += [cx.Session.from_swe_agent(p) for p in swe]
    if locomo.is_file():
        sessions.append(cx.Session.from_locomo(locomo, conversation=0))
    for i, s in enumerate(sessions):
        accepted(oracle_home, s, tmp_path, f"import-{i}", kind="import real log")


def test_imported_agent_sessions(oracle_home: Path, tmp_path: Path) -> None:
    """Every agent's importer, on every real file of its format in the corpus."""
    from ctxsdk.session.importers import import_file

    root = SHARED / "data" / "agent-sessions"
    if not root.is_dir():
        pytest.skip("no agent-sessions corpus in ../shared/data")
    files = {
        "claude-code": sorted((root / "claude-code").rglob("*.jsonl")),  # subagents/ too
        "codex": sorted((root / "codex").glob("rollout-*.jsonl")),
        "gemini-cli": sorted((root / "gemini-cli").glob("*.json")),
        "openhands": sorted((root / "openhands").glob("*.json")),
        "aider": sorted((root / "aider").glob("*.md")),
        "mini-swe-agent": sorted((root / "mini-swe-agent").glob("*.traj.json"))[:6],
    }
    for fmt, paths in files.items():
        for i, path in enumerate(paths):
            s = import_file(fmt, path)
            accepted(oracle_home, s, tmp_path, f"{fmt}-{i}", kind=f"import {fmt}")


def test_agent_turns_repair_and_forks(oracle_home: Path, tmp_path: Path) -> None:
    replies = [reply("Searching.", [("c1", "context_search", {"query": "xdist"})]), reply("Done.")]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=replies.pop(0))

    llm = LLM("http://model.test/v1", "scripted", env={}, transport=httpx.MockTransport(answer))
    flaky = cx.Session.open(sample("fix-flaky-test"))
    after = run_agent(flaky, llm, "Why was CI flaky?", system="Be brief.")
    accepted(oracle_home, after, tmp_path, "agent", kind="agent turn")

    # A log cut inside its last turn, then crash-repaired by the base.
    cut = next(t for t in reversed(flaky.turns()) if t.end_seq is not None)
    open_turn = cx.Session.from_events(flaky.header.to_json_dict(), flaky.raw_events[: cut.end_seq])
    assert open_turn.is_interrupted
    accepted(oracle_home, open_turn.repaired(), tmp_path, "repaired", kind="crash repair")

    home = tmp_path / "home"
    copy = flaky.save(home / "sessions" / "p" / flaky.id, compression="none")
    child = cx.Session.open(copy).fork(flaky.turns()[1].end_seq, dest_root=home / "sessions")
    verdict = check(oracle_home, child.path, kind="fork")  # type: ignore[arg-type]
    assert verdict["ok"], verdict.get("error")
    assert verdict["inheritedEventCount"] == child.inherited_event_count


def _cut_inside_a_call(version: int, started: bool) -> cx.Session:
    """A log that ends right after the model asked for two tools (the first one's tool/call
    logged when ``started``): the crash the harness's repair closes."""
    b = LogBuilder(version=version, cwd="/w")
    b.turn("list and count").assistant(
        "on it", tool_calls=[("bash", {"command": "ls"}), ("bash", {"command": "wc -l"})]
    )
    events = [dict(e) for e in b.events]
    if started:
        msg = next(e for e in reversed(events) if e["type"] == "assistant/message")
        call = next(c for c in msg["data"]["message"]["content"] if c["type"] == "tool-call")
        d = msg["data"]
        events.append(
            {
                "type": "tool/call",
                "seq": len(events),
                "time": events[-1]["time"],
                "data": {
                    "turn": d["turn"],
                    "step": d["step"],
                    "callId": call["id"],
                    "name": call["name"],
                    "arguments": call["arguments"],
                },
            }
        )
    return cx.Session.from_events(b.header, events)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("started", [False, True])
def test_crash_repair_is_the_harness_repair(
    oracle_home: Path, tmp_path: Path, version: int, started: bool
) -> None:
    # The harness's loader checks a TOOL_NOT_STARTED result byte for byte (its canonical id
    # and text); the repaired log, resume marker included, must be one it accepts. A v0/v1
    # log is read as v1: the published v1 -> v2 step renumbers seqs without renaming the
    # repair ids, so its own v2 check would refuse any repaired v0/v1 log with chunks.
    s = _cut_inside_a_call(version, started)
    assert s.is_interrupted
    r = s.repaired()
    name = f"repair-v{version}-{started}"
    path = r.save(tmp_path / name / f"session.v{version}.jsonl", compression="none")
    target = ("--target", "1") if version <= 1 else ()
    verdict = check(oracle_home, path, *target, kind="crash repair")
    assert verdict["ok"], verdict.get("error")
    kinds = [e["type"] for e in r.pending_events]
    assert kinds == ["tool/result", "tool/result", "step/end", "turn/end", "session/end-seed"]


# --- assembly edits ---------------------------------------------------------------------------
#
# Every kind of edit an Assembly writes, on both working samples (long-refactor carries a
# harness compaction and a prune; fix-flaky-test has failing tool runs), applied and read back
# by the harness in full validation.

SAMPLES = ("long-refactor", "fix-flaky-test")


@pytest.fixture(params=SAMPLES)
def sampled(request: pytest.FixtureRequest) -> cx.Session:
    return cx.Session.open(sample(request.param))


def _applied(
    home: Path, a: cx.Assembly, tmp_path: Path, name: str, kind: str
) -> tuple[cx.Session, list[str]]:
    """Apply the assembly's plan (it must have ops) and have the harness read the result."""
    ops, notes = a.plan()
    assert ops, (name, notes)
    out = a.apply(write=False)
    accepted(home, out, tmp_path, name, kind=f"assembly {kind}")
    return out, notes


def _own_collapses(s: cx.Session) -> list[int]:
    return [n.seq for n in s.surface() if _mark(s, n.seq) is not None]


def _mark(s: cx.Session, seq: int) -> Any:
    from ctxsdk.assemble._modes import collapse_mark

    return collapse_mark(s.raw_events[seq])


def _appended_results(s: cx.Session) -> list[cx.session.SurfaceNode]:
    return [n for n in s.surface() if n.type == "tool/result" and n.op == "append"]


def _middle_turn(s: cx.Session) -> str:
    turns = [t.turn for t in s.index.turns if t.steps]
    return f"t{turns[len(turns) // 2]}"


def test_assembly_key_and_off_runs(oracle_home: Path, tmp_path: Path, sampled: cx.Session) -> None:
    t = _middle_turn(sampled)
    edits = {
        "key-digest": cx.Assembly(sampled).set(t, "key", digest="what this turn found"),
        "key-auto": cx.Assembly(sampled).set(t, "key"),
        "off": cx.Assembly(sampled).set(t, "off"),
        "all-off": cx.Assembly(sampled).set(cx.Assembly(sampled).tree(), "off"),
    }
    caller = next(n for n in sampled.surface() if n.message.tool_calls)
    edits["widened"] = cx.Assembly(sampled).set(caller.seq, "off")  # call + its results
    for name, a in edits.items():
        _applied(oracle_home, a, tmp_path, name, "key" if name.startswith("key") else "off")


@pytest.mark.parametrize("mode", ["off", "key"])
def test_assembly_lone_tool_result_rewrite(
    oracle_home: Path, tmp_path: Path, sampled: cx.Session, mode: str
) -> None:
    """Between turns the rewrite goes into an edit turn; the call and its pairing stay."""
    results = _appended_results(sampled)
    for node in (results[0], results[-1]):
        a = cx.Assembly(sampled).set(node.seq, mode)  # type: ignore[arg-type]
        out, notes = _applied(oracle_home, a, tmp_path, f"lone-{mode}-{node.seq}", "lone tool")
        assert any("edit turn" in n for n in notes)
        pos = sampled.surface().seqs.index(node.seq)
        rewritten = out.surface()[pos]
        assert rewritten.type == "tool/result" and rewritten.message.id == node.message.id
        assert len(out.messages()) == len(sampled.messages())
        edit = out.index.turns[-1]
        assert not edit.steps and edit.reason == {"kind": "completed"}
        # Expanding it again is one more rewrite, in one more edit turn.
        back = cx.Assembly(out).set(rewritten.seq, "full")
        restored, _ = _applied(oracle_home, back, tmp_path, f"lone-{mode}-{node.seq}-x", "expand")
        assert restored.surface()[pos].message.content == node.message.content


def test_assembly_expands(oracle_home: Path, tmp_path: Path, sampled: cx.Session) -> None:
    prompt = next(n for n in sampled.surface() if n.message.source.kind == "user")
    pos = sampled.surface().seqs.index(prompt.seq)
    one, _ = _applied(
        oracle_home, cx.Assembly(sampled).set(prompt.seq, "off"), tmp_path, "one", "off"
    )
    _applied(
        oracle_home,
        cx.Assembly(one).set(one.surface()[pos].seq, "full"),
        tmp_path,
        "one-x",
        "expand",
    )
    t = _middle_turn(sampled)
    several, _ = _applied(oracle_home, cx.Assembly(sampled).set(t, "key"), tmp_path, "run", "key")
    b = cx.Assembly(several)
    for seq in _own_collapses(several):
        b.set(seq, "full")
    _applied(oracle_home, b, tmp_path, "run-x", "expand")


def _checkpoint(s: cx.Session) -> cx.session.SurfaceNode:
    return next(
        n for n in s.surface() if n.op == "replace" and n.message.source.plugin == "compact"
    )


@pytest.mark.parametrize("mode", ["key", "off"])
def test_assembly_expand_over_a_compaction(oracle_home: Path, tmp_path: Path, mode: str) -> None:
    """A collapsed checkpoint comes back inside a fresh compaction bracket, verbatim."""
    long = cx.Session.open(sample("long-refactor"))
    ck = _checkpoint(long)
    pos = long.surface().seqs.index(ck.seq)
    a = cx.Assembly(long).set(ck.seq, mode, digest="the split so far")  # type: ignore[arg-type]
    folded, _ = _applied(oracle_home, a, tmp_path, f"ck-{mode}", mode)
    b = cx.Assembly(folded).set(folded.surface()[pos].seq, "full")
    restored, notes = _applied(oracle_home, b, tmp_path, f"ck-{mode}-x", "expand checkpoint")
    assert any("fresh compaction" in n for n in notes)
    again = restored.surface()[pos]
    assert again.message.content == ck.message.content
    assert again.message.source.plugin == "compact" and again.message.id != ck.message.id
    brackets = [e["type"] for e in restored.raw_events[len(folded) :]]
    assert brackets == ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
    # Collapsed with its neighbour, the checkpoint is replayed in one message with the rest.
    c = cx.Assembly(long).set(ck.seq, mode).set(long.surface()[pos + 1].seq, mode)  # type: ignore[arg-type]
    two, _ = _applied(oracle_home, c, tmp_path, f"ck2-{mode}", mode)
    d = cx.Assembly(two).set(two.surface()[pos].seq, "full")
    _applied(oracle_home, d, tmp_path, f"ck2-{mode}-x", "expand checkpoint")


def test_assembly_expand_over_a_compaction_inside_a_turn(oracle_home: Path, tmp_path: Path) -> None:
    """In an open turn the fresh bracket is owned by that turn (then the turn closes)."""
    long = cx.Session.open(sample("long-refactor"))
    ck = _checkpoint(long)
    pos = long.surface().seqs.index(ck.seq)
    folded = cx.Assembly(long).set(ck.seq, "off").apply(write=False)
    w = cx.session.kernel.EventWriter.after(folded)
    w.start_turn()
    opened = folded.append(w.take())
    restored = cx.Assembly(opened).set(opened.surface()[pos].seq, "full").apply(write=False)
    w = cx.session.kernel.EventWriter.after(restored)
    w.end_turn({"kind": "completed"})
    closed = restored.append(w.take())
    starts = [e for e in closed.raw_events[len(opened) :] if e["type"] == "compaction/start"]
    assert [e["data"]["turn"] for e in starts] == [opened.index.open_turn]
    accepted(oracle_home, closed, tmp_path, "ck-in-turn", kind="assembly expand checkpoint")


PRESETS = {
    "failed-off": [Rule("off", kind="tool", failed=True)],
    "old-tools-key": [
        Rule("key", kind="tool", older_than_turns=1, template="{tool} output from turn {turn}")
    ],
    "bash-off": [Rule("off", kind="tool", tool="bash")],
    "mixed": [
        Rule("off", kind="tool", failed=True),
        Rule("key", kind="assistant", older_than_turns=2),
        Rule("key", kind="tool", label=r"\S", template="{gist}"),
    ],
}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_assembly_presets(
    oracle_home: Path, tmp_path: Path, sampled: cx.Session, preset: str
) -> None:
    a = cx.Assembly(sampled).apply_rules(PRESETS[preset])
    if not a.plan()[0]:
        pytest.skip(f"preset {preset} matches nothing in {sampled.title}")
    _applied(oracle_home, a, tmp_path, preset, "preset")


def test_assembly_auto_rules_after_an_agent_turn(oracle_home: Path, tmp_path: Path) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=reply("Noted."))

    llm = LLM("http://model.test/v1", "scripted", env={}, transport=httpx.MockTransport(answer))
    flaky = cx.Session.open(sample("fix-flaky-test"))
    rules = [Rule("off", kind="tool", failed=True, auto=True)]
    after = run_agent(flaky, llm, "Thanks.", auto_rules=rules)
    assert not after.index.turns[-1].steps  # the rewrites' edit turn
    accepted(oracle_home, after, tmp_path, "auto-rules", kind="assembly preset")


def test_assembly_tool_call_inside_a_turn(oracle_home: Path, tmp_path: Path) -> None:
    """The agent collapsing its own tool result: the rewrite is written in its open step."""
    flaky = cx.Session.open(sample("fix-flaky-test"))
    old = _appended_results(flaky)[0]
    args = {"action": "set", "dryRun": False, "ops": [{"surfaceSeq": old.seq, "mode": "off"}]}
    replies = [reply(None, [("c1", "context_assembler", args)]), reply("Folded.")]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=replies.pop(0))

    llm = LLM("http://model.test/v1", "scripted", env={}, transport=httpx.MockTransport(answer))
    after = run_agent(flaky, llm, "Tidy up.", registry=default_registry())
    assert all(t.steps for t in after.index.turns)  # no edit turn: the agent's turn was open
    accepted(oracle_home, after, tmp_path, "agent-assembles", kind="assembly lone tool")


@pytest.mark.parametrize("budget", [800, 1500, 2500, 4000])
def test_assembly_fit(oracle_home: Path, tmp_path: Path, sampled: cx.Session, budget: int) -> None:
    for query in (None, "the failing test and its fix"):
        a = cx.Assembly(sampled, tokenizer="estimate")
        r = a.fit(budget, query=query)
        if not r.ops:
            assert any("within budget" in n for n in r.notes)
            continue
        name = f"fit-{budget}-{'q' if query else 'none'}"
        out, _ = _applied(oracle_home, a, tmp_path, name, "fit")
        # Everything the fit collapsed, expanded again.
        b = cx.Assembly(out)
        for seq in _own_collapses(out):
            b.set(seq, "full")
        _applied(oracle_home, b, tmp_path, name + "-x", "expand")


@pytest.mark.parametrize("version", [0, 1, 2])
def test_assembly_on_older_generations(oracle_home: Path, tmp_path: Path, version: int) -> None:
    """Edits on a v0-v2 log are written in that generation; the harness migrates and checks."""
    b = _busy_builder(version)
    s = cx.Session.from_events(b.header, b.events)
    result = _appended_results(s)[0]
    a = cx.Assembly(s).set(result.seq, "off").set("t1", "key")
    _applied(oracle_home, a, tmp_path, f"old-{version}", f"on a v{version} log")
    lone = cx.Assembly(s).set(result.seq, "key")
    _applied(oracle_home, lone, tmp_path, f"old-lone-{version}", "lone tool")


# --- save() at every version ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(sample_paths()))
def test_save_every_sample_as_v3(oracle_home: Path, tmp_path: Path, name: str) -> None:
    s = cx.Session.open(sample(name))
    for compression in ("none", "zstd"):
        if compression == "zstd" and shutil.which("zstd") is None:
            continue
        path = s.save(tmp_path / compression, version=3, compression=compression)  # type: ignore[arg-type]
        verdict = check(oracle_home, path, kind="save v3")
        assert verdict["ok"], (name, compression, verdict.get("error"))
        assert verdict["storedVersion"] == 3 and verdict["events"] == len(s)
    with pytest.raises(SessionFormatError, match="no downgrade"):
        s.save(tmp_path / "down", version=2)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_save_upgrades_builder_logs(oracle_home: Path, tmp_path: Path, version: int) -> None:
    s = cx.Session.from_events(_busy_builder(version).header, _busy_builder(version).events)
    for target in range(version, 4):
        path = s.save(tmp_path / f"v{target}", version=target, compression="none")
        verdict = check(oracle_home, path, kind=f"save v{version}->v{target}")
        assert verdict["ok"], (version, target, verdict.get("error"))
        assert verdict["storedVersion"] == target


# --- reading what the harness reads: strict=True against the harness, log by log ------------
#
# Each rule is one small log, read by ctxsdk (lenient and strict=True) and by the oracle (the
# current harness: a v0-v2 log is migrated to v3 on load, which runs the harness's released
# payload validator). strict=True must agree with the oracle, accept or refuse; a refusal
# names the file, line and seq. The published v3 restorer validates payloads only for the
# system head (a v3 user/message with a null text passes it), so the payload rules are shown
# on v0-v2 logs and on v3 system/message; strict=True applies them to every generation.


def _parity_log(version: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    b = LogBuilder(version=version, cwd="/w")
    b.turn("List the files.").assistant("Listing.", tool_calls=[("bash", {"command": "ls"})])
    b.tool_results(["a.txt"]).next_step().assistant(text="Two files.").end_turn()
    return json.loads(json.dumps(b.header)), json.loads(json.dumps(list(b.events)))


def _nth(events: list[dict[str, Any]], etype: str, n: int = 0) -> dict[str, Any]:
    return [e for e in events if e["type"] == etype][n]


def _data(events: list[dict[str, Any]], etype: str, n: int = 0) -> dict[str, Any]:
    return _nth(events, etype, n)["data"]  # type: ignore[no-any-return]


def _msg(events: list[dict[str, Any]], etype: str, n: int = 0) -> dict[str, Any]:
    d = _data(events, etype, n)
    return d if etype == "user/message" else d["message"]  # type: ignore[no-any-return]


def _config(events: list[dict[str, Any]]) -> dict[str, Any]:
    return _data(events, "request/header")["header"]["config"]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class ReadRule:
    """One small log: the base log of each version in ``versions`` with ``change`` applied.
    ``refused_at`` is the event (type, n-th of that type) the harness and strict=True refuse,
    None when both read it; ``says`` is what the harness's refusal says; ``lenient`` whether
    the lenient read (as the harness's production read of a native log) opens it."""

    name: str
    change: Callable[[dict[str, Any], list[dict[str, Any]]], object]
    versions: tuple[int, ...] = (0, 2)
    refused_at: tuple[str, int] | None = None
    says: str = ""
    lenient: bool = True


def _header_of(e: list[dict[str, Any]]) -> dict[str, Any]:
    return _data(e, "request/header")["header"]  # type: ignore[no-any-return]


def _as_float(ev: dict[str, Any], key: str) -> None:
    ev[key] = float(ev[key])


UM, AM, TR, RH = "user/message", "assistant/message", "tool/result", "request/header"
FLOATS = (0, 2, 3)
READ_RULES = [
    # a null nested where the harness wants a value, or omits the field
    ReadRule(
        "null text",
        lambda h, e: _msg(e, UM)["content"][0].update(text=None),
        refused_at=(UM, 0),
        says="text must be a string",
    ),
    ReadRule(
        "null tool-call name",
        lambda h, e: _msg(e, AM)["content"][1].update(name=None),
        refused_at=(AM, 0),
        says="name",
    ),
    ReadRule(
        "null isError",
        lambda h, e: _msg(e, TR)["content"][0].update(isError=None),
        refused_at=(TR, 0),
        says="isError",
    ),
    ReadRule(
        "null source form",
        lambda h, e: _msg(e, UM, 1)["source"].update(form=None),
        refused_at=(UM, 1),
        says="form must be one of",
    ),
    ReadRule(
        "null source rpcId",
        lambda h, e: _msg(e, UM)["source"].update(rpcId=None),
        refused_at=(UM, 0),
        says="rpcId must be a non-empty string",
    ),
    ReadRule(
        "null usage bucket",
        lambda h, e: _data(e, AM).update(usage={"inputTokens": 1, "outputTokens": 1} | NULL_READ),
        refused_at=(AM, 0),
        says="cacheReadTokens",
    ),
    ReadRule(
        "null temperature",
        lambda h, e: _config(e).update(temperature=None),
        refused_at=(RH, 0),
        says="temperature must be a finite number",
    ),
    ReadRule(
        "null tools",
        lambda h, e: _header_of(e).update(tools=None),
        refused_at=(RH, 0),
        says="tools must be an array",
    ),
    ReadRule(
        "null startsSeries",
        lambda h, e: _data(e, RH).update(startsSeries=None),
        refused_at=(RH, 0),
        says="startsSeries",
    ),
    ReadRule(  # an opaque member the harness does not look into
        "null replayState", lambda h, e: _msg(e, AM)["source"].update(replayState=None)
    ),
    ReadRule(
        "v3 system source form null",
        lambda h, e: _msg(e, "system/message")["source"].update(form=None),
        versions=(3,),
        refused_at=("system/message", 0),
        says="form must be one of",
    ),
    # request/header fields
    ReadRule(
        "reason bogus",
        lambda h, e: _data(e, RH).update(reason="bogus"),
        refused_at=(RH, 0),
        says="reason must be one of initial, resume, change, series",
    ),
    ReadRule("reason series", lambda h, e: _data(e, RH).update(reason="series")),
    ReadRule(
        "startsSeries false",
        lambda h, e: _data(e, RH).update(startsSeries=False),
        refused_at=(RH, 0),
        says="startsSeries must be one of true",
    ),
    ReadRule("startsSeries true", lambda h, e: _data(e, RH).update(startsSeries=True)),
    ReadRule(
        "temperature a string",
        lambda h, e: _config(e).update(temperature="hot"),
        refused_at=(RH, 0),
        says="temperature must be a finite number",
    ),
    ReadRule("temperature 0.7", lambda h, e: _config(e).update(temperature=0.7)),
    ReadRule(
        "maxTokens 0",
        lambda h, e: _config(e).update(maxTokens=0),
        refused_at=(RH, 0),
        says="maxTokens must be positive",
    ),
    ReadRule(
        "stop with a number",
        lambda h, e: _config(e).update(stop=["x", 1]),
        refused_at=(RH, 0),
        says="stop[1] must be a string",
    ),
    # adapterDefaults: refused on every read (the harness reads v0-v2 through its validator)
    ReadRule(
        "adapter default without a value",
        lambda h, e: _header_of(e).update(adapterDefaults={"maxTokens": True}),
        refused_at=(RH, 0),
        says="lacks config value",
        lenient=False,
    ),
    ReadRule(
        "adapter default outside the whitelist",
        lambda h, e: (
            _config(e).update(temperature=0.5),
            _header_of(e).update(adapterDefaults={"temperature": True}),
        ),
        refused_at=(RH, 0),
        says='adapterDefaults has unexpected member "temperature"',
        lenient=False,
    ),
    ReadRule(
        "tool schema without parameters",
        lambda h, e: _header_of(e).update(tools=[{"name": "bash", "description": "run"}]),
        refused_at=(RH, 0),
        says="parameters",
    ),
    ReadRule(
        "v3 empty tools",
        lambda h, e: _header_of(e).update(tools=[]),
        versions=(3,),
        refused_at=(RH, 0),
        says="empty optional header fields must be omitted",
        lenient=False,
    ),
    # message source kinds: the harness reads a v0-v2 log by migrating it to v3, which
    # refuses a kind it does not classify; a native v3 log may carry any kind
    ReadRule(
        "unknown source kind",
        lambda h, e: _msg(e, UM, 1).update(source={"kind": "mystery"}),
        versions=(0, 1, 2),
        refused_at=(UM, 1),
        says="unclassified message source",
    ),
    ReadRule(
        "goal source kind",
        lambda h, e: _msg(e, UM, 1).update(source=GOAL_SOURCE),
        versions=(0, 1, 2),
    ),
    ReadRule(
        "v3 unknown source kind",
        lambda h, e: _msg(e, UM, 1).update(source={"kind": "mystery"}),
        versions=(3,),
    ),
    # JSON 1.0 where an integer belongs: JavaScript reads it as 1, and so does ctxsdk
    ReadRule("turn 1.0", lambda h, e: _data(e, "turn/start").update(turn=1.0), FLOATS),
    ReadRule("seq 3.0", lambda h, e: _as_float(_nth(e, UM), "seq"), FLOATS),
    ReadRule("time as x.0", lambda h, e: _as_float(_nth(e, "step/start"), "time"), FLOATS),
    ReadRule(
        "usage 30.0",
        lambda h, e: _data(e, AM).update(usage={"inputTokens": 30.0, "outputTokens": 8}),
        FLOATS,
    ),
    ReadRule(
        "header createdAt, depth, version as x.0",
        lambda h, e: [_as_float(h, k) for k in ("createdAt", "delegationDepth", "version")],
        FLOATS,
    ),
    ReadRule(
        "v3 cited seq 9.0",
        lambda h, e: _nth(e, TR).update(sourceEventSeqs=[float(_nth(e, "tool/call")["seq"])]),
        versions=(3,),
    ),
    ReadRule(  # -0 is no count for the harness (nor for ctxsdk, which keeps -0.0 a float)
        "turn -0.0",
        lambda h, e: _data(e, "turn/start").update(turn=-0.0),
        FLOATS,
        refused_at=("turn/start", 0),
        says="turn",
        lenient=False,
    ),
]
NULL_READ = {"cacheReadTokens": None}
GOAL_SOURCE = {"kind": "goal", "goalId": "g", "revision": 1, "round": 1}


@pytest.mark.parametrize(
    ("rule", "version"),
    [(r, v) for r in READ_RULES for v in r.versions],
    ids=lambda x: x.name if isinstance(x, ReadRule) else f"v{x}",
)
def test_strict_reads_what_the_harness_reads(
    oracle_home: Path, tmp_path: Path, rule: ReadRule, version: int
) -> None:
    header, events = _parity_log(version)
    seq = _nth(events, *rule.refused_at)["seq"] if rule.refused_at is not None else None
    rule.change(header, events)
    path = tmp_path / (f"session.v{version}.jsonl" if version else "session.jsonl")
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [header, *events]))
    verdict = check(oracle_home, path, kind="read rule" if rule.refused_at is None else None)
    assert verdict["ok"] is (seq is None), (rule.name, verdict.get("error"))
    if seq is not None:
        assert rule.says in str(verdict["error"]), verdict["error"]
    for strict in (True, False):
        ok = seq is None or (not strict and rule.lenient)
        try:
            cx.Session.open(path, strict=strict)
        except SessionFormatError as exc:
            assert not ok, f"{rule.name} (v{version}, strict={strict}) was refused: {exc}"
            assert exc.path == str(path) and exc.seq == seq, str(exc)
            assert exc.line == seq + 2 and f"line {seq + 2}, seq {seq}" in str(exc), str(exc)
        else:
            assert ok, f"{rule.name} (v{version}, strict={strict}) was read; harness: {verdict}"


# --- folded logs: every fold the Fold engine writes, read by the harness ---------------------
#
# Each policy's fold (economy leaf, several leaves then a root rebase, basic, masking inside
# an open turn, a forced emergency fold), on logs of every version, zstd and plain, written
# to the log file by the engine and read back by the harness in full validation. A fold in
# an open turn brackets itself with that turn's number, one between turns with null. A
# folded fork reads its parent's bundles and never a sibling's. ctxsdk reopens every folded
# log and finds its checkpoints (and their exact messages) again.

# The harness once refused folded v0-v2 logs: their validators reject any unknown event type
# (even ignorable), so the ``ctxsdk/fold-checkpoint`` record must ride only in v3 logs, and
# they require ``provider`` and ``model`` on ``compaction/summary``. These were the refusals;
# a folded log refused again for one of them fails with the old reason named.
FOLD_RECORD_REFUSED = {
    0: 'format v0 contains unknown historical event type "ctxsdk/fold-checkpoint" at seq N; '
    "migration refuses unknown historical events even when ignorable",
    1: 'format v1 contains unknown event type "ctxsdk/fold-checkpoint" at seq N',
    2: "format v2 to v3 cannot safely transform unclassified event ctxsdk/fold-checkpoint",
}


def _fold_versions(versions: tuple[int, ...] = (0, 1, 2, 3)) -> list[Any]:
    return list(versions)


COMPRESSIONS = ("none", "zstd")


def _known_refusal(verdict: dict[str, Any], version: int) -> None:
    """A refusal other than the known one fails outright (``pytest.fail`` is no
    AssertionError, so the strict xfail does not absorb it)."""
    if verdict["ok"] or version not in FOLD_RECORD_REFUSED:
        return
    said = re.sub(r"at seq \d+", "at seq N", str((verdict.get("error") or {}).get("message")))
    if said != FOLD_RECORD_REFUSED[version]:
        pytest.fail(f"v{version}: the harness refused a folded log for another reason: {said}")


def _fold_builder(version: int, turns: int = 8, *, open_end: bool = False) -> LogBuilder:
    """A working session of ``turns`` read-a-file turns; with ``open_end`` the log stops in
    the last turn, after its tool result (where the harness runs its pruner)."""
    b = LogBuilder(version=version, cwd="/home/dev/app")
    for t in range(turns):
        b.turn(f"Read mod{t}.py and note MARK-{t:04d}.").assistant(
            f"Reading mod{t}.py.", tool_calls=[("read", {"path": f"mod{t}.py"})]
        )
        body = "".join(f"{t}:{i}\tdef f{t}_{i}(x): return x * {i + t}\n" for i in range(60))
        b.tool_results([body]).next_step()
        if open_end and t == turns - 1:
            break
        b.assistant(text=f"mod{t}.py defines 60 functions; MARK-{t:04d} noted.").end_turn()
    return b


def _fold_file(tmp_path: Path, version: int, compression: str, **kw: Any) -> Path:
    b = _fold_builder(version, **kw)
    return b.write(b.canonical_path(tmp_path / "sessions", compression), compression)  # type: ignore[arg-type]


def _leaf_window(path: Path, store: Path, over: float = 0.9) -> int:
    """A window this log is over the fold threshold of: ``total / over`` tokens."""
    return int(cx.Fold(cx.Session.open(path), store=store).pressure().total / over)


def _prompt_span(s: cx.Session, first: int, stop: int) -> tuple[int, int]:
    """The surface span from turn ``first``'s prompt to just before turn ``stop``'s (0-based,
    among the prompts still on the surface)."""
    prompts = [
        n.seq for n in s.surface() if n.type == "user/message" and n.message.source.kind == "user"
    ]
    seqs = list(s.index.surface_seqs())
    return prompts[first], seqs[seqs.index(prompts[stop]) - 1]


def _fold_brackets(s: cx.Session) -> list[Any]:
    """The ``turn`` of every compaction bracket, each start matched by its end."""
    starts = [e["data"] for e in s.raw_events if e["type"] == "compaction/start"]
    ends = [e["data"] for e in s.raw_events if e["type"] == "compaction/end"]
    assert [d["compactionId"] for d in starts] == [d["compactionId"] for d in ends]
    assert [d["turn"] for d in starts] == [d["turn"] for d in ends]
    return [d["turn"] for d in starts]


def _reopened(path: Path, store: Path, results: list[Any], *, on_surface: list[Any]) -> cx.Fold:
    """ctxsdk reads the folded log again and finds every fold: the records written, the
    checkpoints on the surface, each one's exact messages verified."""
    f = cx.Fold(cx.Session.open(path), store=store)
    assert f.records == [r.record for r in results]
    assert f.checkpoints == [r.record for r in on_surface]
    for r in results:  # a checkpoint message is on the surface until a later fold took it
        later = any(r.record.checkpoint_seq in x.record.shadowed for x in results)
        if r.record.checkpoint_seq is not None and not later:
            assert r.record.checkpoint_seq in f.session.index.surface_seqs()
    original = cx.Session.open(path)
    for rec in f.records:
        page = f.recall(f"cp:{rec.checkpoint_id}", "exact")
        assert page.verified and page.total == len(rec.shadowed) == rec.messages
        assert page.seqs == rec.shadowed[: len(page.seqs)]
        assert list(page.messages) == [
            cx.session.kernel.message_of(original.raw_events[s]) for s in page.seqs
        ]
    assert f.status().healthy and f.status().orphans == ()
    return f


def _fold_accepted(home: Path, path: Path, kind: str) -> None:
    s = cx.Session.open(path)
    verdict = check(home, path, kind=kind)
    _known_refusal(verdict, s.version)
    assert verdict["ok"], (path.name, s.version, verdict.get("error"))
    if not verdict["migrated"]:
        assert verdict["events"] == len(s)


def _leaf(tmp_path: Path, version: int, compression: str) -> tuple[Path, Path, list[Any]]:
    path = _fold_file(tmp_path, version, compression)
    store = tmp_path / "bundles"
    f = cx.Fold(cx.Session.open(path), store=store, window=_leaf_window(path, store))
    r = f.run()
    assert r.folded and r.action == "leaf", r.reason
    assert _fold_brackets(cx.Session.open(path)) == [None]  # between turns: turn null
    return path, store, [r]


def _root(tmp_path: Path, version: int, compression: str) -> tuple[Path, Path, list[Any]]:
    path = _fold_file(tmp_path, version, compression, turns=9)
    store = tmp_path / "bundles"
    f = cx.Fold(cx.Session.open(path), store=store)
    results = [f.fold(_prompt_span(f.session, 0, 3))]
    results.append(f.fold(_prompt_span(f.session, 0, 3)))  # the next three turns
    results.append(f.fold(_prompt_span(f.session, 0, 2)))
    assert [r.action for r in results] == ["leaf"] * 3
    assert len(f.checkpoints) == 3
    r = f.rebase()
    assert r.folded and r.action == "root", r.reason
    assert set(r.record.children) == {x.checkpoint_id for x in results}
    assert _fold_brackets(cx.Session.open(path)) == [None] * 4
    return path, store, [*results, r]


def _basic(tmp_path: Path, version: int, compression: str) -> tuple[Path, Path, list[Any]]:
    path = _fold_file(tmp_path, version, compression)
    store = tmp_path / "bundles"
    window = _leaf_window(path, store)
    f = cx.Fold(cx.Session.open(path), store=store, policy="basic", window=window)
    r = f.run()
    assert r.folded and r.record.mode == "leaf", r.reason
    msg = cx.Session.open(path).message_at(r.record.checkpoint_seq)
    assert msg.source.plugin == "compact" and "<compacted-summary>" in msg.text
    assert _fold_brackets(cx.Session.open(path)) == [None]
    return path, store, [r]


def _emergency(tmp_path: Path, version: int, compression: str) -> tuple[Path, Path, list[Any]]:
    path = _fold_file(tmp_path, version, compression)
    store = tmp_path / "bundles"
    window = _leaf_window(path, store, over=1.1)  # over the window itself
    f = cx.Fold(cx.Session.open(path), store=store, window=window)
    r = f.run(force=True)
    assert r.folded and r.action == "emergency" and r.record.mode == "emergency", r.reason
    assert _fold_brackets(cx.Session.open(path)) == [None]
    return path, store, [r]


def _in_turn(tmp_path: Path, version: int, compression: str) -> tuple[Path, Path, list[Any]]:
    path = _fold_file(tmp_path, version, compression, open_end=True)
    store = tmp_path / "bundles"
    s = cx.Session.open(path)
    turn = s.index.open_turn
    assert turn is not None
    f = cx.Fold(s, store=store, window=_leaf_window(path, store))
    r = f.run()
    assert r.folded and r.action == "leaf", r.reason
    assert _fold_brackets(cx.Session.open(path)) == [turn]  # inside the open turn: its number
    return path, store, [r]


def _mask(tmp_path: Path, version: int, compression: str) -> tuple[Path, Path, list[Any]]:
    path = _fold_file(tmp_path, version, compression, open_end=True)
    store = tmp_path / "bundles"
    s = cx.Session.open(path)
    f = cx.Fold(s, store=store, policy="masking", window=_leaf_window(path, store))
    r = f.run()
    assert r.folded and r.action == "mask" and r.record.mode == "mask", r.reason
    after = cx.Session.open(path)
    new = after.raw_events[len(s) :]
    if version >= 3:  # v0-v2 validators refuse unknown events: the record rides only in v3
        assert new[0]["type"] == "ctxsdk/fold-checkpoint"
        new = new[1:]
    assert [e["type"] for e in new] == ["compaction/prune", "tool/result"] * (len(new) // 2)
    assert after.index.open_turn == s.index.open_turn  # still the same open turn
    assert _fold_brackets(after) == []
    return path, store, [r]


# Which of a scenario's folds ``Fold.checkpoints`` lists afterwards: all, only the root, or
# none (a mask pass leaves no checkpoint message).
FOLDS = {
    "fold leaf": (_leaf, "all"),
    "fold root": (_root, "root"),
    "fold basic": (_basic, "all"),
    "fold emergency": (_emergency, "all"),
    "fold in turn": (_in_turn, "all"),
    "fold mask": (_mask, "none"),
}


def _fold_and_reopen(tmp_path: Path, kind: str, version: int, compression: str) -> Path:
    make, listed = FOLDS[kind]
    path, store, results = make(tmp_path, version, compression)
    shown = {"all": results, "root": [r for r in results if r.action == "root"], "none": []}
    _reopened(path, store, results, on_surface=shown[listed])
    return path


def test_a_basic_fold_is_listed_among_the_checkpoints(tmp_path: Path) -> None:
    path, store, (r,) = _basic(tmp_path, 3, "none")
    f = cx.Fold(cx.Session.open(path), store=store, policy="basic")
    assert r.record.checkpoint_seq in f.session.index.surface_seqs()
    assert f.checkpoints == [r.record]


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("kind", sorted(FOLDS))
def test_folded_logs_reopen_with_their_checkpoints(
    tmp_path: Path, kind: str, version: int, compression: str
) -> None:
    """No oracle needed: ctxsdk's own reading of what its folds wrote, every version."""
    _fold_and_reopen(tmp_path, kind, version, compression)


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("version", _fold_versions())
@pytest.mark.parametrize("kind", sorted(FOLDS))
def test_folded_logs_the_harness_accepts(
    oracle_home: Path, tmp_path: Path, kind: str, version: int, compression: str
) -> None:
    path = _fold_and_reopen(tmp_path, kind, version, compression)
    _fold_accepted(oracle_home, path, kind)


@pytest.mark.parametrize("version", [1, 2])
def test_folded_older_logs_pass_their_own_generation(
    oracle_home: Path, tmp_path: Path, version: int
) -> None:
    """A folded v1/v2 log is valid in its own generation (the refusal is the migration's)."""
    path, _, _ = _leaf(tmp_path, version, "none")
    verdict = check(oracle_home, path, "--target", str(version), kind=f"fold leaf as v{version}")
    assert verdict["ok"], verdict.get("error")
    assert not verdict["migrated"] and verdict["events"] == len(cx.Session.open(path))


@pytest.mark.parametrize("version", _fold_versions((1, 2, 3)))
def test_a_folded_fork(oracle_home: Path, tmp_path: Path, version: int) -> None:
    """Fold the parent, fork it twice, fold each child: a child reads its parent's bundles,
    never its sibling's; the parent reads neither child's."""
    home = tmp_path / "home"
    path = _fold_file(home, version, "zstd", turns=10)
    parent = cx.Fold(cx.Session.open(path))  # default store: <home>/ctxsdk/fold, shared
    assert parent.store.root == home / "ctxsdk" / "fold"
    p_cp = parent.fold(_prompt_span(parent.session, 0, 4)).record
    assert p_cp is not None
    kids = []
    for name in ("kid-a", "kid-b"):
        child = cx.Session.open(path).fork(child_id=name)
        f = cx.Fold(child)
        assert f.store.root == parent.store.root
        assert [r.checkpoint_id for r in f.records] == [p_cp.checkpoint_id]
        assert f.records[0].inherited and f.checkpoints[0].checkpoint_id == p_cp.checkpoint_id
        r = f.fold(_prompt_span(f.session, 0, 2))  # the two turns after the parent's fold
        assert r.folded and r.record is not None
        assert _fold_brackets(cx.Session.open(child.path)) == [None, None]  # type: ignore[arg-type]
        kids.append((child.path, r.record))
    (a_path, a_cp), (b_path, b_cp) = kids
    a = cx.Fold(cx.Session.open(a_path))  # type: ignore[arg-type]
    b = cx.Fold(cx.Session.open(b_path))  # type: ignore[arg-type]
    for me, mine, sibling in ((a, a_cp, b_cp), (b, b_cp, a_cp)):
        assert [r.checkpoint_id for r in me.checkpoints] == [p_cp.checkpoint_id, mine.checkpoint_id]
        inherited = me.recall(f"cp:{p_cp.checkpoint_id}", "exact")  # the parent's bundle
        assert inherited.verified and inherited.total == p_cp.messages
        assert me.recall(f"cp:{mine.checkpoint_id}", "exact").verified
        assert me.reader().verify(sibling.checkpoint_id).state == "missing"
        with pytest.raises(cx.errors.NotFound):
            me.recall(f"cp:{sibling.checkpoint_id}", "exact")
        hits = {h.checkpoint_id: h for h in me.search("MARK-0001").hits}
        assert hits[p_cp.checkpoint_id].match_kind == "message-text"  # in the parent's archive
        assert sibling.checkpoint_id not in hits
        assert me.status().healthy and me.status().orphans == ()
    parent = cx.Fold(cx.Session.open(path))
    assert [r.checkpoint_id for r in parent.records] == [p_cp.checkpoint_id]
    assert parent.reader().verify(a_cp.checkpoint_id).state == "missing"
    assert parent.status().orphans == ()  # the children's bundles are theirs, not orphans
    for log in (path, a_path, b_path):
        verdict = check(oracle_home, log, kind="fold fork")  # type: ignore[arg-type]
        _known_refusal(verdict, version)
        assert verdict["ok"], (log, verdict.get("error"))
    child = cx.Session.open(a_path)  # type: ignore[arg-type]
    if not verdict["migrated"]:  # a v0/v1 log's loose chunks merge on the way to v3
        assert verdict["inheritedEventCount"] == cx.Session.open(b_path).inherited_event_count  # type: ignore[arg-type]
    assert child.parent_id == cx.Session.open(path).id


# --- Merge: the merged block in a turn ---------------------------------------------------------


def _merge_sources() -> list[cx.Session]:
    out = []
    for sid, text in (("m-a", "The database is PostgreSQL."), ("m-b", "The database is MySQL.")):
        b = LogBuilder(session_id=sid, runtime_context=None)
        b.turn(text).assistant(text="Noted.").end_turn()
        out.append(cx.Session.from_events(b.header, b.events))
    b = LogBuilder(session_id="m-c", runtime_context=None)
    b.turn("Set it up.").assistant(text="The queue broker is Kafka.").end_turn()
    return [*out, cx.Session.from_events(b.header, b.events)]


def test_a_merged_block_injected_into_an_open_turn(oracle_home: Path, tmp_path: Path) -> None:
    b = LogBuilder(session_id="m-target", runtime_context=None)
    b.turn("Hello.").assistant(text="Hi.").end_turn()
    b.turn("Which database?")
    target = cx.Session.from_events(b.header, b.events)
    r = cx.Merge(_merge_sources()).budget(400).run(query="database")
    assert r.block and "DISPUTED" in r.text  # a tie, rendered with both values
    injected = r.inject(target)
    assert len(injected) == len(target) + 1
    w = cx.session.kernel.EventWriter.after(injected)  # the user stops the turn there
    w.end_step()
    w.end_turn({"kind": "aborted", "reason": {"kind": "user"}})
    done = injected.append(w.take())
    accepted(oracle_home, done, tmp_path, "merge-inject", kind="merge inject")


def test_run_agent_with_a_merge_hook(oracle_home: Path, tmp_path: Path) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=reply("Kafka."))

    llm = LLM("http://model.test/v1", "scripted", env={}, transport=httpx.MockTransport(answer))
    flaky = cx.Session.open(sample("fix-flaky-test"))
    after = run_agent(flaky, llm, "Which queue broker?", inject=[cx.Merge(_merge_sources())])
    plugin = [
        e
        for e in after.raw_events[len(flaky) :]
        if e["type"] == "user/message" and e["data"]["source"]["kind"] == "plugin"
    ]
    assert len(plugin) == 1 and "kafka" in plugin[0]["data"]["content"][0]["text"].lower()
    accepted(oracle_home, after, tmp_path, "merge-agent", kind="merge agent turn")


def test_run_agent_with_a_memory_hook(oracle_home: Path, tmp_path: Path) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=reply("Noted."))

    llm = LLM("http://model.test/v1", "scripted", env={}, transport=httpx.MockTransport(answer))
    flaky = cx.Session.open(sample("fix-flaky-test"))
    with cx.Memory(tmp_path / "memory.db") as mem:
        mem.ingest(flaky, verbatim=True)
        mem.remember("Always run pytest with -n auto.", link_to="pytest")
        mem.configure(recall="auto")
        after = run_agent(flaky, llm, "How do we run pytest?", inject=[mem])
    plugin = [
        e
        for e in after.raw_events[len(flaky) :]
        if e["type"] == "user/message" and e["data"]["source"]["kind"] == "plugin"
    ]
    assert len(plugin) == 1 and "Memory recall" in plugin[0]["data"]["content"][0]["text"]
    accepted(oracle_home, after, tmp_path, "memory-agent", kind="memory agent turn")
