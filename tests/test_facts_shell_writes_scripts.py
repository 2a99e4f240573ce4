"""A Python script the session wrote that reads a file and writes it back: running it is
an edit of that file (bash-only agents do this when ``sed`` quoting gets hard). A script
that only writes (a log, a figure) or only reads edits nothing."""

from __future__ import annotations

import pytest

from ctxsdk.session import Fact
from ctxsdk.session._facts._script_writes import rewritten_files
from ctxsdk.session._facts._tools import ToolFacts

# paraphrased from a real mini-swe-agent run: the fix is applied by a script it wrote
_FIX = """import os

file_path = 'pkg/metrics/_ranking.py'
with open(file_path, 'r') as f:
    lines = f.readlines()
lines[10] = '    x = 1\\n'
with open(file_path, 'w') as f:
    f.writelines(lines)
print("Applied fix")
"""


@pytest.mark.parametrize(
    ("code", "files"),
    [
        (_FIX, ["pkg/metrics/_ranking.py"]),
        ("s = open('a/b.py').read()\nopen('a/b.py', 'w').write(s.replace('x', 'y'))", ["a/b.py"]),
        ("with open(\"c.cfg\", mode='r+') as f:\n    f.write('x')", ["c.cfg"]),
        (
            "from pathlib import Path\np = Path('src/m.py')\np.write_text(p.read_text() + 'x')",
            ["src/m.py"],
        ),
        ("t = Path('m.py').read_text()\nPath('m.py').write_text(t)", ["m.py"]),
        ("p = Path('m.py')\nt = p.read_text()\nwith p.open('w') as f:\n    f.write(t)", ["m.py"]),
        # a string that only looks like a call is no file use
        ("s = open('m.py').read()\nnote = \"open('m.py', 'w')\"", []),
    ],
)
def test_rewritten_files(code: str, files: list[str]) -> None:
    assert rewritten_files(code) == files


@pytest.mark.parametrize(
    "code",
    [
        "open('results.json', 'w').write('{}')",  # an output, not an edit
        "print(open('pkg/m.py').read())",
        "open('m.py', 'w').write('x')\nprint(open('m.py').read())",  # written before read
        "open(path, 'w').write(open(path).read())",  # a name bound nowhere: which file?
        "with open('/dev/null', 'r+') as f: pass",
        "s = open('m.py').read(\nopen('m.py', 'w').write(s)",  # cut: it does not parse
    ],
)
def test_not_rewritten(code: str) -> None:
    assert rewritten_files(code) == []


def _files(tf: ToolFacts) -> dict[str, Fact]:
    return {f.value or "": f for f in tf.finish() if (f.key or "").startswith("file ")}


def test_running_the_script_is_the_edit() -> None:
    tf = ToolFacts("s")
    tf.call("1", "bash", {"command": "python3 apply_fix.py"}, 1)  # not written yet: nothing
    tf.call(
        "2", "bash", {"command": f"cat <<'EOF' > apply_fix.py\n{_FIX}EOF\npython3 apply_fix.py"}, 2
    )
    tf.call("3", "bash", {"command": "rm apply_fix.py"}, 3)
    files = _files(tf)
    fact = files["pkg/metrics/_ranking.py"]
    assert fact.text == "edited pkg/metrics/_ranking.py: rewritten by apply_fix.py"
    assert fact.source.seq == 2
    assert "apply_fix.py" not in files  # the throwaway script itself stays out


def test_a_script_written_but_never_run_edits_nothing() -> None:
    tf = ToolFacts("s")
    tf.call("1", "bash", {"command": f"cat <<'EOF' > apply_fix.py\n{_FIX}EOF"}, 1)
    tf.call("2", "bash", {"command": "cat apply_fix.py"}, 2)
    assert "pkg/metrics/_ranking.py" not in _files(tf)
