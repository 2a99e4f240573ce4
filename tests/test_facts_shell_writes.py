"""Files written by shell commands count as an edit tool's writes: the kernel's file facts,
``written_paths`` (Fold's artifacts) and what Memory stores from them.

Unit cases pin each write form and each look-alike that writes nothing (a redirection
of a stream, a device, a ``>`` inside quotes, a here-document's body); real logs from
``../shared/data`` (skipped when absent) check them where agents wrote files with ``cat
<<EOF``, ``sed -i`` and ``mv``."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.bench import _realworld as rw
from ctxsdk.session import Fact
from ctxsdk.session._facts._commands import heredoc_bodies, parts, written_by_shell
from ctxsdk.session._facts._tools import ToolFacts
from ctxsdk.session.kernel import call_command, heredoc_writes, written_paths

# ------------------------------------------------------------------ write forms


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("cat <<'EOF' > reproduce_issue.py\nimport os\nEOF", ["reproduce_issue.py"]),
        ("cat > f.py << EOF\nx = 1\nEOF", ["f.py"]),
        ('cat <<"EOF" >> notes.md\nmore\nEOF', ["notes.md"]),
        ("cat <<-EOF > t.sh\n\techo hi\n\tEOF", ["t.sh"]),
        ("cat <<\\EOF > raw.txt\n$HOME\nEOF", ["raw.txt"]),
        ('echo "x" > f', ["f"]),
        ("echo x>f", ["f"]),
        ("echo x >| f", ["f"]),
        ("printf '%s\\n' a b >> f", ["f"]),
        ("make &> build.log", ["build.log"]),
        ("echo x | tee f", ["f"]),
        ("echo x | tee -a f g", ["f", "g"]),
        ("sed -i 's/a/b/' path/to/file.py", ["path/to/file.py"]),
        ("sed -i.bak 's/a/b/' x.py", ["x.py"]),
        ("sed -i '' 's/a/b/' x.py", ["x.py"]),  # BSD: an empty suffix word
        ("sed -i -e 's/a/b/' -e 's/c/d/' x.py y.py", ["x.py", "y.py"]),
        ("sed --in-place=.orig 's/a/b/' x.py", ["x.py"]),
        ("perl -pi -e 's/a/b/' x.py", ["x.py"]),
        ("perl -i.bak -pe 's/a/b/' x.py y.py", ["x.py", "y.py"]),
        ("touch f g", ["f", "g"]),
        ("touch -d yesterday f", ["f"]),
        ("mv a b", ["b"]),
        ("cp -r src dst", ["dst"]),
        ("cp a b dir", ["dir/a", "dir/b"]),
        ("mv -t dest a", ["dest/a"]),
        ("dd if=/dev/zero of=disk.img bs=1M count=1", ["disk.img"]),
        ("cd src && echo x > y.txt; ls", ["src/y.txt"]),
        ("cd /testbed && sed -i 's/a/b/' pkg/m.py", ["/testbed/pkg/m.py"]),
        ("cd a && cd ../b && touch c", ["b/c"]),
        ("cd $HOME && touch d", ["d"]),  # a cd we cannot follow: the path as written
        ("ls && echo done > out.txt || true; wc -l out.txt", ["out.txt"]),
        ("bash -lc 'echo x > inner.txt'", ["inner.txt"]),
        ("git diff > /tmp/x.patch", ["/tmp/x.patch"]),  # scratch, but a file written
        ("python run.py > out.log 2>&1", ["out.log"]),
    ],
)
def test_shell_write_forms(command: str, written: list[str]) -> None:
    assert written_by_shell(command) == written
    assert written_paths("bash", {"command": command}) == written


@pytest.mark.parametrize(
    "command",
    [
        "python x.py 2>&1",
        "python x.py > /dev/null",
        "python x.py 2>/dev/null",
        "python x.py &>/dev/null",
        "echo oops >&2",
        "echo x | tee /dev/stderr",
        "python x.py 2> err.log",  # standard error saved: a log, not the work's file
        "diff <(sort a) <(sort b)",
        'grep ">" f',
        "grep '>' f",
        "echo \\> y",
        'python -c "print(1>0)"',
        "awk '{print > \"out\"}' f",
        "echo $((1>0))",
        "echo $(cat a > b)",  # a command substitution is a value here
        "cat <<< 'x > y'",
        "mkdir -p build/out",
        "sed -n '1,20p' a.py",
        "sed 's/a/b/' a.py",
        "perl -ne 'print if />/' f",
        "rm -f f.txt",
        "mv onlyone",
        "cat <<'EOF' | python\nopen('x', 'w').write('>')\nprint(1 > 0)\nEOF",
        "python - <<EOF\nimport os\nEOF",
    ],
)
def test_not_writes(command: str) -> None:
    assert written_by_shell(command) == []
    assert written_paths("bash", {"command": command}) == []


def test_heredoc_body_is_never_parsed() -> None:
    body = "x > y\necho hi > body.txt\nsed -i 's/a/b/' victim.py\ntouch planted\nmv a b\n"
    cmd = f"cat <<'EOF' > made.py\n{body}EOF\npython made.py > run.log"
    assert written_by_shell(cmd) == ["made.py", "run.log"]
    assert [p.program for p in parts(cmd)] == ["cat", "python"]
    assert heredoc_bodies(cmd) == [body.rstrip("\n")]
    # a log cut inside the body: the rest is still the body, not commands
    assert written_by_shell(f"cat <<'EOF' > made.py\n{body}") == ["made.py"]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("bash", {"command": "echo x > a.txt"}),
        ("Bash", {"command": "echo x > a.txt", "description": "write"}),
        ("execute_bash", {"command": "echo x > a.txt"}),
        ("exec_command", {"cmd": "echo x > a.txt", "workdir": "/repo"}),
        ("shell", {"command": ["bash", "-lc", "echo x > a.txt"]}),
        ("run_shell_command", {"command": "echo x > a.txt"}),
    ],
)
def test_every_agents_shell_tool(name: str, args: Mapping[str, Any]) -> None:
    assert written_paths(name, args) == ["a.txt"]


def test_shell_apply_patch_writes_its_headers() -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1 > 0\n+x = 2\n*** End Patch\n"
    args = {"command": ["apply_patch", patch]}
    assert written_paths("shell", args) == ["src/a.py"]
    tf = ToolFacts("s")
    tf.call("1", "shell", args, 1)
    (fact,) = [f for f in tf.finish() if (f.key or "").startswith("file ")]
    assert fact.value == "src/a.py"


def test_edit_tools_unchanged() -> None:
    assert written_paths("Write", {"file_path": "/w/a.py", "content": "x > 1"}) == ["/w/a.py"]
    assert written_paths("str_replace_editor", {"command": "view", "path": "a.py"}) == []
    assert written_paths("Read", {"file_path": "a.py"}) == []


# ------------------------------------------------------------ the same facts


def _files(tf: ToolFacts) -> dict[str, Fact]:
    return {f.value or "": f for f in tf.finish() if (f.key or "").startswith("file ")}


def test_shell_writes_give_an_edit_tools_facts() -> None:
    tool, shell = ToolFacts("a"), ToolFacts("b")
    tool.call("1", "write_file", {"file_path": "src/app.py", "content": "import flask\n"}, 1)
    shell.call("1", "bash", {"command": "cat > src/app.py <<'EOF'\nimport flask\nEOF"}, 1)
    (a,), (b,) = _files(tool).values(), _files(shell).values()
    assert (
        (a.key, a.value, a.text)
        == (b.key, b.value, b.text)
        == (
            "file src/app.py",
            "src/app.py",
            "created src/app.py",
        )
    )
    # the here-document is the file's code, as an edit tool's content is
    framework = [f.value for f in shell.finish() if f.key == "framework"]
    assert framework == [f.value for f in tool.finish() if f.key == "framework"]


def test_created_versus_edited() -> None:
    tf = ToolFacts("s")
    tf.call("1", "bash", {"command": "sed -i 's/old/new/' lib/a.py"}, 1)
    tf.call("2", "bash", {"command": "cat <<'EOF' >> tests/test_a.py\n\ndef test_b():\nEOF"}, 2)
    tf.call("3", "bash", {"command": "perl -pi -e 's/x/y/' lib/c.py"}, 3)
    tf.call("4", "bash", {"command": "echo '[tool]' > setup.cfg"}, 4)
    tf.call("5", "bash", {"command": "cd /repo && mv lib/old.py lib/new.py"}, 5)
    files = _files(tf)
    assert files["lib/a.py"].text == "edited lib/a.py: sed s/old/new/"
    assert files["tests/test_a.py"].text == "edited tests/test_a.py: added `def test_b():`"
    assert files["lib/c.py"].text == "edited lib/c.py: perl -i"
    assert files["setup.cfg"].text == "created setup.cfg"
    assert files["lib/new.py"].text == "created lib/new.py: moved from `lib/old.py`"
    assert "lib/old.py" not in files


def test_no_file_fact_from_a_quoted_or_stream_redirect() -> None:
    tf = ToolFacts("s")
    tf.call("1", "bash", {"command": 'grep -rn ">" src/ 2>/dev/null | head'}, 1)
    tf.call("2", "bash", {"command": 'python -c "print(1 > 0)" >&2'}, 2)
    tf.call("3", "bash", {"command": "pytest -q 2>&1 | tail -5"}, 3)
    assert _files(tf) == {}


# ------------------------------------------------------------------ real logs


def _corpus() -> Path:
    root = rw.corpus_dir()
    if root is None:
        pytest.skip("the agent-sessions corpus (../shared/data) is absent")
    return root


def _calls(rel: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for ev in rw.load_session(_corpus(), rel).raw_events:
        if ev.get("type") == "tool/call":
            data = ev.get("data") or {}
            args = data.get("arguments")
            args = json.loads(args) if isinstance(args, str) else args
            if isinstance(args, dict):
                yield str(data.get("name", "")), args


def _file_facts(rel: str) -> dict[str, Fact]:
    facts = rw.load_session(_corpus(), rel).facts()
    return {f.value or "": f for f in facts if (f.key or "").startswith("file ")}


def test_real_mini_swe_agent_heredoc_and_sed() -> None:
    rel = "mini-swe-agent/django__django-16255.traj.json"
    written = [p for name, args in _calls(rel) for p in written_paths(name, args)]
    assert written == [
        "reproduce_issue.py",
        "django/contrib/sitemaps/__init__.py",
        "test_typeerror.py",
        "test_none_items.py",
    ]
    files = _file_facts(rel)
    # the fix made with sed -i is the session's file fact, as an edit tool's would be;
    # the reproduce script is written but scratch (the kernel's rule for every tool)
    sitemaps = files["django/contrib/sitemaps/__init__.py"]
    assert sitemaps.text.startswith("edited django/contrib/sitemaps/__init__.py: sed 171s/")
    assert "reproduce_issue.py" not in files
    from ctxsdk.fold import Fold

    with tempfile.TemporaryDirectory() as d:
        fold = Fold(rw.load_session(_corpus(), rel), store=Path(d))
        fold.run()
        artifacts = [a.value for a in fold.state.artifacts]
    assert "reproduce_issue.py" in artifacts
    # a file a shell command changed keeps the command: "<path> (by sed -i ...)"
    assert any(a.startswith("django/contrib/sitemaps/__init__.py (by sed -i") for a in artifacts)


def test_real_openhands_mv_writes_its_destination() -> None:
    rel = "openhands/wrong_initial_state.json"
    moves = [(n, a) for n, a in _calls(rel) if (call_command(a) or "").startswith("mv ")]
    assert moves
    assert written_paths(*moves[0]) == ["/workspace/2048.py"]
    fact = _file_facts(rel)["2048.py"]
    assert fact.text == "created 2048.py: moved from `/workspace/game_2048.py`"


def test_real_sklearn_append_edits_the_test_file() -> None:
    files = _file_facts("mini-swe-agent/scikit-learn__scikit-learn-12585.traj.json")
    text = files["sklearn/tests/test_base.py"].text
    assert text == "edited sklearn/tests/test_base.py: added `def test_clone_estimator_types():`"


def _named(path: str, text: str) -> bool:
    """The file's name stands as a word of the text (``0`` is not named by ``10``)."""
    name = re.escape(path.rsplit("/", 1)[-1])
    return re.search(rf"(?<![\w.-]){name}(?![\w-])", text) is not None


def test_real_heredoc_bodies_never_give_a_path() -> None:
    """Every path written in the mini-SWE-agent logs is named outside the here-document
    bodies (their Python is full of ``>``: ``len(calls) > 0``), and so is every file fact."""
    root = _corpus()
    rels = sorted(f"mini-swe-agent/{p.name}" for p in (root / "mini-swe-agent").glob("*.json"))
    rels = [r for r in rels if r.endswith(".traj.json")]
    assert len(rels) >= 10
    checked = 0
    for rel in rels:
        outside: list[str] = []
        for name, args in _calls(rel):
            command = call_command(args) or ""
            for body in heredoc_bodies(command):
                command = command.replace(body, "")
            outside.append(command)
            for path in written_paths(name, args):
                assert _named(path, command), (rel, path)
                checked += 1
        text = "\n".join(outside)
        for path in _file_facts(rel):
            assert _named(path, text), (rel, path)
    assert checked >= 50
    verify = [
        written_paths(n, a)
        for n, a in _calls("mini-swe-agent/matplotlib__matplotlib-23314.traj.json")
        if "method_calls) > 0" in (call_command(a) or "")
    ]
    assert verify == [["verify_fix.py"], ["verify_positive.py"]]


def test_a_patch_in_a_here_document_is_a_patch_only_for_apply_patch() -> None:
    patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hello > world\n*** End Patch"
    assert written_paths("exec_command", {"cmd": f"apply_patch <<'EOF'\n{patch}\nEOF"}) == [
        "docs/new.md"
    ]
    # a note about patches written with cat is the note, not the patch's files
    assert written_paths("bash", {"command": f"cat <<'EOF' > notes.md\n{patch}\nEOF"}) == [
        "notes.md"
    ]


def test_an_importers_note_in_a_path_argument_is_no_file() -> None:
    note = "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app.py"
    assert written_paths("edit", {"path": note}) == []
    assert written_paths("edit", {"path": "src/app.py"}) == ["src/app.py"]


def test_heredoc_writes_pairs_each_written_file_with_its_body() -> None:
    body = "class MockAdapter(HTTPAdapter):\n    pass"
    assert heredoc_writes(f"cat <<'EOF' > test_fix.py\n{body}\nEOF\npython test_fix.py") == [
        ("test_fix.py", body)
    ]
    # appended, written after the redirection, through tee, under a cd of the same line
    assert heredoc_writes("cat <<'EOF' >> repro.py\nprint(1)\nEOF") == [("repro.py", "print(1)")]
    assert heredoc_writes("cat > a.txt <<EOF\nx\nEOF") == [("a.txt", "x")]
    assert heredoc_writes("cd src && tee b.py <<'PY'\ny = 2\nPY") == [("src/b.py", "y = 2")]
    two = "cat <<'A' > one.py\n1\nA\ncat <<'B' > two.py\n2\nB"
    assert heredoc_writes(two) == [("one.py", "1"), ("two.py", "2")]
    # a body that feeds a program, and a copy beside a here-document: no file's text guessed
    assert heredoc_writes("python - <<'EOF'\nprint(1)\nEOF") == []
    assert heredoc_writes("cat a.py > b.py && python - <<'EOF'\nprint(1)\nEOF") == []
