"""Programs that write files through their own words or the here-document they are fed:
``patch``/``git apply`` with a diff, ``git mv``, ``install``, ``truncate``, ``sponge``,
gawk's ``-i inplace``, ``ed``/``ex``/``vim`` scripts that write; commands inside compound
commands (``then …``, ``do …``); and words the shell expands (``$f``, ``*.py``), which name
no file the log can tell."""

from __future__ import annotations

import pytest

from ctxsdk.session import Fact
from ctxsdk.session._facts._commands import parts, written_by_shell
from ctxsdk.session._facts._tools import ToolFacts
from ctxsdk.session._facts._writers import diff_files

_DIFF = "--- a/src/m.py\n+++ b/src/m.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
_GIT_DIFF = "diff --git a/pkg/core.py b/pkg/core.py\nindex 1..2 100644\n" + _DIFF.replace(
    "src/m.py", "pkg/core.py"
)


@pytest.mark.parametrize(
    ("command", "written"),
    [
        (f"patch -p1 <<'EOF'\n{_DIFF}EOF", ["src/m.py"]),
        (f"patch -p0 <<'EOF'\n{_DIFF}EOF", ["b/src/m.py"]),
        (f"patch <<'EOF'\n{_DIFF}EOF", ["src/m.py"]),  # no -p: git's a/ b/ dropped
        (f"cd /testbed && patch -p 1 <<EOF\n{_DIFF}EOF", ["/testbed/src/m.py"]),
        ("patch src/m.py < fix.diff", ["src/m.py"]),
        ("patch -o out.py src/m.py fix.diff", ["out.py"]),
        (f"git apply <<'EOF'\n{_GIT_DIFF}EOF", ["pkg/core.py"]),
        (f"git apply -v - <<'EOF'\n{_GIT_DIFF}EOF\ngit diff", ["pkg/core.py"]),
        (f"echo ok && git apply <<'A'\n{_GIT_DIFF}A", ["pkg/core.py"]),
        ("git mv old/a.py new/a.py", ["new/a.py"]),
        ("install -m 644 build/app.cfg etc/app.cfg", ["etc/app.cfg"]),
        ("truncate -s 0 logs/run.log", ["logs/run.log"]),
        ("sort -u names.txt | sponge names.txt", ["names.txt"]),
        ("awk -i inplace '{sub(/a/, \"b\")} 1' data.csv", ["data.csv"]),
        ("gawk -i inplace -v n=2 -f fix.awk a.txt b.txt", ["a.txt", "b.txt"]),
        ("ed -s src/m.py <<'EOF'\n3d\nw\nq\nEOF", ["src/m.py"]),
        ("printf '3d\\nw\\nq\\n' | ed -s src/m.py", ["src/m.py"]),
        ("ex -sc '%s/old/new/g|x' src/m.py", ["src/m.py"]),
        ("vim -c '%s/old/new/g' -c 'wq' src/m.py", ["src/m.py"]),
        ("if [ -f a.py ]; then sed -i 's/x/y/' a.py; fi", ["a.py"]),
        ('for n in 1 2; do sed -i "s/v$n/w/" conf.ini; done', ["conf.ini"]),
        ('while read l; do echo "$l" | tee -a out.txt; done < in.txt', ["out.txt"]),
    ],
)
def test_program_write_forms(command: str, written: list[str]) -> None:
    assert written_by_shell(command) == written


@pytest.mark.parametrize(
    "command",
    [
        f"patch --dry-run -p1 <<'EOF'\n{_DIFF}EOF",
        f"git apply --check <<'EOF'\n{_GIT_DIFF}EOF",
        f"git apply --stat <<'EOF'\n{_GIT_DIFF}EOF",
        f"git apply --cached <<'EOF'\n{_GIT_DIFF}EOF",  # the index, not the tree
        "patch -p1 < fix.diff",  # the diff is in a file the log does not show
        f"cat <<'EOF' | grep '+++'\n{_DIFF}EOF",
        "vim src/m.py",  # an interactive session: what it saved, the log does not say
        "ex -sc 'g/TODO/p|q!' src/m.py",
        "awk '{print $1}' data.csv",
        "awk -v i=inplace '{print}' data.csv",
        "sed -i 's/a/b/' $f",
        "sed -i 's/a/b/' src/*.py",
        "sed -i 's/a/b/' {a,b}.py",
        "for f in *.py; do sed -i 's/a/b/' \"$f\"; done",
        "grep -rn 'x > y' src 2>/dev/null",
        "echo x > /dev/null",
        "sed -n '1086p' sklearn/metrics/_ranking.py",
        "git mv",
        "install -d build/out",
        "git diff > /dev/null && git status",
    ],
)
def test_not_program_writes(command: str) -> None:
    assert written_by_shell(command) == []


def test_the_body_goes_to_its_own_command() -> None:
    # two here-documents: the file's text is no diff, the diff is no file's text
    cmd = (
        f"cat <<'EOF' > notes.md\n+++ b/not/a/file.py\nEOF\n"
        f"git apply <<'EOF'\n{_GIT_DIFF}EOF\ncat notes.md"
    )
    assert written_by_shell(cmd) == ["notes.md", "pkg/core.py"]


def test_diff_files_strip_levels() -> None:
    assert diff_files(_DIFF, 1) == ["src/m.py"]
    assert diff_files(_DIFF, 2) == ["m.py"]
    new_file = "--- /dev/null\n+++ b/added.py\n@@ -0,0 +1 @@\n+x\n"
    assert diff_files(new_file, 1) == ["added.py"]
    assert diff_files("diff --git a/x/y.py b/x/y.py\nBinary files differ\n", 1) == ["x/y.py"]


def test_compound_commands_are_classified_as_their_program() -> None:
    ps = parts("for t in a b; do pytest -q tests/$t; done")
    assert [p.program for p in ps if p.program] == ["for", "pytest", "done"]
    (test,) = [p for p in ps if p.purpose == "test"]
    assert test.program == "pytest"


def _files(tf: ToolFacts) -> dict[str, Fact]:
    return {f.value or "": f for f in tf.finish() if (f.key or "").startswith("file ")}


def test_kernel_records_them_as_edits() -> None:
    tf = ToolFacts("s")
    tf.call("1", "bash", {"command": f"cd /testbed && git apply <<'EOF'\n{_GIT_DIFF}EOF"}, 1)
    tf.call("2", "bash", {"command": "git mv lib/old.py lib/new.py"}, 2)
    tf.call("3", "bash", {"command": "awk -i inplace 'NR!=3' lib/conf.txt"}, 3)
    tf.call("4", "bash", {"command": "ed -s lib/m.py <<'EOF'\n1d\nw\nEOF"}, 4)
    tf.call("5", "bash", {"command": "for f in lib/*.py; do sed -i 's/a/b/' $f; done"}, 5)
    files = _files(tf)
    # the directory it moved to is the project's root: the path is the project's
    assert files["pkg/core.py"].text == "edited pkg/core.py: applied a patch"
    assert files["lib/new.py"].text == "created lib/new.py: moved from `lib/old.py`"
    assert files["lib/conf.txt"].text == "edited lib/conf.txt: awk in place"
    assert files["lib/m.py"].text == "edited lib/m.py: ed in place"
    assert not any("$" in p or "*" in p for p in files)
