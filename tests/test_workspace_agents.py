"""``Workspace.agent_home``: another agent's folder of logs (a Claude Code, Codex or Gemini CLI
home, or a mixed folder) listed with the DSH listing's columns plus ``format``, opened by
id prefix, read only. The homes are built in tmp_path from real corpus files."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest

import ctxsdk as cx
import ctxsdk.session._workspace._summary as summary_mod
from ctxsdk.errors import ImportFormatError, InvalidArgument, NotFound
from ctxsdk.session._workspace import SESSION_COLUMNS

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "agent-sessions"
SPOTTER = "8463c716-a2ea-4c14-9efa-87158ebd9f20"

pytestmark = [
    pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared agent-sessions corpus is absent"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


@pytest.fixture(autouse=True)
def _cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def _copy(src: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / src, dest)
    return dest


def _claude_home(root: Path) -> Path:
    """``~/.claude/projects/<project>/<uuid>.jsonl`` (and a sub-agent dir), as Claude Code
    lays it out."""
    for name in ("196820da", "624a4a58", "9eda1058"):
        src = f"claude-code/codemie__session-{name}.jsonl"
        _copy(src, root / "-Users-dev-codemie-code" / f"{name}.jsonl")
    _copy(f"claude-code/spotter__{SPOTTER}.jsonl", root / "-home-dev-spotter" / f"{SPOTTER}.jsonl")
    sub = root / "-home-dev-spotter" / SPOTTER / "subagents"
    for f in (CORPUS / "claude-code" / f"spotter__{SPOTTER}" / "subagents").iterdir():
        _copy(f"claude-code/spotter__{SPOTTER}/subagents/{f.name}", sub / f.name)
    return root


def _codex_home(root: Path) -> Path:
    """``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``."""
    for f in sorted((CORPUS / "codex").glob("rollout-*.jsonl")):
        y, m, d = f.name.removeprefix("rollout-")[:10].split("-")
        _copy(f"codex/{f.name}", root / y / m / d / f.name)
    return root


def _gemini_home(root: Path) -> Path:
    """``~/.gemini/tmp/<hash>/chats/session-*.json``, beside the other files it keeps."""
    for f in (CORPUS / "gemini-cli").glob("*.json"):
        _copy(f"gemini-cli/{f.name}", root / "9f3a0c" / "chats" / f.name)
    (root / "9f3a0c" / "logs.json").write_text('[{"sessionId": "x", "type": "user"}]')
    return root


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    }


def test_a_claude_code_home(tmp_path: Path) -> None:
    home = _claude_home(tmp_path / "projects")
    before = _tree(home)
    ws = cx.Workspace.agent_home(home, format="claude-code")
    df = ws.sessions()
    assert df.columns == list(SESSION_COLUMNS) and "format" in df.columns
    assert set(df["format"]) == {"claude-code"}
    assert len(df) == 6  # four transcripts and the two sub-agent files
    readable = df.filter(pl.col("readable"))
    assert {sid[:8] for sid in readable["id"]} >= {"196820da", "624a4a58", "9eda1058", "8463c716"}
    assert set(readable["project"]) >= {"-Users-dev-codemie-code", "-home-dev-spotter"}
    bad = df.filter(~pl.col("readable"))
    assert all(e for e in bad["error"])  # a file the importer refuses is a row, not a raise
    s = ws.open("8463c716")
    assert s.id == SPOTTER and len(s) == readable.filter(pl.col("id") == SPOTTER)["events"][0]
    row = readable.filter(pl.col("id") == SPOTTER).row(0, named=True)
    assert row["title"] == s.title and row["bytes"] == (home / row["path"]).stat().st_size
    assert _tree(home) == before  # nothing written in the agent's home
    assert repr(ws) == f"Workspace.agent_home({str(home)!r}, format='claude-code')"


def test_a_codex_home(tmp_path: Path) -> None:
    home = _codex_home(tmp_path / "sessions")
    ws = cx.Workspace.agent_home(home, format="codex")
    df = ws.sessions()
    assert len(df) == 2 and df["readable"].all() and set(df["format"]) == {"codex"}
    assert df["updated"].to_list() == sorted(df["updated"].to_list(), reverse=True)
    for sid in df["id"]:
        assert ws.open(sid[:8]).id == sid


def test_a_gemini_cli_tmp_dir(tmp_path: Path) -> None:
    home = _gemini_home(tmp_path / "tmp")
    df = cx.Workspace.agent_home(home, format="gemini-cli").sessions()
    assert len(df) == 1 and df["readable"].all()  # logs.json is not a chat
    auto = cx.Workspace.agent_home(home).sessions()  # auto: every .json, each detected
    assert len(auto) == 2
    logs = auto.filter(pl.col("path").str.ends_with("logs.json")).row(0, named=True)
    assert not logs["readable"] and logs["format"] is None
    assert "cannot tell which agent" in logs["error"]


def test_a_mixed_folder_is_detected_file_by_file(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    picks = {
        "aider": "aider/afi-core__.aider.chat.history.md",
        "swe-agent": "swe-agent/ctf_rev__rock.traj",
        "mini-swe-agent": "mini-swe-agent/psf__requests-1766.traj.json",
        "openhands": "openhands/basic_interactions.json",
        "gemini-cli": "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json",
        "codex": "codex/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
        "claude-code": "claude-code/spotter__short.jsonl",
    }
    for fmt, src in picks.items():  # names that say nothing: the content decides
        ext = Path(src).suffix
        _copy(src, root / ("sub" if fmt == "codex" else "") / f"log-{fmt}{ext}")
    dsh = cx.Session.from_messages([{"role": "user", "content": "hi"}], session_id="dsh-one")
    (root / "dsh-one").mkdir()
    dsh.save(root / "dsh-one" / "session.v3.jsonl")
    (root / "README.md").write_text("# notes\n")
    (root / "script.py").write_text("print(1)\n")  # not an ending any log has: not listed
    ws = cx.Workspace.agent_home(root, cache=False)
    df = ws.sessions()
    by_name = {Path(r["path"]).name: r for r in df.to_dicts()}
    for fmt in picks:
        name = next(n for n in by_name if n.startswith(f"log-{fmt}."))
        assert by_name[name]["format"] == fmt and by_name[name]["readable"], by_name[name]
    assert by_name["session.v3.jsonl"]["format"] == "dsh"
    assert by_name["README.md"]["error"] and not by_name["README.md"]["readable"]
    assert "script.py" not in by_name and len(df) == len(picks) + 2
    assert ws.open("dsh-one").messages()
    with pytest.raises(ImportFormatError, match="README.md"):
        ws.open("README")  # opening an unreadable row raises the located error


def test_a_broken_file_is_a_row_and_the_listing_is_cached(
    tmp_path: Path, _cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _codex_home(tmp_path / "sessions")
    torn = home / "2026" / "01" / "03" / "rollout-torn.jsonl"
    torn.parent.mkdir(parents=True)
    torn.write_text('{"timestamp":"2026-01-03T00:00:00Z","type":"session_meta","payload":{')
    ws = cx.Workspace.agent_home(home, format="codex")
    first = ws.sessions()
    row = first.filter(~pl.col("readable")).row(0, named=True)
    assert row["id"] == "rollout-torn" and "rollout-torn.jsonl" in row["error"]
    assert ws.cache_path is not None and ws.cache_path.is_relative_to(_cache_home)
    assert ws.cache_path.is_file()
    calls: list[Path] = []
    real = summary_mod.summarize_import

    def counting(item: object, *args: object) -> object:
        calls.append(item.path)  # type: ignore[attr-defined]
        return real(item, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(summary_mod, "summarize_import", counting)
    assert cx.Workspace.agent_home(home, format="codex").sessions().equals(first)
    assert calls == []  # a warm listing imports nothing
    os.utime(torn, ns=(1, 1))
    cx.Workspace.agent_home(home, format="codex").sessions()
    assert calls == [torn]  # a changed file is read again, the others are not


def test_agent_home_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidArgument, match="'auto' or one of"):
        cx.Workspace.agent_home(tmp_path, format="cursor")
    with pytest.raises(InvalidArgument, match="default home"):
        cx.Workspace.agent_home(format="aider")
    with pytest.raises(NotFound, match="agent home"):
        cx.Workspace.agent_home(tmp_path / "absent").sessions()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    _claude_home(tmp_path / ".claude" / "projects")
    assert cx.Workspace.agent_home(format="claude-code").home == tmp_path / ".claude" / "projects"
    assert cx.Workspace.agent_home(format="codex").home == tmp_path / ".codex" / "sessions"
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    assert cx.Workspace.agent_home(format="codex").home == tmp_path / "cx" / "sessions"
    ws = cx.Workspace.agent_home(format="claude-code")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ws.open("196820da")
    with pytest.raises(InvalidArgument, match="only reads"):
        ws.add(s)
    (tmp_path / "empty").mkdir()
    assert cx.Workspace.agent_home(tmp_path / "empty").sessions().is_empty()
