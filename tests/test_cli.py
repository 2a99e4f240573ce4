"""The command line, run as a real subprocess (``python -m ctxsdk``): paths and id prefixes,
errors in flag terms, global options after the command, the sessions table, placing an import
in a DSH home, no raw control characters on the terminal, plurals, and benchmark exits."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

import ctxsdk.bench as bench
from ctxsdk import _cli
from ctxsdk.bench import BENCHMARKS, BenchResult, Target
from ctxsdk.samples import SAMPLES_HOME
from ctxsdk.session import Session
from ctxsdk.session._codec import canonical_file_name
from ctxsdk.session._layout import session_dir, sessions_root
from ctxsdk.session.importers import from_messages
from ctxsdk.session.kernel import message_of
from ctxsdk.testing import LogBuilder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LOCOMO = DATA / "locomo" / "locomo10.json"
CC_DIR = DATA / "claude-code-transcript"
SWE_FC = DATA / "swe-agent-trajectories" / "fc_replay__marshmallow-code__marshmallow-1867.traj"
REFACTOR = "b93e27d4-6a15-4f0e-8d72-c40a19e5f3b6"

# Raw controls a terminal would act on: C0 but newline and tab, DEL, C1, bidi overrides.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# A Python keyword argument or call in an error message (`overwrite=True`, `dsh_home=`, `x()`).
PYTHON_TERMS = re.compile(r"\b[a-z_]+=(?:True|False|\s|$)|\b[A-Za-z_.]+\(\)")


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not available (../shared/data)")
    return path


def run(
    *args: str | Path, columns: int = 100, cwd: Path | None = None, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONIOENCODING": "utf-8"}
    # Never the user's ~/.dsh: an empty DSH home unless the test names one.
    env["DSH_HOME"] = str(home) if home is not None else str(Path(cwd or ".") / "no-such-home")
    return subprocess.run(
        [sys.executable, "-m", "ctxsdk", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=cwd,
        timeout=300,
    )


def _error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), proc.stderr
    return lines[0]


def _place(home: Path, s: Session) -> Path:
    dest = session_dir(sessions_root(home), s.header.cwd, s.id) / canonical_file_name(3)
    return s.save(dest)


def _chat(text: str, reply: str = "Done.") -> list[dict[str, str]]:
    return [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]


# --- 1. paths, id prefixes and errors in the CLI's terms -------------------------------------


def test_an_existing_path_is_a_path(tmp_path: Path) -> None:
    sample = next(p for p in (SAMPLES_HOME / "sessions").rglob("*.zstd") if REFACTOR in str(p))
    for ref in (sample, sample.parent):
        proc = run("show", ref, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(REFACTOR)


@pytest.mark.parametrize(
    "ref", ["/nope", "./nope", "../nope", "~/nope-ctxsdk", "nope.jsonl", "x.jsonl.zstd", "a/b"]
)
def test_a_missing_path_is_a_missing_file_not_an_id(ref: str, tmp_path: Path) -> None:
    line = _error(run("show", ref, cwd=tmp_path, home=SAMPLES_HOME))
    assert "no such session file or directory" in line and ref in line
    assert "no session id starts with" not in line and ".dsh" not in line


def test_an_id_prefix_that_matches_nothing_names_the_sessions_command(tmp_path: Path) -> None:
    line = _error(run("--home", SAMPLES_HOME, "show", "nope", cwd=tmp_path))
    assert "no session id starts with 'nope'" in line
    assert f"`ctxsdk --home {SAMPLES_HOME} sessions` lists them" in line
    assert not PYTHON_TERMS.search(line), line


def test_errors_name_flags_not_keyword_arguments(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(_chat("hello")))
    out = tmp_path / "out"
    assert run("import", "openai", chat, "-o", out, cwd=tmp_path).returncode == 0
    lines = [
        _error(run("import", "openai", chat, "-o", out, cwd=tmp_path)),  # exists
        _error(run("--home", tmp_path / "absent", "sessions", cwd=tmp_path)),  # no home
        _error(run("import", "openai", chat, "--conversation", "2", "-o", out, cwd=tmp_path)),
        _error(run("import", "openai", chat, cwd=tmp_path)),  # nowhere to write
    ]
    assert "pass --force to replace it" in lines[0] and "[Errno" not in lines[0]
    assert "pass --home DIR or set $DSH_HOME" in lines[1]
    assert "--conversation applies to locomo" in lines[2]
    assert "-o FILE|DIR, or --home DIR" in lines[3]
    for line in lines:
        assert not PYTHON_TERMS.search(line), line
    assert run("import", "openai", chat, "-o", out, "--force", cwd=tmp_path).returncode == 0


def test_library_messages_map_to_flags() -> None:
    assert _cli.cli_message("x exists; pass overwrite=True to replace it") == (
        "x exists; pass --force to replace it"
    )
    assert "dsh_home=" not in _cli.cli_message(
        "cannot list it; pass dsh_home= for another DSH home"
    )
    assert _cli.cli_message("in /h (1 sessions); Workspace.sessions() lists them", "/h") == (
        "in /h (1 session); `ctxsdk --home /h sessions` lists them"
    )


def test_global_options_also_work_after_the_command(tmp_path: Path) -> None:
    before = run("--home", SAMPLES_HOME, "show", "b93e", cwd=tmp_path)
    after = run("show", "b93e", "--home", SAMPLES_HOME, cwd=tmp_path)
    assert before.returncode == after.returncode == 0, after.stderr
    assert before.stdout == after.stdout
    listing = run("sessions", "--home", SAMPLES_HOME, cwd=tmp_path)
    assert listing.returncode == 0 and "b93e27d4" in listing.stdout
    assert run("--version").stdout.startswith("ctxsdk ")


def test_locomo_conversation_by_sample_id(tmp_path: Path) -> None:
    _need(LOCOMO)
    by_id = run("import", "locomo", LOCOMO, "--conversation", "conv-26", "-o", tmp_path / "a")
    by_index = run("import", "locomo", LOCOMO, "--conversation", "0", "-o", tmp_path / "b")
    assert by_id.returncode == by_index.returncode == 0, by_id.stderr
    a, b = Session.open(tmp_path / "a"), Session.open(tmp_path / "b")
    assert a.id == b.id == "locomo:conv-26"
    line = _error(run("import", "locomo", LOCOMO, "--conversation", "conv-999", "-o", tmp_path))
    assert "conv-999" in line


# --- the sessions table --------------------------------------------------------------------------


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@pytest.fixture
def crowded_home(tmp_path: Path) -> Path:
    """Two ids sharing 12 characters, a long title, a wide-character title, a broken log."""
    home = tmp_path / "home"
    long = "Refactor the invoice ledger so that every posting is idempotent and audited"
    b = LogBuilder(3, session_id="abcdef12-3456-aaaa", cwd="/w")
    b.turn("Refactor the ledger", title=long).assistant(text="Done.").end_turn()
    b.write(b.canonical_path(sessions_root(home)))
    _place(home, from_messages(_chat("整理账本模块并写测试" * 4), session_id="abcdef12-3456-bbbb"))
    _place(home, from_messages(_chat("short one"), session_id="0123abcd-only"))
    broken = _place(home, from_messages(_chat("to be broken"), session_id="ffff0000-broken"))
    data = bytearray(broken.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken.write_bytes(bytes(data))
    return home


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_sessions_table_fits_the_terminal(crowded_home: Path, columns: int) -> None:
    proc = run("--home", crowded_home, "sessions", columns=columns)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("id ") and "title" in lines[0]
    for line in lines:
        assert _cells(line) <= columns, (columns, line)
    rows = {line.split()[0]: line for line in lines[1:-1]}
    # Shortest unique prefixes, at least 8 characters, and each opens its session.
    assert set(rows) == {"abcdef12-3456-a", "abcdef12-3456-b", "0123abcd", "ffff0000"}
    shown = run("--home", crowded_home, "show", "abcdef12-3456-b")
    assert shown.returncode == 0 and shown.stdout.startswith("abcdef12-3456-bbbb")
    assert rows["abcdef12-3456-a"].rstrip().endswith("…")  # the long title is cut
    # The broken log's row says why, reason first (not its long path).
    assert "! " in rows["ffff0000"]
    reason = rows["ffff0000"].split("! ", 1)[1]
    assert not reason.startswith(str(crowded_home)), reason
    assert "4 sessions, 1 unreadable" in lines[-1]


def test_sessions_piped_without_columns_cuts_no_title(crowded_home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(PYTHONIOENCODING="utf-8", DSH_HOME=str(crowded_home))
    proc = subprocess.run(
        [sys.executable, "-m", "ctxsdk", "sessions"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    long = "Refactor the invoice ledger so that every posting is idempotent and audited"
    assert any(line.endswith(long) for line in proc.stdout.splitlines()), proc.stdout


def test_sessions_table_shows_lineage_by_short_ids(tmp_path: Path) -> None:
    proc = run("--home", SAMPLES_HOME, "sessions", columns=120, cwd=tmp_path)
    assert "subagent of b93e27d4" in proc.stdout and "fork of 5f0c9a7e" in proc.stdout
    assert "(4 sessions; --json prints every column)" in proc.stdout
    rows = json.loads(run("--home", SAMPLES_HOME, "sessions", "--json", cwd=tmp_path).stdout)
    assert {r["id"] for r in rows} >= {REFACTOR}


def test_short_ids() -> None:
    ids = ["aaaaaaaa1111", "aaaaaaaa1122", "bbbbbbbbbbbb", "abc", "abcdefghijk"]
    assert _cli.short_ids(ids) == {
        "aaaaaaaa1111": "aaaaaaaa111",
        "aaaaaaaa1122": "aaaaaaaa112",
        "bbbbbbbbbbbb": "bbbbbbbb",
        "abc": "abc",
        "abcdefghijk": "abcdefgh",
    }


# --- import --home -------------------------------------------------------------------------------


def test_import_home_places_the_session_at_its_canonical_path(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(_chat("Place me in the home")))
    home = tmp_path / "home"
    proc = run("import", "openai", chat, "--home", home)
    assert proc.returncode == 0, proc.stderr
    s = from_messages(_chat("Place me in the home"))
    expected = session_dir(home / "sessions", None, s.id) / "session.v3.jsonl.zstd"
    assert expected.is_file() and str(expected) in proc.stdout
    assert f"ctxsdk --home {home} show {s.id[:8]}" in proc.stdout
    listing = run("--home", home, "sessions")
    assert s.id[:8] in listing.stdout and "Place me in the home" in listing.stdout
    assert run("--home", home, "show", s.id[:8]).stdout.startswith(s.id)
    # A second import does not replace it without --force; both -o and --home is refused.
    assert "--force" in _error(run("import", "openai", chat, "--home", home))
    assert "not both" in _error(run("import", "openai", chat, "--home", home, "-o", tmp_path))


def test_claude_code_main_and_sidechain_in_one_home_open_by_prefix(tmp_path: Path) -> None:
    main = _need(CC_DIR / "sample_main_transcript.jsonl")
    side = _need(CC_DIR / "sample_agent_sidechain.jsonl")
    home = tmp_path / "home"
    for path in (main, side):
        assert run("--home", home, "import", "claude-code", path).returncode == 0
    parent = "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    shown = run("--home", home, "show", parent[:8])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(parent)
    listing = run("--home", home, "sessions", columns=120).stdout
    assert f"subagent of {parent[:8]}" in listing


# --- 2. no raw control characters ----------------------------------------------------------------

ESC_TEXT = "Clear \x1b[2J the screen\x07, then \x1b]0;pwned\x07 and \u202eevil\x9b31m \x7f"


def _assert_clean(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    for stream in (proc.stdout, proc.stderr):
        assert not RAW_CONTROL.search(stream), RAW_CONTROL.findall(stream)


def test_session_content_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    chat = tmp_path / "esc.json"
    reply = "Done.\r\nOK \x1b[31mred\x1b[0m\x00"
    chat.write_text(json.dumps(_chat(ESC_TEXT, reply)))
    home = tmp_path / "home"
    assert run("import", "openai", chat, "--home", home).returncode == 0
    s = from_messages(_chat(ESC_TEXT, reply))
    ref = s.id[:8]
    show = run("--home", home, "show", ref)
    _assert_clean(show)
    assert "\\x1b[2J" in show.stdout and "\\u202e" in show.stdout and "\\x9b" in show.stdout
    for args in (
        ("sessions",),
        ("sessions", "--json"),
        ("messages", ref),
        ("messages", "--wire", "openai", ref),
        ("tokens", ref),
    ):
        _assert_clean(run("--home", home, *args))
    # JSON output stays JSON, with the exact text (escapes, not replacements).
    lines = run("--home", home, "messages", ref).stdout.splitlines()
    texts = [json.loads(line)["content"][0]["text"] for line in lines]
    assert ESC_TEXT in texts
    wire = json.loads(run("--home", home, "messages", "--wire", "openai", ref).stdout)
    assert wire[-1]["content"] == "Done.\r\nOK \x1b[31mred\x1b[0m\x00"
    listed = json.loads(run("--home", home, "sessions", "--json").stdout)
    assert listed[0]["title"] and "\x1b" in listed[0]["title"]
    # An error naming a path with an ESC in it is escaped too.
    err = run("show", "./x\x1b[2J.jsonl", cwd=tmp_path)
    assert err.returncode == 2 and "\\x1b[2J" in err.stderr and "\x1b" not in err.stderr


def test_visible_keeps_newlines_only_in_multiline_output() -> None:
    assert _cli.visible("a\tb\nc\x1b") == "a\\tb\\nc\\x1b"
    assert _cli.visible("a\tb\nc\x1b\r", multiline=True) == "a\tb\nc\\x1b\\r"
    assert _cli.visible("ok ünïcode 中文") == "ok ünïcode 中文"


# --- plurals ---------------------------------------------------------------------------------


def test_counts_are_plural_only_when_they_should_be(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(_chat("one turn only")))
    out = tmp_path / "one"
    imported = run("import", "openai", chat, "-o", out)
    assert "imported 2 messages (" in imported.stdout
    show = run("show", out)
    assert "  1 turn" in show.stdout and "1 turns" not in show.stdout
    assert "0 replacements" in show.stdout
    demo = run("demo", "--last", "1", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert re.search(r"\b1 (turns|events|nodes|replacements|messages)\b", demo.stdout) is None
    assert "last 1 of " in demo.stdout


# --- 5. benchmarks ------------------------------------------------------------------------------


def _result(name: str, met: bool) -> BenchResult:
    return BenchResult(
        name=name,
        metrics={"x_over_y_ratio": 1.0 if met else 3.0},
        targets=[Target.at_most("x_over_y_ratio", 2.0)],
    )


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_a_missed_target_fails_strict(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = {"met": False}

    def fake(bench_name: str, *, quick: bool = False, progress: object = None) -> BenchResult:
        return _result(bench_name, outcome["met"])

    monkeypatch.setattr(bench, "run_benchmark", fake)
    assert _cli.main(["bench", name, "--quick", "--strict"]) == 1
    out = capsys.readouterr()
    assert "MISSED" in out.out and "1 target missed: x_over_y_ratio <= 2" in out.err
    assert _cli.main(["bench", name, "--quick"]) == 0  # not strict: the table says MISSED
    outcome["met"] = True
    assert _cli.main(["bench", name, "--quick", "--strict"]) == 0


def test_a_result_without_targets_is_refused() -> None:
    with pytest.raises(ValueError, match="declares no target"):
        BenchResult(name="x", metrics={"a": 1.0})
    # A target whose metric is absent counts as missed, never as met.
    r = BenchResult(name="x", metrics={}, targets=[Target.at_least("a_ratio", 1.0)])
    assert not r.all_met and _cli.bench_exit_code(r, strict=True) == 1


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_each_benchmark_declares_a_target(name: str) -> None:
    spec = importlib.util.find_spec(BENCHMARKS[name])
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    run_fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    made = [
        n
        for n in ast.walk(run_fn)
        if isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Name) and n.func.id == "Target")
            or (isinstance(n.func, ast.Attribute) and n.func.attr in ("at_most", "at_least"))
        )
    ]
    assert made, f"bench {name}: run() builds no Target"
    names = [n for n in ast.walk(run_fn) if isinstance(n, ast.keyword) and n.arg == "targets"]
    assert names, f"bench {name}: run() passes no targets= to BenchResult"


def test_bench_quick_reports_stages_off_a_terminal_and_strict_exits(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run("bench", "workspace", "--quick", "--strict", "--json", out, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    stages = [line for line in proc.stderr.splitlines() if line.startswith("bench workspace: ")]
    assert len(stages) >= 3, proc.stderr  # the run, then a line per stage
    assert "\r" not in proc.stderr  # lines, not a redrawn bar
    result = json.loads(out.read_text())
    assert result["targets"]
    assert proc.returncode == (0 if all(result["met"].values()) else 1)
    assert "target: " in proc.stdout


def test_an_unknown_benchmark_is_an_error(tmp_path: Path) -> None:
    line = _error(run("bench", "nope", cwd=tmp_path))
    assert "no benchmark 'nope'" in line and "workspace" in line


# --- 4. docs and developer tasks ------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_docs_show_no_absolute_path_of_a_machine() -> None:
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    for page in pages:
        text = page.read_text()
        for bad in ("/work/", "/root/", "/tmp/", str(ROOT)):
            assert bad not in text, f"{page.name} shows {bad}"


def test_lab_is_an_optional_extra_and_a_make_target() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert extras["lab"] == ["jupyterlab>=4"]
    # The runtime needs no JupyterLab; the dev extra has it because tests/ui drive a real one.
    assert not any(
        dep.startswith("jupyterlab")
        for dep in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    )
    assert any(dep.startswith("jupyterlab") for dep in extras["dev"])
    make = (ROOT / "Makefile").read_text()
    recipe = make.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    install = make.index("pip install -e '.[dev,lab]'")
    assert "jupyter lab notebooks/" in recipe and install < make.index("jupyter lab notebooks/")
    assert ".ipynb_checkpoints/" in (ROOT / ".gitignore").read_text().splitlines()


# --- 6. assemble and fit -------------------------------------------------------------------------

AUDIT = "e41b08f6-97c2-4a5d-83e0-6f1d2b9c7a34"
FIXTURES = DATA / "dsh-fixtures"


@pytest.fixture
def home_copy(tmp_path: Path) -> Path:
    """A writable copy of the samples home (the samples themselves are read-only)."""
    import shutil

    dest = tmp_path / "home"
    shutil.copytree(SAMPLES_HOME, dest)
    return dest


def _log(home: Path, sid: str = REFACTOR) -> Path:
    return next(p for p in (home / "sessions").rglob("*.zstd") if sid in str(p))


def _model_view(s: Session) -> list[dict[str, object]]:
    """What the model receives, without the message ids an edit mints afresh."""
    return [{k: v for k, v in m.to_json_dict().items() if k != "id"} for m in s.messages()]


def test_assemble_dry_run_shows_the_plan_and_writes_nothing(home_copy: Path) -> None:
    log = _log(home_copy)
    before = log.read_bytes()
    proc = run("--home", home_copy, "assemble", "b93e", "--set", "t6=off", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert log.read_bytes() == before
    p = Session.open(log).assemble().set("t6", "off").preview()
    assert f"1 op: {p.tokens_before} -> {p.tokens_after} tokens (cl100k_base" in proc.stdout
    assert f"65 -> {len(p.messages)} messages the model receives" in proc.stdout
    op = p.ops[0]
    assert re.search(rf"1\s+collapse\s+off\s+{op.start_seq}\.\.{op.end_seq}\s+13\s", proc.stdout)
    assert "dry run, nothing written: would append 1 event (seq 296) to " in proc.stdout
    assert "wrote" not in proc.stdout


def test_assemble_appends_to_the_log_as_the_python_api_does(
    home_copy: Path, tmp_path: Path
) -> None:
    log = _log(home_copy)
    api_copy = Session.open(Session.open(log).save(tmp_path / "api"))
    proc = run(
        "--home",
        home_copy,
        "assemble",
        "b93e",
        "--set",
        "t6=key:mypy is clean",
        "--set",
        "218=off",
        "--set",
        "241-245=key",
    )
    assert proc.returncode == 0, proc.stderr
    written = Session.open(log)  # the log re-opens, and strictly
    Session.open(log, strict=True)
    api = (
        api_copy.assemble()
        .set("t6", "key", digest="mypy is clean")
        .set(218, "off")
        .set(241, "key")
        .set(243, "key")
        .set(245, "key")
        .apply()
    )
    assert len(written) == len(api) > 296
    assert [e["type"] for e in written.raw_events] == [e["type"] for e in api.raw_events]
    assert _model_view(written) == _model_view(api)
    assert written.tokens().total == api.tokens().total
    assert f"wrote {len(api) - 296} events (seq 296..{len(api) - 1}) to " in proc.stdout
    assert "mypy is clean" in json.dumps(_model_view(written))


def test_setting_the_modes_a_log_already_has_writes_nothing(home_copy: Path) -> None:
    log = _log(home_copy)
    assert run("--home", home_copy, "assemble", "b93e", "--set", "t6=off").returncode == 0
    size = log.stat().st_size
    again = run("--home", home_copy, "assemble", "b93e", "--set", "t6=off")
    assert again.returncode == 0, again.stderr
    assert "nothing to change" in again.stdout and "wrote" not in again.stdout
    assert log.stat().st_size == size


def test_fit_writes_what_the_python_api_fits(home_copy: Path, tmp_path: Path) -> None:
    log = _log(home_copy)
    api_copy = Session.open(Session.open(log).save(tmp_path / "api"))
    query = "Decimal context rounding in posting.py"
    dry = run("--home", home_copy, "fit", "b93e", "2500", "--query", query, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    a = api_copy.assemble()
    r = a.fit(2500, query=query)
    p = a.preview()
    assert r.tokens_after == p.tokens_after  # the CLI shows the preview's numbers
    assert f"fit 2500 tokens, keeping what {query!r} needs: fits" in dry.stdout
    assert f"{len(p.ops)} ops: 7077 -> {p.tokens_after} tokens" in dry.stdout
    assert "kept verbatim: seqs 2, 292, 293" in dry.stdout
    assert Session.open(log).tokens().total == 7077  # nothing written
    proc = run("--home", home_copy, "fit", "b93e", "2500", "--query", query)
    assert proc.returncode == 0, proc.stderr
    written, api = Session.open(log), a.apply()
    assert _model_view(written) == _model_view(api)
    assert written.tokens().total == api.tokens().total == r.tokens_after <= 2500
    # Fitting the fitted session again: already within budget, nothing to write.
    size = log.stat().st_size
    again = run("--home", home_copy, "fit", "b93e", "2500")
    assert again.returncode == 0 and "nothing to change (" in again.stdout
    assert "already within budget" in again.stdout and log.stat().st_size == size


def test_fit_out_writes_an_edited_copy_and_leaves_the_source(
    home_copy: Path, tmp_path: Path
) -> None:
    log = _log(home_copy, AUDIT)
    before = log.read_bytes()
    out = tmp_path / "fitted"
    proc = run("fit", log, "800", "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert log.read_bytes() == before
    copy = Session.open(out)
    assert copy.id == AUDIT and copy.tokens().total <= 800
    assert "wrote fitted/session.v3.jsonl.zstd: an edited copy" in proc.stdout
    line = _error(run("fit", log, "800", "--out", out, cwd=tmp_path))
    assert "exists; pass --force to replace it" in line
    assert run("fit", log, "700", "--out", out, "--force", cwd=tmp_path).returncode == 0
    assert Session.open(out).tokens().total <= 700 and log.read_bytes() == before


def test_a_budget_that_cannot_be_met_says_what_stays(home_copy: Path) -> None:
    proc = run("--home", home_copy, "fit", "b93e", "50", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "fit 50 tokens: does NOT fit" in proc.stdout
    assert "note: cannot fit 50 tokens" in proc.stdout and "the system prompt" in proc.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["fit", "b93e", "0"], "BUDGET must be a positive whole number of tokens"),
        (["fit", "b93e", "-5"], "BUDGET must be a positive whole number"),
        (["fit", "b93e", "2.5"], "not '2.5'"),
        (["fit", "b93e", "lots"], "not 'lots'"),
        (["assemble", "b93e", "--set", "12=of"], "--set 12=of: the mode is full, key or off"),
        (["assemble", "b93e", "--set", "12"], "--set 12: give TARGET=MODE"),
        (["assemble", "b93e", "--set", "99999=off"], "--set 99999=off: seq 99999 is no event"),
        (["assemble", "b93e", "--set", "147=off"], "--set 147=off: seq 147 is a tool/call event"),
        (["assemble", "b93e", "--set", "30-20=key"], "--set 30-20=key: a range goes from low"),
        (["assemble", "b93e", "--set", "1000-2000=off"], "no surface node of session"),
        (["assemble", "b93e", "--set", "nope=off"], "--set nope=off: the target is a seq"),
        (["assemble", "b93e", "--set", "t99=off"], "--set t99=off: no row 't99'"),
        (["assemble", "b93e", "--set", "12=off:text"], "a digest goes with key only"),
        (["assemble", "b93e", "--set", "17=full"], "--set 17=full: seq 17 is covered by the"),
        (["fit", "b93e", "100", "--set", "x=key"], "--set x=key: the target is a seq"),
        (["assemble", "b93e", "--set", "12=off", "--force"], "it goes with --out PATH"),
        (["assemble", "b93e", "--dry-run"], "nothing to assemble: give at least one --set"),
    ],
)
def test_bad_edit_input_is_one_line_naming_the_flag(
    home_copy: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(home_copy)
    before = log.read_bytes()
    assert _cli.main(["--home", str(home_copy), *args]) == 2
    out = capsys.readouterr()
    assert out.out == ""  # refused before anything is printed
    err = out.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ctxsdk: error: "), err
    assert says in err[0], err[0]
    assert not PYTHON_TERMS.search(err[0]), err[0]
    assert "set(" not in err[0] and "message_at" not in err[0]
    assert log.read_bytes() == before


def test_the_samples_are_read_only_and_a_dry_run_says_so(tmp_path: Path) -> None:
    sample_log = _log(SAMPLES_HOME)
    before = sample_log.read_bytes()
    dry = run(
        "--home", SAMPLES_HOME, "assemble", "b93e", "--set", "t6=off", "--dry-run", cwd=tmp_path
    )
    assert dry.returncode == 0, dry.stderr
    assert "a run without --dry-run is refused" in dry.stdout and "--out PATH" in dry.stdout
    for args in (("assemble", "b93e", "--set", "t6=off"), ("fit", "b93e", "2000")):
        proc = run("--home", SAMPLES_HOME, *args, cwd=tmp_path)
        line = _error(proc)
        assert "is a sample shipped with ctxsdk" in line and "with --out PATH" in line
        assert proc.stdout == ""  # refused before a plan is printed
        assert not PYTHON_TERMS.search(line), line
    out = run("--home", SAMPLES_HOME, "fit", "b93e", "2000", "-o", tmp_path / "mine", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert Session.open(tmp_path / "mine").tokens().total <= 2000
    assert sample_log.read_bytes() == before


def test_assemble_without_set_lists_the_rows_set_takes(home_copy: Path) -> None:
    proc = run("--home", home_copy, "assemble", "b93e", "--rows", "-1")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[3:]}
    assert {"t1", "t1.1", "s2", "s170", "t6", "t6.2", "s221"} <= set(rows)
    assert "(covers 58 events)" in rows["s170"] and "e10" not in rows
    assert re.search(r"\bkey\s+646\b", rows["s170"])
    with_shadowed = run("--home", home_copy, "assemble", "b93e", "--all", "--rows", "-1")
    assert any(line.startswith("e10 ") for line in with_shadowed.stdout.splitlines())
    cut = run("--home", home_copy, "assemble", "b93e", "--rows", "5").stdout.splitlines()
    assert cut[-1].startswith("... ") and cut[-1].endswith("more rows (--rows -1 shows all)")
    # A row id from the listing is what --set takes.
    assert run("--home", home_copy, "assemble", "b93e", "--set", "t6.2=off").returncode == 0


def test_an_edit_while_another_writer_holds_the_lease_is_refused(home_copy: Path) -> None:
    from ctxsdk.session._file_writer import session_lock

    log = _log(home_copy)
    before = log.read_bytes()
    with session_lock(log.parent):
        line = _error(run("--home", home_copy, "assemble", "b93e", "--set", "t6=off"))
    assert "is held by another process" in line
    assert log.read_bytes() == before


def test_edit_output_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    chat = tmp_path / "esc.json"
    chat.write_text(json.dumps(_chat(ESC_TEXT, "Done \x1b[31mred\x1b[0m") + _chat("more")))
    home = tmp_path / "home"
    assert run("import", "openai", chat, "--home", home).returncode == 0
    ref = from_messages(json.loads(chat.read_text())).id[:8]
    _assert_clean(run("--home", home, "assemble", ref, "--all"))
    dry = run("--home", home, "assemble", ref, "--set", "1-2=key", "--dry-run")
    _assert_clean(dry)
    assert "\\x1b[2J" in dry.stdout


# --- 7. logs whose seq/time were stripped --------------------------------------------------------


def test_a_stripped_log_names_the_normalized_flag(tmp_path: Path) -> None:
    fixture = _need(FIXTURES / "v0-text-turn.session.jsonl")
    before = fixture.read_bytes()
    for command in ("show", "messages", "tokens"):
        proc = run(command, fixture, cwd=tmp_path)
        if proc.returncode == 0:  # Session.open may learn to read fully stripped logs itself
            continue
        line = _error(proc)
        assert "--normalized" in line and not re.search("normalized=", line), line
    for command in ("show", "messages", "tokens", "assemble"):
        proc = run(command, fixture, "--normalized", cwd=tmp_path)
        assert proc.returncode == 0, (command, proc.stderr)
    assert "Reply with exactly the word" in run("show", "--normalized", fixture).stdout
    assert fixture.read_bytes() == before


def _partly_stripped(tmp_path: Path) -> Path:
    """A plain log whose events after line 10 lost their seq/time: no reader guesses these."""
    from ctxsdk.samples import sample

    plain = Session.open(sample("fix-flaky-test")).save(tmp_path / "plain.jsonl")
    lines = plain.read_text().splitlines()
    out = lines[:11]
    for line in lines[11:]:
        ev = json.loads(line)
        ev.pop("seq", None)
        ev.pop("time", None)
        out.append(json.dumps(ev))
    dest = tmp_path / "partly.jsonl"
    dest.write_text("\n".join(out) + "\n")
    return dest


def test_normalized_reads_a_partly_stripped_log_and_edits_only_a_copy(tmp_path: Path) -> None:
    log = _partly_stripped(tmp_path)
    before = log.read_bytes()
    line = _error(run("show", log, cwd=tmp_path))
    assert "--normalized" in line and not re.search("normalized=", line), line
    shown = run("show", log, "--normalized", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.startswith("5f0c9a7e")
    refused = _error(run("fit", log, "1500", "--normalized", cwd=tmp_path))
    assert "read normalized" in refused and "with --out PATH" in refused
    proc = run("fit", log, "1500", "--normalized", "--out", tmp_path / "fitted", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    fitted = Session.open(tmp_path / "fitted")  # a whole log again: opens without the flag
    assert fitted.tokens().total <= 1500
    assert log.read_bytes() == before


# --- 8. the command-line page's editing examples run as shown ------------------------------------

_DOC_SECTIONS = ("## `ctxsdk assemble", "## `ctxsdk fit", "## Logs whose seq/time were stripped")


def _doc_examples() -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of the editing sections of docs/cli.md, each with the output
    lines the page shows for it."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    out: list[tuple[str, list[str]]] = []
    for section in re.split(r"\n(?=## )", text):
        if not section.startswith(_DOC_SECTIONS):
            continue
        for block in re.findall(r"```console\n(.*?)```", section, re.S):
            for line in block.splitlines():
                if line.startswith("$ "):
                    out.append((line[2:], []))
                else:
                    out[-1][1].append(line)
    return out


def _shape(line: str, checkout: Path) -> str:
    """A line as compared: the checkout's path as ``<checkout>``, every number as ``#`` (the
    numbers move with the planner and the tokenizers; the words and the layout must hold)."""
    line = line.replace(str(checkout), "<checkout>").rstrip()
    return re.sub(r"\d+", "#", line)


def _matches(shown: list[str], actual: list[str]) -> bool:
    """``actual`` is what the page shows, where a ``...`` line stands for any lines."""
    if not shown:
        return not actual
    if shown[0] == "...":
        return any(_matches(shown[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and shown[0] == actual[0] and _matches(shown[1:], actual[1:])


def test_the_editing_examples_of_the_cli_page_run_as_shown(tmp_path: Path) -> None:
    examples = _doc_examples()
    assert len(examples) >= 10 and any(
        cmd.startswith("ctxsdk --home myhome fit") for cmd, _ in examples
    )
    if not (FIXTURES / "v0-text-turn.session.jsonl").exists():
        pytest.skip(f"{FIXTURES} is not available (../shared/data)")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "ctxsdk").symlink_to(ROOT / "ctxsdk")  # the page runs from a checkout
    (tmp_path / "shared").symlink_to(DATA.parent)
    env = {**os.environ, "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
    env["DSH_HOME"] = str(tmp_path / "no-such-home")
    define = f'ctxsdk() {{ "{sys.executable}" -m ctxsdk "$@"; }}\n'
    for command, shown in examples:
        proc = subprocess.run(
            ["bash", "-c", define + command],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            cwd=checkout,
            timeout=300,
        )
        actual = [_shape(line, checkout) for line in (proc.stdout + proc.stderr).splitlines()]
        expected = [_shape(line, checkout) for line in shown]
        assert proc.returncode == (2 if any("ctxsdk: error:" in x for x in shown) else 0), (
            command,
            proc.stderr,
        )
        assert _matches(expected, actual), (command, "\n".join(actual))


def test_demo_writes_a_static_page_per_sample(tmp_path: Path) -> None:
    from ctxsdk.samples import sample_paths

    proc = run("demo", "--last", "0", "--html", tmp_path / "pages", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    engines = ("fold.html", "merge.html")
    pages = sorted(p for p in (tmp_path / "pages").iterdir() if p.name not in engines)
    assert [p.name for p in pages] == sorted(f"{n}.html" for n in sample_paths())
    for p in pages:
        html = p.read_text(encoding="utf-8")
        assert html.startswith("<!doctype html>") and "<script" not in html
        assert "Context composition" in html and "Tokens per turn" in html
        assert "<details open><summary>" in html  # the tree, its root open
        assert f"page: {p.relative_to(tmp_path)}" in proc.stdout or str(p) in proc.stdout
    assert not list((tmp_path / "pages").glob("*.tmp"))


# --- 7. fold, recall, fold-search, fold-status ---------------------------------------------------

WINDOW = "8192"  # long-refactor's 7,077 tokens pass economy's threshold at this window


def _folded(home: Path) -> tuple[Path, str]:
    """long-refactor in ``home`` folded once (its bundle in the default store), and the
    checkpoint id."""
    from ctxsdk.fold import Fold

    r = Fold(Session.open(_log(home)), window=int(WINDOW)).run()
    assert r.folded and r.checkpoint_id is not None
    return _log(home), r.checkpoint_id


def _bundle(home: Path, cid: str) -> Path:
    return next((home / "ctxsdk" / "fold").rglob(f"{cid}*"))


def test_fold_dry_run_prints_the_plan_and_writes_nothing(home_copy: Path) -> None:
    log = _log(home_copy)
    before = log.read_bytes()
    proc = run("--home", home_copy, "fold", "b93e", "--window", WINDOW, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert log.read_bytes() == before
    assert not (home_copy / "ctxsdk").exists()  # no bundle, no store folder
    assert "threshold 6,553 of a 8,192-token window" in proc.stdout
    assert re.search(r"would leaf fold seq \d+\.\.\d+ \(60 nodes", proc.stdout), proc.stdout
    assert "  why: pressure: 7,077 tokens" in proc.stdout
    assert "dry run, nothing written" in proc.stdout
    plan = run("--home", home_copy, "fold", "b93e", "--window", WINDOW, "--dry-run", "--json")
    data = json.loads(plan.stdout)
    assert data["dryRun"] and data["folds"] and data["action"] == "leaf"
    assert len(data["seqs"]) == 60 and data["pressure"]["window"] == 8192
    assert log.read_bytes() == before


def test_fold_appends_the_fold_and_archives_it(home_copy: Path) -> None:
    from ctxsdk.fold import Fold

    log = _log(home_copy)
    below = run("--home", home_copy, "fold", "b93e")  # a 1M window: under the threshold
    assert below.returncode == 0, below.stderr
    assert "no fold: idle" in below.stdout and "nothing written" in below.stdout
    proc = run("--home", home_copy, "fold", "b93e", "--window", WINDOW)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"leaf fold cp:(cp-[0-9a-f]{16}): 60 nodes .* archived and verified", proc.stdout)
    assert m, proc.stdout
    assert "wrote the fold to " in proc.stdout and "bundle in " in proc.stdout
    f = Fold(Session.open(log), window=int(WINDOW))
    assert [r.checkpoint_id for r in f.records] == [m.group(1)]
    assert f.status().healthy and _bundle(home_copy, m.group(1)).is_file()


def test_fold_out_folds_a_copy_and_leaves_the_input_untouched(tmp_path: Path) -> None:
    from ctxsdk.fold import Fold

    sample_log = _log(SAMPLES_HOME)
    before = sample_log.read_bytes()
    out = tmp_path / "folded"
    proc = run("fold", sample_log, "--window", WINDOW, "-o", out, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["folded"] and data["ref"].startswith("cp:cp-")
    assert sample_log.read_bytes() == before
    assert not (SAMPLES_HOME / "ctxsdk").exists()
    copy = Session.open(out)
    assert len(Fold(copy).records) == 1 and (out / ".ctxsdk-fold").is_dir()
    again = run("fold", sample_log, "--window", WINDOW, "-o", out, cwd=tmp_path)
    assert "exists" in _error(again) and "--out" in _error(again)


def test_folding_a_shipped_sample_in_place_is_refused_in_one_line(tmp_path: Path) -> None:
    sample_log = _log(SAMPLES_HOME)
    before = sample_log.read_bytes()
    proc = run("--home", SAMPLES_HOME, "fold", "b93e", "--window", WINDOW, cwd=tmp_path)
    line = _error(proc)
    assert "is a sample shipped with ctxsdk" in line and "-o/--out PATH" in line
    assert proc.stdout == "" and not PYTHON_TERMS.search(line)
    assert sample_log.read_bytes() == before
    assert not (SAMPLES_HOME / "ctxsdk").exists()  # not even a bundle folder in the package
    dry = run("--home", SAMPLES_HOME, "fold", "b93e", "--window", WINDOW, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "a run without --dry-run is refused" in dry.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["fold", "b93e", "--policy", "nope"], "--policy nope: no fold policy 'nope'"),
        (["fold", "b93e", "--window", "0"], "--window must be a whole number"),
        (["fold", "b93e", "--window", "8k", "--dry-run"], "not '8k'"),
        (["fold", "./nope.jsonl"], "./nope.jsonl: no such session file"),
        (["fold", "b93e", "--store", "README"], "--store README: not a directory"),
        (["recall", "b93e", "148", "--depth", "full"], "--depth is summary or exact"),
        (["recall", "b93e", "148", "--limit", "50"], "--limit must be a whole number (1..20)"),
        (["recall", "b93e", "148", "--offset", "x"], "--offset must be a whole number"),
        (["recall", "b93e", "cp:nope"], "REF cp:nope: no checkpoint 'cp:nope'"),
        (["recall", "b93e", "5"], "REF 5: no fold archived seq 5"),
        (["fold-search", "b93e", "ledger", "--limit", "0"], "--limit must be a whole number"),
        (["fold-search", "b93e", " "], "QUERY is empty"),
        (["fold-status", "b93e", "--policy", "fast"], "--policy fast: no fold policy"),
        (["fold-status", "b93e", "--window", "-3"], "--window must be a whole number"),
    ],
)
def test_bad_fold_input_is_one_line_naming_the_flag(
    home_copy: Path,
    args: list[str],
    says: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log, _ = _folded(home_copy)
    (home_copy / "README").write_text("not a folder\n")
    monkeypatch.chdir(home_copy)
    before = log.read_bytes()
    store = sorted(p.name for p in (home_copy / "ctxsdk" / "fold").rglob("*"))
    assert _cli.main(["--home", str(home_copy), *args]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    err = out.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ctxsdk: error: "), err
    assert says in err[0], err[0]
    assert not PYTHON_TERMS.search(err[0]), err[0]
    assert log.read_bytes() == before
    assert sorted(p.name for p in (home_copy / "ctxsdk" / "fold").rglob("*")) == store


def test_recall_is_exact_and_reads_from_a_seq(home_copy: Path) -> None:
    _, cid = _folded(home_copy)
    original = Session.open(_log(SAMPLES_HOME))
    summary = run("--home", home_copy, "recall", "b93e", f"cp:{cid}")
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.startswith(f"recall cp:{cid} (summary")
    assert f"[cx-fold L cp:{cid}]" in summary.stdout
    proc = run("--home", home_copy, "recall", "b93e", "148", "--depth", "exact", "--limit", "2")
    assert proc.returncode == 0, proc.stderr
    assert f"recall cp:{cid} (exact, verified): messages 2–3 of 60" in proc.stdout
    assert "  seq 148 tool: result: ledger/__init__.py" in proc.stdout
    raw = run("--home", home_copy, "recall", "b93e", cid, "--depth", "exact", "--json")
    data = json.loads(raw.stdout)
    assert data["verified"] and data["total"] == 60 and data["nextOffset"] == 20
    for item in data["messages"]:
        assert item["message"] == message_of(original.raw_events[item["seq"]])


def test_fold_search_and_status_text_and_json(home_copy: Path) -> None:
    _, cid = _folded(home_copy)
    proc = run("--home", home_copy, "fold-search", "b93e", "ledger/__init__.py")
    assert proc.returncode == 0, proc.stderr
    assert "search 'ledger/__init__.py': 1 matching checkpoint of 1 searched" in proc.stdout
    assert f"cp:{cid}  seq " in proc.stdout
    hits = json.loads(run("--home", home_copy, "fold-search", "b93e", "PARSE", "--json").stdout)
    assert hits["searched"] == 1 and hits["unavailable"] == []
    status = run("--home", home_copy, "fold-status", "b93e", "--window", WINDOW)
    assert status.returncode == 0, status.stderr
    assert "Fold status" in status.stdout and f"checkpoints now       cp:{cid}" in status.stdout
    assert "bundles               1 verified" in status.stdout
    data = json.loads(run("--home", home_copy, "fold-status", "b93e", "--json").stdout)
    assert data["healthy"] and data["checkpoints"] == [f"cp:{cid}"] and data["folds"] == {"leaf": 1}


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_a_bad_bundle_is_exit_1_with_the_reason(home_copy: Path, damage: str) -> None:
    log, cid = _folded(home_copy)
    bundle = _bundle(home_copy, cid)
    if damage == "corrupt":
        data = bytearray(bundle.read_bytes())
        data[len(data) // 2] ^= 0xFF
        bundle.write_bytes(bytes(data))
        reason = "is corrupt"
    else:
        bundle.unlink()
        reason = "no bundle for checkpoint"
    before = log.read_bytes()
    for args in (
        ("recall", "b93e", "148", "--depth", "exact"),
        ("fold-search", "b93e", "ledger"),
        ("fold-status", "b93e"),
    ):
        proc = run("--home", home_copy, *args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ctxsdk: error: "), lines
        assert reason in lines[0] or damage in lines[0], lines[0]
        assert cid in lines[0]
    assert log.read_bytes() == before


def test_demo_folds_the_long_sample_and_the_recalled_bytes_match(tmp_path: Path) -> None:
    proc = run("demo", "--last", "0", "--html", tmp_path / "pages", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "== fold: long-refactor at a 8,192-token window (on a temp copy)" in proc.stdout
    assert re.search(r"leaf fold cp:cp-[0-9a-f]{16}: 60 nodes", proc.stdout)
    assert "Fold status" in proc.stdout
    assert "probe (the first file path in the archived tool output): " in proc.stdout
    assert "the bytes match the original message in the sample" in proc.stdout
    html = (tmp_path / "pages" / "fold.html").read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "<script" not in html
    for part in ("fold cp:cp-", "Fold status", "search ", "recall cp:cp-", "verified"):
        assert part in html, part
    assert not list((tmp_path / "pages").glob("*.tmp"))


def test_demo_merges_two_samples_and_prints_the_block(tmp_path: Path) -> None:
    proc = run("demo", "--last", "0", "--html", tmp_path / "pages", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "== merge: fix-flaky-test + long-refactor at a 400-token budget" in proc.stdout
    assert "## Merged context (ctxsdk)" in proc.stdout
    tokens = re.search(r"block (\d+)/400 tokens", proc.stdout)
    assert tokens is not None and 0 < int(tokens.group(1)) <= 400
    html = (tmp_path / "pages" / "merge.html").read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "<script" not in html and "<table" in html


def test_merge_prints_the_block_and_json(tmp_path: Path) -> None:
    from ctxsdk.samples import sample

    a, b = sample("fix-flaky-test"), sample("long-refactor")
    proc = run("merge", a, b, "--budget", "300", "--block", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## Merged context (ctxsdk)")
    proc = run("merge", a, b, "--budget", "300", "--json", cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert out["tokens"] <= 300 and len(out["sources"]) == 2 and out["slots"]
    assert {"key", "status", "in_block", "why_not"} <= set(out["slots"][0])
    bad = run("merge", a, "--budget", "-1", cwd=tmp_path)
    assert bad.returncode != 0 and "--budget" in bad.stderr


_FOLD_SECTIONS = ("## `ctxsdk fold SESSION", "## `ctxsdk recall SESSION")
_HEX = re.compile(r"\b[0-9a-f]{12,}\b")  # checkpoint ids and the hashes that include them


def test_the_fold_examples_of_the_cli_page_run_as_shown(tmp_path: Path) -> None:
    """Every ``$`` line of the fold sections, run in order in a checkout, prints what the page
    shows (numbers and random ids aside); the damaged-bundle examples need a damaged bundle,
    so they are left to test_a_bad_bundle_is_exit_1_with_the_reason."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    examples: list[tuple[str, list[str]]] = []
    for section in re.split(r"\n(?=## )", text):
        if section.startswith(_FOLD_SECTIONS):
            for block in re.findall(r"```console\n(.*?)```", section, re.S):
                for line in block.splitlines():
                    if line.startswith("$ "):
                        examples.append((line[2:], []))
                    else:
                        examples[-1][1].append(line)
    runnable = [
        (cmd, shown)
        for cmd, shown in examples
        if not any("corrupt" in x or "unavailable" in x for x in shown)
    ]
    assert len(runnable) >= 10 and runnable[0][0].startswith("cp -r ctxsdk/samples/home")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "ctxsdk").symlink_to(ROOT / "ctxsdk")
    env = {**os.environ, "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
    env["DSH_HOME"] = str(tmp_path / "no-such-home")
    define = f'ctxsdk() {{ "{sys.executable}" -m ctxsdk "$@"; }}\n'

    def shape(line: str) -> str:
        if line.strip() == "...":  # a trimmed part of indented JSON
            return "..."
        return _shape(_HEX.sub("HEX", line.replace(str(checkout), "<checkout>")), checkout)

    for command, shown in runnable:
        proc = subprocess.run(
            ["bash", "-c", define + command],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            cwd=checkout,
            timeout=300,
        )
        actual = [shape(line) for line in (proc.stdout + proc.stderr).splitlines()]
        expected = [shape(line) for line in shown]
        assert proc.returncode == (2 if any("ctxsdk: error:" in x for x in shown) else 0), (
            command,
            proc.stderr,
        )
        assert _matches(expected, actual), (command, "\n".join(actual))
    assert (ROOT / "ctxsdk" / "samples" / "home" / "ctxsdk").exists() is False


def test_demo_answers_a_question_from_memory(tmp_path: Path) -> None:
    proc = run("demo", "--last", "0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "== memory: the samples ingested into a temporary memory file" in proc.stdout
    assert "question: which file did the xdist workers share?" in proc.stdout
    answer = proc.stdout.split("question:", 1)[1]
    assert "xdist workers" in answer.split("map:", 1)[0]  # the hit that holds the answer
    assert "Memory: use ctx_find" in answer


def test_memory_ingests_finds_reads_and_maps(tmp_path: Path) -> None:
    from ctxsdk.samples import sample

    db = tmp_path / "memory.db"
    proc = run("memory", db, "ingest", sample("fix-flaky-test"), "--verbatim", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "nodes added" in proc.stdout
    again = run("memory", db, "ingest", sample("fix-flaky-test"), "--verbatim", cwd=tmp_path)
    assert "already ingested" in again.stdout
    found = run("memory", db, "find", "xdist", "workers", "--json", cwd=tmp_path)
    hits = json.loads(found.stdout)["hits"]
    # the record, or the finding read from it (it holds the record's place, with it as evidence)
    assert hits and hits[0]["type"] in ("observation", "experience")
    read = run("memory", db, "read", hits[0]["id"], "--json", cwd=tmp_path)
    assert read.returncode == 0 and "xdist workers" in json.loads(read.stdout)["node"]["text"]
    m = run("memory", db, "map", "--budget", "100", cwd=tmp_path)
    assert m.stdout.startswith("Memory: use ctx_find")
    boxes = run("memory", db, "episodes", cwd=tmp_path)
    assert boxes.returncode == 0 and " tail " in boxes.stdout and "current" in boxes.stdout
    listed = json.loads(run("memory", db, "episodes", "--json", cwd=tmp_path).stdout)
    assert [b["type"] for b in listed] == ["episode"]
    none = run("memory", db, "episodes", "no-such-session", cwd=tmp_path)
    assert none.stdout.startswith("no episodes")
    (tmp_path / "garbage.db").write_bytes(b"not a database" * 20)
    bad = run("memory", tmp_path / "garbage.db", "show", cwd=tmp_path)
    assert bad.returncode != 0 and "not a SQLite database" in bad.stderr


# --- the decompression cap: --max-bytes where a command opens a session --------------------


def test_max_bytes_sets_the_cap_where_a_session_is_opened(home_copy: Path, tmp_path: Path) -> None:
    log = next((home_copy / "sessions").rglob(f"{REFACTOR}/session.v3.jsonl.zstd"))
    other = next(p for p in (home_copy / "sessions").rglob("session.v3.jsonl.zstd") if p != log)
    cases = [
        ["show", log],
        ["messages", log.parent],
        ["tokens", log, "--tokenizer", "estimate"],
        ["fold-status", log],
        ["merge", log, other],
    ]
    for args in cases:
        line = _error(run(*args, "--max-bytes", "1000", cwd=tmp_path))
        assert "(--max-bytes 1000), the most one read takes" in line, (args, line)
        assert line.endswith("pass a larger --max-bytes N"), (args, line)
        assert "max_bytes=" not in line and not PYTHON_TERMS.search(line), (args, line)
        assert run(*args, "--max-bytes", str(1 << 30), cwd=tmp_path).returncode == 0, args
    by_id = run("show", REFACTOR[:8], "--max-bytes", "1000", home=home_copy, cwd=tmp_path)
    assert "(--max-bytes 1000)" in _error(by_id)
    assert run("show", REFACTOR[:8], "--max-bytes", "5000000", home=home_copy).returncode == 0
    for bad in ("0", "-5"):
        line = _error(run("show", log, "--max-bytes", bad, cwd=tmp_path))
        assert line.startswith("ctxsdk: error: --max-bytes must be a positive number"), line


def test_sessions_without_a_home_points_at_the_bundled_samples(tmp_path: Path) -> None:
    line = _error(run("sessions", cwd=tmp_path))
    assert "no-such-home does not exist" in line
    hint = f"--home {SAMPLES_HOME}"
    assert hint in line
    listed = run("--home", SAMPLES_HOME, "sessions", cwd=tmp_path)  # the hint, followed
    assert listed.returncode == 0 and "(4 sessions" in listed.stdout
