"""Regenerate the sample sessions: ``python scripts/make_samples.py [--home DIR]``.

The script lives outside the package (the wheel ships only the logs it writes, under
``ctxsdk/samples/home/``) and imports ctxsdk by absolute name, so run it with the project's
interpreter, e.g. ``.venv/bin/python scripts/make_samples.py`` or ``make samples``.

Everything here is deterministic (ids from uuid5, times from a seeded clock, no wall clock),
so every run writes byte-identical files. The transcripts are written to read like real agent
work: a pytest-xdist flake in a small invoicing service, and a module split in a ledger service.
"""

# ruff: noqa: E501 -- transcript text keeps the long lines that models and tools really print.

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Every ctxsdk name this script uses, imported here only.
from ctxsdk.samples import _FILES, SAMPLES_HOME
from ctxsdk.session._codec import read_log
from ctxsdk.testing import DEFAULT_TOOLS, LogBuilder, ToolOutput

__all__ = ["build_samples", "main", "write_samples"]

Call = tuple[str, dict[str, Any], str | ToolOutput]

INVOICER = "/home/mira/src/invoicer"
LEDGER = "/home/mira/src/ledger-service"
FLAKY_ID = "5f0c9a7e-2d41-4b8e-9c3a-71e2d4b6f018"
FORK_ID = "2a7d5c90-8e34-4c1b-b6f9-0d3e82a41c75"
REFACTOR_ID = "b93e27d4-6a15-4f0e-8d72-c40a19e5f3b6"
AUDIT_ID = "e41b08f6-97c2-4a5d-83e0-6f1d2b9c7a34"
PY = "Python 3.12.4"


# --- helpers -------------------------------------------------------------------------------


def _numbered(text: str, start: int = 1, total: int | None = None) -> str:
    """What the read tool prints: right-aligned line numbers, a tab, the line."""
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")
    body = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, start))
    end = start + len(lines) - 1
    if total is not None and end < total:
        body += f"\n\n(showing lines {start}-{end} of {total}; use offset={end + 1} to continue)"
    return body


def _progress(n: int, marks: dict[int, str] | None = None) -> str:
    """pytest -q progress lines: one char per test, 72 per line, percentage at the end."""
    marks = marks or {}
    out: list[str] = []
    line = ""
    for i in range(1, n + 1):
        line += marks.get(i, ".")
        if len(line) == 72 or i == n:
            out.append(f"{line:<72} [{i * 100 // n:>3}%]")
            line = ""
    return "\n".join(out)


def _failed(text: str) -> ToolOutput:
    """A shell command that exited non-zero."""
    return ToolOutput.failed(text + "\n\nexit code 1", "ShellExitError", "NON_ZERO_EXIT")


def _tools(
    b: LogBuilder, reasoning: str | None, calls: Sequence[Call], text: str | None = None
) -> LogBuilder:
    """One step of tool use: the assistant message, its results, and the next step."""
    b.assistant(text=text, reasoning=reasoning, tool_calls=[(n, a) for n, a, _ in calls])
    return b.tool_results([_timed(r) for _, _, r in calls]).next_step()


_TOOK = re.compile(r"(?:passed|failed)[^\n]* in (\d+)\.(\d\d)s|built in (\d+)\.(\d\d) seconds")


def _timed(result: str | ToolOutput) -> str | ToolOutput:
    """A result that reports its own run time (pytest, mkdocs) takes that long in the log too."""
    out = result if isinstance(result, ToolOutput) else ToolOutput(result)
    found = _TOOK.findall(out.text)
    if not found or out.duration_ms is not None:
        return result
    ms = sum(int(a or c) * 1000 + int(b or d) * 10 for a, b, c, d in found)
    return dataclasses.replace(out, duration_ms=ms + 900)  # + interpreter start-up and collection


def _edited(path: str, n: int = 1) -> str:
    return f"Edited {path}: replaced {n} occurrence{'s' if n > 1 else ''}."


def _wrote(path: str, content: str) -> str:
    lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    return f"Wrote {len(content.encode()):,} bytes to {path} ({lines} lines)."


# --- (a) fix-flaky-test --------------------------------------------------------------------

TEST_EXPORT = """import csv
from decimal import Decimal

import pytest

from invoicer.export import export_invoices_csv, read_invoices_csv
from invoicer.models import Invoice, LineItem


@pytest.fixture
def invoices(db):
    db.add_all(
        [
            Invoice(number="INV-1001", customer="Acme GmbH", currency="EUR",
                    lines=[LineItem("Consulting, March", Decimal("1200.00"))]),
            Invoice(number="INV-1002", customer="Globex", currency="USD",
                    lines=[LineItem("Support plan", Decimal("349.00"))]),
        ]
    )
    db.commit()
    return db.query(Invoice).order_by(Invoice.number).all()


def test_export_csv_roundtrip(invoices, db_path):
    out = db_path.parent / "export.csv"
    export_invoices_csv(invoices, out)
    rows = read_invoices_csv(out)
    assert [r.number for r in rows] == ["INV-1001", "INV-1002"]
    assert rows[0].total == Decimal("1200.00")
    assert rows[1].currency == "USD"


def test_export_quotes_commas(invoices, db_path):
    out = db_path.parent / "export.csv"
    export_invoices_csv(invoices, out)
    with out.open(newline="") as f:
        header, first, _ = list(csv.reader(f))
    assert first[header.index("description")] == "Consulting, March"
"""

CONFTEST_OLD = """import os
from pathlib import Path

import pytest

from invoicer.db import connect, create_schema

TEST_DB = Path(os.environ.get("INVOICER_TEST_DB", "/tmp/invoicer-test.sqlite3"))


@pytest.fixture
def db_path():
    return TEST_DB


@pytest.fixture
def db(db_path):
    if db_path.exists():
        db_path.unlink()
    session = connect(db_path)
    create_schema(session)
    yield session
    session.close()
"""

CONFTEST_NEW = """from pathlib import Path

import pytest

from invoicer.db import connect, create_schema


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    # One database per test: xdist workers used to share /tmp/invoicer-test.sqlite3.
    return tmp_path / "invoicer-test.sqlite3"


@pytest.fixture
def db(db_path):
    session = connect(db_path)
    create_schema(session)
    yield session
    session.close()
"""

XDIST_FAIL = f"""bringing up nodes...
{_progress(90, {23: "F", 61: "F"})}
=================================== FAILURES ===================================
______________________ test_export_csv_roundtrip[4-15] _________________________
[gw2] linux -- {PY} /home/mira/src/invoicer/.venv/bin/python

invoices = [<Invoice INV-1001 EUR 1200.00>, <Invoice INV-1002 USD 349.00>]
db_path = PosixPath('/tmp/invoicer-test.sqlite3')

    def test_export_csv_roundtrip(invoices, db_path):
        out = db_path.parent / "export.csv"
        export_invoices_csv(invoices, out)
        rows = read_invoices_csv(out)
>       assert [r.number for r in rows] == ["INV-1001", "INV-1002"]
E       AssertionError: assert ['INV-2001', 'INV-2002', 'INV-2003'] == ['INV-1001', 'INV-1002']
E
E         At index 0 diff: 'INV-2001' != 'INV-1001'
E         Left contains one more item: 'INV-2003'
E         Use -v to get more diff

tests/test_export.py:28: AssertionError
______________________ test_export_csv_roundtrip[11-15] ________________________
[gw0] linux -- {PY} /home/mira/src/invoicer/.venv/bin/python

db_path = PosixPath('/tmp/invoicer-test.sqlite3')

    @pytest.fixture
    def invoices(db):
>       db.add_all(
            [
                Invoice(number="INV-1001", customer="Acme GmbH", currency="EUR",

tests/test_export.py:12:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
.venv/lib/python3.12/site-packages/sqlalchemy/engine/default.py:941: in do_execute
    cursor.execute(statement, parameters)
E   sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: invoices
E   [SQL: INSERT INTO invoices (number, customer, currency) VALUES (?, ?, ?)]
E   (Background on this error at: https://sqlalche.me/e/20/e3q8)
=========================== short test summary info ============================
FAILED tests/test_export.py::test_export_csv_roundtrip[4-15] - AssertionError: assert ['INV-2001', 'INV-2002', 'INV-2003'] == ['INV-1001', 'INV-1002']
FAILED tests/test_export.py::test_export_csv_roundtrip[11-15] - sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: invoices
2 failed, 88 passed in 6.93s"""

FLAKY_DIFF = """diff --git a/tests/conftest.py b/tests/conftest.py
index 3b1f0c2..9e47ad1 100644
--- a/tests/conftest.py
+++ b/tests/conftest.py
@@ -1,25 +1,21 @@
-import os
 from pathlib import Path

 import pytest

 from invoicer.db import connect, create_schema

-TEST_DB = Path(os.environ.get("INVOICER_TEST_DB", "/tmp/invoicer-test.sqlite3"))
-

 @pytest.fixture
-def db_path():
-    return TEST_DB
+def db_path(tmp_path: Path) -> Path:
+    # One database per test: xdist workers used to share /tmp/invoicer-test.sqlite3.
+    return tmp_path / "invoicer-test.sqlite3"


 @pytest.fixture
 def db(db_path):
-    if db_path.exists():
-        db_path.unlink()
     session = connect(db_path)
     create_schema(session)
     yield session
diff --git a/tests/test_import.py b/tests/test_import.py
index 51c9e0a..c2d84f3 100644
--- a/tests/test_import.py
+++ b/tests/test_import.py
@@ -11,7 +11,7 @@ from invoicer.models import Invoice

 @pytest.fixture
-def sample_csv(db_path):
-    path = db_path.parent / "export.csv"
+def sample_csv(tmp_path):
+    path = tmp_path / "import.csv"
     path.write_text(SAMPLE_ROWS, encoding="utf-8")
     return path"""

CHANGELOG_HEAD = """# Changelog

All notable changes to this project are documented here. The format follows
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/).

## [Unreleased]

### Fixed

- PDF export no longer drops the last line item when an invoice has exactly 20 lines (#471).

## [2.8.0] - 2026-09-02

### Added

- `invoicer export --format csv` writes one row per line item (#455).
- Reminder e-mails can be scheduled per customer (#448)."""


def build_fix_flaky_test() -> LogBuilder:
    b = LogBuilder(session_id=FLAKY_ID, created_at=1_790_251_212_000, cwd=INVOICER)

    # Turn 1: investigate, no edits.
    b.turn(
        "CI has been red on and off since yesterday: `tests/test_export.py::test_export_csv_roundtrip` "
        "fails maybe one run in five, and it always passes when I run it locally. Can you figure out "
        "what's going on? Don't change anything yet."
    )
    _tools(
        b,
        "Intermittent in CI but never locally usually means something about how CI runs the suite: "
        "parallelism, test order, or timing. Let me check the CI pytest invocation and read the test.",
        [
            (
                "grep",
                {"pattern": "pytest", "path": ".github/workflows"},
                ".github/workflows/ci.yml:38:      - run: pip install -e '.[test]'\n"
                ".github/workflows/ci.yml:41:        run: python -m pytest -n auto -p randomly --junitxml=reports/junit.xml",
            ),
            ("read", {"path": "tests/test_export.py"}, _numbered(TEST_EXPORT)),
        ],
    )
    _tools(
        b,
        "CI uses `-n auto` (pytest-xdist) and random order. The test writes `export.csv` next to "
        "`db_path` — where does `db_path` point? It comes from conftest.",
        [("read", {"path": "tests/conftest.py"}, _numbered(CONFTEST_OLD))],
    )
    _tools(
        b,
        "`db_path` is a fixed file in /tmp, shared by every xdist worker, and the `db` fixture "
        "unlinks it before each test. So worker A can delete the database while worker B is "
        "inserting (→ 'no such table'), and `export.csv` lands in /tmp too. If another test writes "
        "`/tmp/export.csv` as well, the roundtrip reads someone else's rows. Let me find other "
        "users of `db_path.parent` and reproduce with several workers and repeats.",
        [
            (
                "grep",
                {"pattern": r"db_path\.parent", "path": "tests"},
                'tests/test_export.py:25:    out = db_path.parent / "export.csv"\n'
                'tests/test_export.py:34:    out = db_path.parent / "export.csv"\n'
                'tests/test_import.py:14:    path = db_path.parent / "export.csv"',
            ),
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_export.py tests/test_import.py -n 4 -p no:randomly --count=15 -q",
                    "description": "Reproduce flake with xdist repeats",
                },
                _failed(XDIST_FAIL),
            ),
        ],
    )
    b.assistant(
        reasoning="Reproduced: 2 of 90 runs fail, with both failure modes I expected. Explain, don't edit.",
        text=(
            "Reproduced it: with 4 xdist workers and `--count=15`, 2 of 90 runs fail — the same two "
            "ways CI does.\n\n"
            "**Root cause: the tests share files in /tmp across xdist workers.**\n\n"
            "- `tests/conftest.py` sets `TEST_DB = /tmp/invoicer-test.sqlite3` and the `db` fixture "
            "*deletes* that file before every test. CI runs `pytest -n auto`, so one worker can unlink "
            "the database while another is mid-test → `sqlite3.OperationalError: no such table: invoices`.\n"
            '- `test_export.py` writes `db_path.parent / "export.csv"`, i.e. `/tmp/export.csv`, and '
            "`tests/test_import.py:14` writes a *different* CSV (INV-2001…2003) to the same path. When "
            "they overlap, the roundtrip reads the import fixture's rows → "
            "`['INV-2001', 'INV-2002', 'INV-2003'] == ['INV-1001', 'INV-1002']`.\n\n"
            "Locally you run without `-n`, so everything is sequential and it never shows up.\n\n"
            "**Suggested fix:** make `db_path` return a per-test path under pytest's `tmp_path` (keeping "
            "the fixture name), drop the unlink, and have `test_import.py` use its own `tmp_path` file. "
            "No production code needs to change. Want me to go ahead?"
        ),
    ).end_turn()

    # Turn 2: the fix.
    b.turn(
        "Makes sense. Please fix it — use pytest's tmp_path so each test gets its own DB, and keep "
        "the `db_path` fixture name so nothing else has to change."
    )
    _tools(
        b,
        "Three edits: conftest db_path → tmp_path (and drop the now-unused os import and the "
        "unlink), and test_import's sample_csv → its own tmp file.",
        [
            (
                "edit",
                {
                    "path": "tests/conftest.py",
                    "old_string": 'TEST_DB = Path(os.environ.get("INVOICER_TEST_DB", "/tmp/invoicer-test.sqlite3"))\n\n\n@pytest.fixture\ndef db_path():\n    return TEST_DB',
                    "new_string": '@pytest.fixture\ndef db_path(tmp_path: Path) -> Path:\n    # One database per test: xdist workers used to share /tmp/invoicer-test.sqlite3.\n    return tmp_path / "invoicer-test.sqlite3"',
                },
                _edited("tests/conftest.py"),
            ),
            (
                "edit",
                {
                    "path": "tests/conftest.py",
                    "old_string": "    if db_path.exists():\n        db_path.unlink()\n    session = connect(db_path)",
                    "new_string": "    session = connect(db_path)",
                },
                _edited("tests/conftest.py"),
            ),
            (
                "edit",
                {
                    "path": "tests/conftest.py",
                    "old_string": "import os\nfrom pathlib import Path",
                    "new_string": "from pathlib import Path",
                },
                _edited("tests/conftest.py"),
            ),
            (
                "edit",
                {
                    "path": "tests/test_import.py",
                    "old_string": 'def sample_csv(db_path):\n    path = db_path.parent / "export.csv"',
                    "new_string": 'def sample_csv(tmp_path):\n    path = tmp_path / "import.csv"',
                },
                _edited("tests/test_import.py"),
            ),
        ],
    )
    _tools(
        b,
        "Now lint and rerun the exact reproduction, then the full suite the way CI runs it.",
        [
            (
                "bash",
                {"command": "ruff check tests/", "description": "Lint the test files"},
                "All checks passed!",
            ),
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_export.py tests/test_import.py -n 4 -p no:randomly --count=15 -q",
                    "description": "Rerun the xdist reproduction",
                },
                f"bringing up nodes...\n{_progress(90)}\n90 passed in 7.12s",
            ),
            (
                "bash",
                {
                    "command": "python -m pytest -n auto -p randomly -q",
                    "description": "Full suite like CI",
                },
                f"bringing up nodes...\n{_progress(415, {97: 's', 98: 's', 301: 's'})}\n412 passed, 3 skipped in 19.84s",
            ),
        ],
    )
    _tools(
        b,
        None,
        [("bash", {"command": "git diff", "description": "Show the change"}, FLAKY_DIFF)],
    )
    b.assistant(
        text=(
            "Fixed. The reproduction that failed 2/90 now passes 90/90, and the full suite passes the "
            "way CI runs it (`-n auto -p randomly`: 412 passed, 3 skipped).\n\n"
            "Changes (tests only):\n"
            '- `tests/conftest.py`: `db_path` now returns `tmp_path / "invoicer-test.sqlite3"`, so '
            "every test — and every xdist worker — gets its own database. Removed the `TEST_DB` "
            "constant, the pre-test `unlink()` and the unused `os` import. The fixture name is unchanged.\n"
            '- `tests/test_import.py`: `sample_csv` writes `tmp_path / "import.csv"` instead of the '
            "shared `/tmp/export.csv`.\n\n"
            "One behaviour change: `INVOICER_TEST_DB` is no longer honoured. Nothing in the repo or CI "
            "sets it, but tell me if someone uses it locally and I'll keep it as an opt-in override."
        ),
    ).end_turn()

    # Turn 3: changelog and commit message (with a Chinese version).
    b.turn(
        "Nice. Add a line to CHANGELOG.md under Unreleased, and write me a one-line commit message. "
        "顺便给一个中文版的提交说明。"
    )
    _tools(
        b,
        None,
        [("read", {"path": "CHANGELOG.md", "limit": 20}, _numbered(CHANGELOG_HEAD, total=212))],
    )
    _tools(
        b,
        "Add under Unreleased → Fixed, after the PDF entry, same style with an issue reference.",
        [
            (
                "edit",
                {
                    "path": "CHANGELOG.md",
                    "old_string": "when an invoice has exactly 20 lines (#471).\n",
                    "new_string": "when an invoice has exactly 20 lines (#471).\n- Tests no longer share a SQLite file in /tmp: each test gets its own database via `tmp_path`, which fixes the intermittent `test_export_csv_roundtrip` failure under `pytest -n auto` (#482).\n",
                },
                _edited("CHANGELOG.md"),
            ),
        ],
    )
    b.assistant(
        text=(
            "Added under **Unreleased → Fixed** in `CHANGELOG.md`.\n\n"
            "Commit message:\n\n"
            "```\ntests: give each test its own SQLite DB to fix xdist flake in export roundtrip\n```\n\n"
            "中文版：\n\n"
            "```\n测试：每个测试使用独立的 SQLite 数据库，修复 pytest -n auto 并行时导出往返测试的偶发失败\n```"
        ),
    ).end_turn()
    return b


# --- (c) the fork of (a) after its turn 2 --------------------------------------------------

CONFTEST_GUARD = '''

@pytest.fixture(autouse=True)
def _no_shared_tmp(monkeypatch, tmp_path):
    """Fail fast when a test opens a file under /tmp that is not its own tmp_path."""
    real_open = builtins.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and any(m in mode for m in "wax+"):
            path = Path(file).resolve()
            if path.is_relative_to("/tmp") and not path.is_relative_to(tmp_path):
                raise AssertionError(f"test writes to shared {path}; use tmp_path")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
'''

_GUARDED = (CONFTEST_NEW + CONFTEST_GUARD).replace(
    "from pathlib import Path\n\nimport pytest",
    "import builtins\nimport os\nfrom pathlib import Path\n\nimport pytest",
)
_GUARD_RAISE = _GUARDED[: _GUARDED.index("raise AssertionError")].count("\n") + 1
TEST_PDF_HEAD = '''from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from invoicer.models import Invoice, LineItem
from invoicer.pdf import render_pdf


@pytest.fixture
def invoice(db):
    inv = Invoice(number="INV-1001", customer="Acme GmbH", currency="EUR",
                  lines=[LineItem("Consulting, March", Decimal("1200.00"))])
    db.add(inv)
    db.commit()
    return inv


def test_pdf_lists_every_line_item(invoice, tmp_path):
    out = render_pdf(invoice, tmp_path / "inv.pdf")
    text = "".join(page.extract_text() for page in PdfReader(out).pages)
    assert "Consulting, March" in text


def test_pdf_totals_use_invoice_currency(invoice, tmp_path):
    out = render_pdf(invoice, tmp_path / "inv.pdf")
    assert "EUR 1,200.00" in PdfReader(out).pages[-1].extract_text()


def test_preview_pdf_has_logo(invoice):
    render_pdf(invoice, Path("/tmp/invoice-preview.pdf"))
    reader = PdfReader("/tmp/invoice-preview.pdf")
    assert reader.pages[0].images, "the logo should be embedded on page 1"'''


def _guard_fail() -> str:
    pdf_call = _line(TEST_PDF_HEAD, '    render_pdf(invoice, Path("/tmp/invoice-preview.pdf"))')
    return f"""bringing up nodes...
{_progress(415, {97: "s", 98: "s", 203: "F", 301: "s"})}
=================================== FAILURES ===================================
_________________________ test_preview_pdf_has_logo ____________________________
[gw5] linux -- {PY} /home/mira/src/invoicer/.venv/bin/python

invoice = <Invoice INV-1001 EUR 1200.00>

    def test_preview_pdf_has_logo(invoice):
>       render_pdf(invoice, Path("/tmp/invoice-preview.pdf"))

tests/test_pdf.py:{pdf_call}:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
src/invoicer/pdf.py:88: in render_pdf
    with open(out, "wb") as f:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

file = PosixPath('/tmp/invoice-preview.pdf'), mode = 'wb'

>   raise AssertionError(f"test writes to shared {{path}}; use tmp_path")
E   AssertionError: test writes to shared /tmp/invoice-preview.pdf; use tmp_path

tests/conftest.py:{_GUARD_RAISE}: AssertionError
=========================== short test summary info ============================
FAILED tests/test_pdf.py::test_preview_pdf_has_logo - AssertionError: test writes to shared /tmp/invoice-preview.pdf; use tmp_path
1 failed, 411 passed, 3 skipped in 20.31s"""


def build_fork(parent: LogBuilder) -> LogBuilder:
    b = parent.fork(at_seq=parent.turn_end_seq(2), child_id=FORK_ID)
    b.turn(
        "Before we commit, let's go one step further: add a guard so a test fails if it writes "
        "into /tmp directly instead of tmp_path. Put it in conftest as an autouse fixture."
    )
    _tools(
        b,
        "Guard idea: autouse fixture that monkeypatches builtins.open and rejects write modes on "
        "paths under /tmp that are not inside this test's tmp_path (tmp_path itself lives under "
        "/tmp/pytest-of-<user>/, so the is_relative_to(tmp_path) check must come second). "
        "Let me look at the current conftest first.",
        [("read", {"path": "tests/conftest.py"}, _numbered(CONFTEST_NEW))],
    )
    _tools(
        b,
        None,
        [
            (
                "edit",
                {
                    "path": "tests/conftest.py",
                    "old_string": "from pathlib import Path\n\nimport pytest",
                    "new_string": "import builtins\nimport os\nfrom pathlib import Path\n\nimport pytest",
                },
                _edited("tests/conftest.py"),
            ),
            (
                "edit",
                {
                    "path": "tests/conftest.py",
                    "old_string": "    yield session\n    session.close()\n",
                    "new_string": "    yield session\n    session.close()\n" + CONFTEST_GUARD,
                },
                _edited("tests/conftest.py"),
            ),
            (
                "bash",
                {
                    "command": "python -m pytest -n auto -p randomly -q",
                    "description": "Full suite with guard",
                },
                _failed(_guard_fail()),
            ),
        ],
    )
    _tools(
        b,
        "The guard works and found a real second offender: test_pdf.py writes "
        "/tmp/invoice-preview.pdf — the same class of xdist race. Fix that test.",
        [("read", {"path": "tests/test_pdf.py"}, _numbered(TEST_PDF_HEAD))],
    )
    _tools(
        b,
        None,
        [
            (
                "edit",
                {
                    "path": "tests/test_pdf.py",
                    "old_string": 'def test_preview_pdf_has_logo(invoice):\n    render_pdf(invoice, Path("/tmp/invoice-preview.pdf"))\n    reader = PdfReader("/tmp/invoice-preview.pdf")',
                    "new_string": 'def test_preview_pdf_has_logo(invoice, tmp_path):\n    out = render_pdf(invoice, tmp_path / "preview.pdf")\n    reader = PdfReader(out)',
                },
                _edited("tests/test_pdf.py"),
            ),
            (
                "edit",
                {
                    "path": "tests/test_pdf.py",
                    "old_string": "from pathlib import Path\n\nimport pytest",
                    "new_string": "import pytest",
                },
                _edited("tests/test_pdf.py"),
            ),
            (
                "bash",
                {
                    "command": "python -m pytest -n auto -p randomly -q && ruff check tests/",
                    "description": "Full suite and lint",
                },
                f"bringing up nodes...\n{_progress(415, {97: 's', 98: 's', 301: 's'})}\n412 passed, 3 skipped in 20.07s\nAll checks passed!",
            ),
        ],
    )
    b.assistant(
        reasoning="All green. Mention the guard's limits honestly: it only sees builtins.open.",
        text=(
            "Done — and the guard immediately paid for itself.\n\n"
            "- `tests/conftest.py`: new autouse fixture `_no_shared_tmp` wraps `builtins.open` and "
            'raises `AssertionError("test writes to shared …; use tmp_path")` for any write/append '
            "open of a path under `/tmp` that is not inside the test's own `tmp_path`.\n"
            "- It caught `tests/test_pdf.py::test_preview_pdf_has_logo`, which rendered to the fixed "
            "`/tmp/invoice-preview.pdf` — the same xdist race we just fixed for the DB. It now renders "
            "into `tmp_path` (and the unused `Path` import is gone).\n\n"
            "Full suite: 412 passed, 3 skipped with `-n auto -p randomly`; ruff clean.\n\n"
            "Limits: the guard only sees Python-level `open()`. SQLite (C code), subprocesses and "
            "`os.open` bypass it, so it is a tripwire, not a sandbox. If you want it airtight we "
            "could run CI with `TMPDIR` pointing at a per-worker directory instead."
        ),
    ).end_turn()
    return b


# --- (b) long-refactor and (d) its subagent child ------------------------------------------
#
# The transcript edits ledger/core.py step by step. _Core models that file (the part the agent
# reads verbatim, blank filler for the rest), so every line number, line count and traceback
# the transcript prints agrees with the edits before it.

CORE_HEAD = '''"""Core ledger types and operations.

Everything lives here for historical reasons; see docs/architecture.md.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from decimal import ROUND_HALF_EVEN, Context, Decimal, localcontext, setcontext
from enum import Enum
from typing import NewType
from uuid import UUID, uuid4

from ledger.errors import LedgerError, UnbalancedEntryError, UnknownAccountError

# Money arithmetic uses banker's rounding everywhere; set once at import time.
LEDGER_CONTEXT = Context(prec=28, rounding=ROUND_HALF_EVEN)
setcontext(LEDGER_CONTEXT)

_TOLERANCE = Decimal("0.005")
_CENT = Decimal("0.01")

AccountId = NewType("AccountId", str)
EntryId = NewType("EntryId", UUID)


def quantize(amount: Decimal, exponent: Decimal = _CENT) -> Decimal:
    """Round to cents (or ``exponent``) with the ledger's rounding."""
    with localcontext(LEDGER_CONTEXT):
        return amount.quantize(exponent)


@dataclass(frozen=True, slots=True)
class Money:
    amount: Decimal
    currency: str

    def __post_init__(self) -> None:
        if len(self.currency) != 3 or not self.currency.isupper():
            raise LedgerError(f"bad currency code {self.currency!r}")
        object.__setattr__(self, "amount", quantize(self.amount))

    def __add__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def is_zero(self) -> bool:
        return abs(self.amount) < _TOLERANCE

    def _same_currency(self, other: Money) -> None:
        if other.currency != self.currency:
            raise LedgerError(f"cannot mix {self.currency} and {other.currency}")

    @classmethod
    def zero(cls, currency: str) -> Money:
        return cls(Decimal(0), currency)


class AccountKind(Enum):
    ASSET = "asset"
    LIABILITY = "liability"
    EQUITY = "equity"
    INCOME = "income"
    EXPENSE = "expense"

    @property
    def normal_side(self) -> int:
        """+1 when debits increase the balance, -1 when credits do."""
        return 1 if self in (AccountKind.ASSET, AccountKind.EXPENSE) else -1


@dataclass(slots=True)
class Account:
    id: AccountId
    name: str
    kind: AccountKind
    currency: str
    parent: AccountId | None = None
    closed_on: date | None = None
    tags: frozenset[str] = frozenset()

    def is_open(self, on: date) -> bool:
        return self.closed_on is None or on < self.closed_on

    def signed(self, debit: Money, credit: Money) -> Money:
        return (debit - credit) if self.kind.normal_side > 0 else (credit - debit)


class ChartOfAccounts:
    """All accounts of one book, indexed by id and by parent."""

    def __init__(self, accounts: Iterable[Account] = ()) -> None:
        self._by_id: dict[AccountId, Account] = {}
        self._children: dict[AccountId | None, list[AccountId]] = defaultdict(list)
        self._lock = threading.RLock()
        for account in accounts:
            self.add(account)

    def add(self, account: Account) -> None:
        with self._lock:
            if account.id in self._by_id:
                raise LedgerError(f"duplicate account {account.id}")
            if account.parent is not None and account.parent not in self._by_id:
                raise UnknownAccountError(account.parent)
            self._by_id[account.id] = account
            self._children[account.parent].append(account.id)

    def get(self, account_id: AccountId) -> Account:
        try:
            return self._by_id[account_id]
        except KeyError:
            raise UnknownAccountError(account_id) from None

    def children(self, account_id: AccountId | None) -> list[Account]:
        return [self._by_id[c] for c in self._children.get(account_id, [])]

    def walk(self, root: AccountId | None = None) -> Iterator[tuple[int, Account]]:
        stack = [(0, c) for c in reversed(self._children.get(root, []))]
        while stack:
            depth, account_id = stack.pop()
            yield depth, self._by_id[account_id]
            stack.extend((depth + 1, c) for c in reversed(self._children.get(account_id, [])))

    def close(self, account_id: AccountId, on: date) -> None:
        account = self.get(account_id)
        if any(child.is_open(on) for child in self.children(account_id)):
            raise LedgerError(f"{account_id} has open sub-accounts")
        account.closed_on = on

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, account_id: object) -> bool:
        return account_id in self._by_id


@dataclass(frozen=True, slots=True)
class Posting:
    account: AccountId
    debit: Money
    credit: Money
    memo: str = ""

    @property
    def net(self) -> Money:
        return self.debit - self.credit


@dataclass(slots=True)
class JournalEntry:
    date: date
    description: str
    postings: list[Posting]
    id: EntryId = field(default_factory=lambda: EntryId(uuid4()))
    created_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    reverses: EntryId | None = None
    memo: str = ""

    def currencies(self) -> set[str]:
        return {p.debit.currency for p in self.postings}

    def total(self, currency: str) -> Money:
        total = Money.zero(currency)
        for p in self.postings:
            if p.debit.currency == currency:
                total = total + p.net
        return total


def _validate_balanced(entry: JournalEntry) -> None:
    for currency in entry.currencies():
        if not entry.total(currency).is_zero():
            raise UnbalancedEntryError(entry.id, currency, entry.total(currency).amount)
    if len(entry.postings) < 2:
        raise LedgerError(f"entry {entry.id} needs at least two postings")


class Journal:
    """Append-only list of entries with per-account running balances."""

    def __init__(self, chart: ChartOfAccounts) -> None:
        self.chart = chart
        self._entries: list[JournalEntry] = []
        self._balances: dict[tuple[AccountId, str], Money] = {}
        self._engine: PostingEngine | None = None  # set by PostingEngine.attach()
        self._lock = threading.Lock()

    def post_entry(self, entry: JournalEntry) -> JournalEntry:
        _validate_balanced(entry)
        for p in entry.postings:
            account = self.chart.get(p.account)
            if not account.is_open(entry.date):
                raise LedgerError(f"{p.account} is closed on {entry.date}")
        with self._lock:
            self._entries.append(entry)
            for p in entry.postings:
                key = (p.account, p.debit.currency)
                self._balances[key] = self._balances.get(key, Money.zero(key[1])) + p.net
        return entry

    def reverse_entry(self, entry_id: EntryId, on: date) -> JournalEntry:
        original = self.find(entry_id)
        flipped = [Posting(p.account, p.credit, p.debit, p.memo) for p in original.postings]
        return self.post_entry(
            JournalEntry(on, f"Reversal of {original.description}", flipped,
                         reverses=original.id, memo=original.memo)
        )

    def find(self, entry_id: EntryId) -> JournalEntry:
        for entry in reversed(self._entries):
            if entry.id == entry_id:
                return entry
        raise LedgerError(f"no entry {entry_id}")

    def balance(self, account_id: AccountId, currency: str) -> Money:
        return self._balances.get((account_id, currency), Money.zero(currency))

    def entries(self, since: date | None = None) -> Iterator[JournalEntry]:
        for entry in self._entries:
            if since is None or entry.date >= since:
                yield entry

    def __len__(self) -> int:
        return len(self._entries)
'''

CORE_POSTING = '''

# --- posting rules -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PostingRule:
    """Turns a business event (an invoice, a payment) into balanced postings."""

    name: str
    debit: AccountId
    credit: AccountId
    memo_template: str = "{event}"

    def apply(self, amount: Money, event: str) -> list[Posting]:
        zero = Money.zero(amount.currency)
        memo = self.memo_template.format(event=event)
        return [Posting(self.debit, amount, zero, memo), Posting(self.credit, zero, amount, memo)]


class PostingEngine:
    """Applies rules to events and posts the result to a journal, in batches."""

    def __init__(self, journal: Journal, rules: Iterable[PostingRule]) -> None:
        self.journal = journal
        self.rules = {rule.name: rule for rule in rules}

    def post(self, rule_name: str, amount: Money, on: date, event: str) -> JournalEntry:
        rule = self.rules[rule_name]
        entry = JournalEntry(on, event, rule.apply(amount, event))
        return self.journal.post_entry(entry)

    def post_batch(self, items: Iterable[tuple[str, Money, date, str]]) -> list[JournalEntry]:
        posted: list[JournalEntry] = []
        try:
            for rule_name, amount, on, event in items:
                posted.append(self.post(rule_name, amount, on, event))
        except LedgerError:
            for entry in reversed(posted):
                self.journal.reverse_entry(entry.id, entry.date)
            raise
        return posted


def allocate(amount: Money, weights: list[Decimal]) -> list[Money]:
    """Split ``amount`` by ``weights``; the rounding remainder goes to the largest share."""
    total = sum(weights, Decimal(0))
    if total <= 0:
        raise LedgerError("allocation weights must sum to a positive number")
    shares = [Money(amount.amount * w / total, amount.currency) for w in weights]
    remainder = amount - sum(shares[1:], shares[0])
    largest = max(range(len(shares)), key=lambda i: weights[i])
    shares[largest] = shares[largest] + remainder
    return shares


def convert(amount: Money, rate: Decimal, to: str) -> Money:
    """Convert with the ledger context (banker's rounding) — never the thread's default."""
    with localcontext(LEDGER_CONTEXT):
        return Money(amount.amount * rate, to)
'''

CORE_TOTAL = 1847
_CORE_TEXT = (CORE_HEAD + CORE_POSTING).rstrip("\n") + "\n"
_CORE_LINES = _CORE_TEXT.rstrip("\n").split("\n")

REBUILD = '''def rebuild_balances(journal: Journal) -> None:
    """Recompute running balances from scratch (after an import or a repair)."""
    balances: dict[tuple[AccountId, str], Money] = {}
    for entry in journal.entries():
        # Old imports skipped validation; refuse to rebuild over an unbalanced entry.
        _validate_balanced(entry)
        for p in entry.postings:
            key = (p.account, p.debit.currency)
            balances[key] = balances.get(key, Money.zero(key[1])) + p.net
    with journal._lock:
        journal._balances = balances'''

# Top-level definitions in the part of core.py the transcript never shows (line, text).
_CORE_TAIL_DEFS = [
    (318, "class FxRateTable:"),
    (
        402,
        "def revalue_open_balances(journal: Journal, rates: FxRateTable, on: date) -> JournalEntry:",
    ),
    (511, "class PeriodLock:"),
    (598, "def close_period(journal: Journal, chart: ChartOfAccounts, end: date) -> JournalEntry:"),
    (702, "def opening_balances(journal: Journal, start: date) -> dict[AccountId, Money]:"),
    (811, "class TrialBalanceRow(NamedTuple):"),
    (
        826,
        "def trial_balance(journal: Journal, chart: ChartOfAccounts, on: date) -> list[TrialBalanceRow]:",
    ),
    (
        944,
        "def income_statement(journal: Journal, chart: ChartOfAccounts, start: date, end: date) -> Statement:",
    ),
    (1107, "def balance_sheet(journal: Journal, chart: ChartOfAccounts, on: date) -> Statement:"),
    (1290, "class BankStatementLine(NamedTuple):"),
    (
        1302,
        "def match_bank_lines(journal: Journal, lines: Iterable[BankStatementLine]) -> MatchResult:",
    ),
    (1466, "def import_chart_csv(path: Path) -> ChartOfAccounts:"),
    (1531, "def export_journal_csv(journal: Journal, path: Path) -> int:"),
    (1618, "def audit_trail(journal: Journal, entry_id: EntryId) -> list[AuditRecord]:"),
    (1744, "def rebuild_balances(journal: Journal) -> None:"),
    (1801, "def _legacy_account_code(account: Account) -> str:"),
]


class _Core:
    """ledger/core.py as the transcript edits it."""

    path = "ledger/core.py"

    def __init__(self) -> None:
        lines = [*_CORE_LINES, *[""] * (CORE_TOTAL - len(_CORE_LINES))]
        for n, text in _CORE_TAIL_DEFS:
            lines[n - 1] = text
        for k, text in enumerate(REBUILD.split("\n")):
            lines[1743 + k] = text
        self.text = "\n".join(lines) + "\n"

    @property
    def total(self) -> int:
        return self.text.count("\n")

    def line(self, needle: str) -> int:
        return self.text[: self.text.index(needle)].count("\n") + 1

    def grep(self, needle: str) -> str:
        return f"{self.path}:{self.line(needle)}:{needle}"

    def cut(self, start: str, end: str) -> str:
        """What the agent's python snippet prints after cutting [start, end)."""
        before = self.total
        i = self.text.index(start)
        self.text = self.text[:i] + self.text[self.text.index(end, i) :]
        return f"{before} -> {self.total}"

    def edit(self, old: str, new: str) -> Call:
        assert self.text.count(old) == 1, old
        self.text = self.text.replace(old, new)
        return (
            "edit",
            {"path": self.path, "old_string": old, "new_string": new},
            _edited(self.path),
        )

    def read(self, offset: int, limit: int) -> Call:
        part = "\n".join(self.text.split("\n")[offset - 1 : offset - 1 + limit])
        return (
            "read",
            {"path": self.path, "offset": offset, "limit": limit},
            _numbered(part, offset, self.total),
        )


def _line(text: str, needle: str) -> int:
    """1-based line of the first occurrence of ``needle``."""
    return text[: text.index(needle)].count("\n") + 1


def _section(start: str, end: str | None) -> str:
    i = _CORE_TEXT.index(start)
    return _CORE_TEXT[i : _CORE_TEXT.index(end, i) if end else len(_CORE_TEXT)].rstrip("\n")


def _lines_of(text: str) -> int:
    return text.rstrip("\n").count("\n") + 1


_ACCOUNTS_AT = _line(_CORE_TEXT, "class AccountKind")
_POSTING_AT = _line(_CORE_TEXT, "@dataclass(frozen=True, slots=True)\nclass Posting:")
_RULES_AT = _line(_CORE_TEXT, "# --- posting rules")

ACCOUNTS_PY = (
    '''"""Accounts and the chart of accounts."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import NewType

from ledger.errors import LedgerError, UnknownAccountError
from ledger.money import Money

__all__ = ["Account", "AccountId", "AccountKind", "ChartOfAccounts"]

AccountId = NewType("AccountId", str)


'''
    + _section("class AccountKind", "@dataclass(frozen=True, slots=True)\nclass Posting:")
    + "\n"
)

MONEY_PY = (
    '''"""Money, rounding and the ledger's Decimal context. A leaf module: imports nothing else from ledger."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, localcontext

from ledger.errors import LedgerError

__all__ = ["BALANCE_TOLERANCE", "CENT", "LEDGER_CONTEXT", "Money", "quantize"]

# Banker's rounding for all money arithmetic, always through localcontext(): core used to call
# setcontext() at import time, which made results depend on import order.
LEDGER_CONTEXT = Context(prec=28, rounding=ROUND_HALF_EVEN)
BALANCE_TOLERANCE = Decimal("0.005")
CENT = Decimal("0.01")


'''
    + _section("def quantize(", "class AccountKind").replace("= _CENT", "= CENT")
    + "\n"
)

JOURNAL_PY = (
    '''"""Journal entries and the append-only journal."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import NewType
from uuid import UUID, uuid4

from ledger.accounts import AccountId, ChartOfAccounts
from ledger.errors import LedgerError, UnbalancedEntryError
from ledger.money import Money

__all__ = ["EntryId", "Journal", "JournalEntry", "Posting", "validate_balanced"]

EntryId = NewType("EntryId", UUID)


'''
    + _section(
        "@dataclass(frozen=True, slots=True)\nclass Posting:", "# --- posting rules"
    ).replace("_validate_balanced", "validate_balanced")
    + "\n"
)

POSTING_PY = (
    '''"""Posting rules, the batch posting engine, allocation and currency conversion."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, localcontext

from ledger.accounts import AccountId
from ledger.errors import LedgerError
from ledger.journal import Journal, JournalEntry, Posting
from ledger.money import LEDGER_CONTEXT, Money

__all__ = ["PostingEngine", "PostingRule", "allocate", "convert"]


'''
    + _section("@dataclass(frozen=True, slots=True)\nclass PostingRule:", None)
    + "\n"
)

_ALLOCATE_OLD = "    shares = [Money(amount.amount * w / total, amount.currency) for w in weights]"
_ALLOCATE_NEW = (
    "    with localcontext(LEDGER_CONTEXT):  # never the caller's ambient rounding\n"
    "        shares = [Money(amount.amount * w / total, amount.currency) for w in weights]"
)
_IS_ZERO_OLD = "        return abs(self.amount) < _TOLERANCE"
_IS_ZERO_NEW = "        return abs(self.amount) < BALANCE_TOLERANCE"
_TC_OLD = "from ledger.money import Money\n"
_TC_NEW = "from ledger.money import Money\n\nif TYPE_CHECKING:\n    from ledger.posting import PostingEngine\n"


def _slice(text: str, offset: int, limit: int, total: int | None = None) -> str:
    part = "\n".join(text.split("\n")[offset - 1 : offset - 1 + limit])
    return _numbered(part, offset, total if total is not None else _lines_of(text))


# Internal importers of ledger.core: (path, line, names) and whether every name stays in core.
_IMPORTERS = [
    (
        "ledger/__init__.py",
        3,
        "Account, AccountKind, ChartOfAccounts, Journal, JournalEntry, Money, Posting",
    ),
    ("ledger/api/routes.py", 12, "ChartOfAccounts, Journal, JournalEntry, Money"),
    ("ledger/api/routes.py", 13, "PostingEngine, trial_balance"),
    ("ledger/api/schemas.py", 8, "AccountKind, Money"),
    ("ledger/api/deps.py", 6, "ChartOfAccounts, Journal"),
    (
        "ledger/reports/trial_balance.py",
        7,
        "ChartOfAccounts, Journal, TrialBalanceRow, trial_balance",
    ),
    ("ledger/reports/income.py", 9, "Journal, Money, income_statement"),
    ("ledger/reports/balance_sheet.py", 9, "Journal, Money, balance_sheet"),
    ("ledger/importers/bank_csv.py", 10, "BankStatementLine, Money, match_bank_lines"),
    ("ledger/importers/chart_csv.py", 5, "import_chart_csv"),
    ("ledger/cli.py", 18, "ChartOfAccounts, Journal, Money, PostingEngine, close_period"),
    ("ledger/fx.py", 4, "FxRateTable, Money, convert, revalue_open_balances"),
    ("ledger/periods.py", 6, "PeriodLock, close_period, opening_balances"),
    ("scripts/backfill_balances.py", 9, "Journal, rebuild_balances"),
    ("scripts/export_journal.py", 7, "Journal, export_journal_csv"),
    ("tests/conftest.py", 5, "Account, AccountKind, ChartOfAccounts, Journal, Money"),
    ("tests/test_accounts.py", 4, "Account, AccountKind, ChartOfAccounts"),
    ("tests/test_money.py", 3, "Money, quantize"),
    ("tests/test_journal.py", 5, "Journal, JournalEntry, Posting"),
    ("tests/test_posting.py", 6, "PostingEngine, PostingRule, allocate, convert"),
    ("tests/test_fx.py", 4, "FxRateTable, Money, convert"),
    ("tests/test_periods.py", 5, "PeriodLock, close_period"),
    ("tests/test_reports.py", 7, "balance_sheet, income_statement, trial_balance"),
    ("tests/test_bank_match.py", 4, "BankStatementLine, match_bank_lines"),
    ("tests/test_audit.py", 3, "audit_trail"),
]
_DOC_HITS = [
    "docs/architecture.md:41:Everything starts in `ledger.core`: accounts, the journal and posting rules.",
    "docs/api.md:12:::: ledger.core.ChartOfAccounts",
    "docs/api.md:19:::: ledger.core.Journal",
    "docs/api.md:27:::: ledger.core.PostingEngine",
    "docs/howto/import-bank-statements.md:33:    from ledger.core import match_bank_lines",
]


_GREP_CORE = "grep -rn 'from ledger.core import' ledger scripts tests"


def _grep_imports(rows: Sequence[tuple[str, int, str]]) -> str:
    return "\n".join(f"{p}:{n}:from ledger.core import {names}" for p, n, names in rows)


def _suite(seconds: str, n: int = 318, seed: str | None = None) -> str:
    """pytest -q output of the ledger suite."""
    head = f"Using --randomly-seed={seed}\n" if seed else ""
    return f"{head}{_progress(n)}\n{n} passed in {seconds}"


def _journal_fail() -> str:
    reverse_call = _line(JOURNAL_PY, "        return self.post_entry(")
    validate_call = _line(JOURNAL_PY, "        validate_balanced(entry)\n        for p")
    is_zero_call = _line(JOURNAL_PY, "        if not entry.total(currency).is_zero():")
    is_zero = _line(MONEY_PY, _IS_ZERO_OLD)
    return f"""{_progress(33, {31: "F"})}
=================================== FAILURES ===================================
_______________________ test_reverse_entry_keeps_memo __________________________

journal = <ledger.journal.Journal object at 0x7f3a2c1d5e10>, cash = 'assets:cash', revenue = 'income:sales'

    def test_reverse_entry_keeps_memo(journal, cash, revenue):
        entry = journal.post_entry(sale(cash, revenue, "120.00", memo="Order #8812"))
>       reversal = journal.reverse_entry(entry.id, date(2026, 9, 30))

tests/test_journal.py:148:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
ledger/journal.py:{reverse_call}: in reverse_entry
    return self.post_entry(
ledger/journal.py:{validate_call}: in post_entry
    validate_balanced(entry)
ledger/journal.py:{is_zero_call}: in validate_balanced
    if not entry.total(currency).is_zero():
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

self = Money(amount=Decimal('0.00'), currency='EUR')

    def is_zero(self) -> bool:
>       return abs(self.amount) < _TOLERANCE
E       NameError: name '_TOLERANCE' is not defined

ledger/money.py:{is_zero}: NameError
=========================== short test summary info ============================
FAILED tests/test_journal.py::test_reverse_entry_keeps_memo - NameError: name '_TOLERANCE' is not defined
1 failed, 32 passed in 0.48s"""


RUFF_FAIL = """scripts/backfill_balances.py:10:41: F401 [*] `ledger.journal.JournalEntry` imported but unused
ledger/api/routes.py:16:41: F401 [*] `ledger.posting.PostingRule` imported but unused
Found 2 errors.
[*] 2 fixable with the `--fix` option."""

REFACTOR_SUMMARY = """## Primary Request and Intent
- Split `ledger/core.py` (1,847 lines) into `ledger/accounts.py`, `ledger/journal.py`, `ledger/posting.py`; keep `from ledger.core import X` working through a re-export shim for external users.
- Current request (turn 5): rewrite internal call sites to import from the new modules directly; leave docs for later.

## Key Technical Concepts
- Circular import core ↔ accounts resolved with a leaf module `ledger/money.py` (Money, quantize, CENT, BALANCE_TOLERANCE, LEDGER_CONTEXT) that imports nothing else from `ledger`.
- Decimal context `Context(prec=28, rounding=ROUND_HALF_EVEN)` is applied with `localcontext(LEDGER_CONTEXT)`; the import-time `setcontext()` in core is gone. `allocate()` now wraps its arithmetic too (pinned by `tests/test_posting.py::test_allocate_ignores_ambient_rounding`).

## Files and Code
- New: `ledger/money.py`, `ledger/accounts.py` (AccountId, AccountKind, Account, ChartOfAccounts), `ledger/journal.py` (EntryId, Posting, JournalEntry, validate_balanced, Journal), `ledger/posting.py` (PostingRule, PostingEngine, allocate, convert).
- `ledger/core.py`: shim docstring + `# noqa: E402` re-export imports at the top; FxRateTable, periods, reports, bank matching, CSV import/export, rebuild_balances still live there.
- `ledger/__init__.py` imports accounts from `ledger.accounts`, the rest still from `ledger.core`.

## Errors and Fixes
- `ImportError: cannot import name 'Account' from partially initialized module 'ledger.accounts'` → Money/quantize moved to `ledger/money.py`.
- `tests/test_journal.py::test_reverse_entry_keeps_memo`: `NameError: name '_TOLERANCE' is not defined` in `Money.is_zero` → uses `BALANCE_TOLERANCE`.

## Pending Jobs
- `ledger/core.py` still defines unused `_TOLERANCE` / `_CENT` constants; clean up when the moves are done.

## Current Work
- Rewriting the 25 internal `from ledger.core import` lines (15 in ledger/ and scripts/, 10 in tests/); names that stay in core keep importing from core.

## Next Step
- Finish the remaining call sites, re-grep `from ledger.core import`, run `ruff check ledger scripts tests` and the full suite.

## Critical Context
- `python -m pytest -q -p no:randomly` → 318 passed before and after every move so far.
- Docs (`docs/`, README.md) mention `ledger.core` 6 times; out of scope for this turn."""

AUDIT_SYSTEM = (
    "You are a subagent of DeepSeek Harness working for a parent agent in the same workspace.\n\n"
    "Do only the task you are given. You cannot ask questions: make reasonable assumptions and "
    "state them. Finish with one concise report; the parent sees only your final message.\n\n"
    "Use the read tool to inspect files and the grep tool to search them."
)

AUDIT_PROMPT = (
    "Audit the documentation for stale references to `ledger.core`, which was just split. "
    "New homes: Account, AccountId, AccountKind, ChartOfAccounts → `ledger.accounts`; EntryId, "
    "Posting, JournalEntry, Journal → `ledger.journal`; PostingRule, PostingEngine, allocate, "
    "convert → `ledger.posting`; Money, quantize, LEDGER_CONTEXT → `ledger.money`. Everything else "
    "(FxRateTable, periods, reports, bank matching, CSV) stays in `ledger.core`.\n\n"
    "Search docs/ and README.md. Do not edit files. Report every hit as `file:line → replacement`, "
    "and say which hits are fine as they are."
)

AUDIT_REPORT = """Found 6 references in docs/ and README.md: 5 need a change, 1 is fine.

Needs a change:
- `docs/architecture.md:41` — "Everything starts in `ledger.core`: accounts, the journal and posting rules." → "Accounts live in `ledger.accounts`, the journal in `ledger.journal` and posting rules in `ledger.posting`; `ledger.money` is the leaf module for amounts and rounding."
- `docs/api.md:12` — `::: ledger.core.ChartOfAccounts` → `::: ledger.accounts.ChartOfAccounts`
- `docs/api.md:19` — `::: ledger.core.Journal` → `::: ledger.journal.Journal`
- `docs/api.md:27` — `::: ledger.core.PostingEngine` → `::: ledger.posting.PostingEngine`
- `README.md:58` — `from ledger.core import ChartOfAccounts, Journal, Money` → `from ledger import ChartOfAccounts, Journal, Money` (`ledger/__init__.py` re-exports all three), or one import per new module.

Fine as is:
- `docs/howto/import-bank-statements.md:33` — `from ledger.core import match_bank_lines`: bank matching stays in `ledger.core`.

Assumption: mkdocstrings resolves `:::` paths by import, so the three `docs/api.md` entries would still render through the shim, but under the shim's module path — worth fixing anyway."""

ARCH_DOC = """## Layout

The service is a thin HTTP layer (`ledger.api`) over a plain Python library.

Everything starts in `ledger.core`: accounts, the journal and posting rules.
Reports (`ledger.reports`) and importers (`ledger.importers`) only read from it.

Money is always a `Decimal` with a currency code; amounts are rounded to cents with
banker's rounding (ROUND_HALF_EVEN) at every step, never only at the end.

## Concurrency"""

API_DOC = """# Library API

The HTTP API is documented in `openapi.yaml`. This page documents the Python library that
backs it, for scripts and notebooks.

## Accounts

Create a chart of accounts once per book; account ids are stable strings such as
`assets:bank:eur`.

::: ledger.core.ChartOfAccounts

## Journal

Every change to balances is a balanced journal entry. Entries are never edited; post a
reversal instead.

::: ledger.core.Journal

## Posting rules

Rules turn business events into postings. Batches are all-or-nothing: a failure reverses
what the batch already posted.

::: ledger.core.PostingEngine

## Reports"""


def build_audit(parent: LogBuilder) -> LogBuilder:
    b = parent.subagent(
        "Audit docs for ledger.core references",
        AUDIT_ID,
        system=AUDIT_SYSTEM,
        tools=[t for t in DEFAULT_TOOLS if t["name"] in ("read", "grep")],
    )
    b.turn(AUDIT_PROMPT)
    _tools(
        b,
        "Grep docs/ and README.md for ledger.core, then read the context of each hit.",
        [
            ("grep", {"pattern": r"ledger\.core", "path": "docs"}, "\n".join(_DOC_HITS)),
            (
                "grep",
                {"pattern": r"ledger\.core", "path": "README.md"},
                "README.md:58:    from ledger.core import ChartOfAccounts, Journal, Money",
            ),
        ],
    )
    _tools(
        b,
        "architecture.md:41 is prose about the layout; api.md has three mkdocstrings directives.",
        [
            (
                "read",
                {"path": "docs/architecture.md", "offset": 37, "limit": 11},
                _numbered(ARCH_DOC, 37, 118),
            ),
            ("read", {"path": "docs/api.md", "limit": 27}, _numbered(API_DOC, 1, 64)),
        ],
    )
    b.assistant(text=AUDIT_REPORT).end_turn()
    return b


SUBAGENT_TOOL: dict[str, Any] = {
    "name": "subagent",
    "description": "Delegate a self-contained task to a one-shot subagent that works in the same workspace and returns its final answer.",
    "parameters": {
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "A few words naming the task."},
            "prompt": {"type": "string", "description": "Everything the subagent needs to know."},
        },
        "required": ["label", "prompt"],
    },
}

_CUT = (
    "python - <<'EOF'\nimport pathlib\np = pathlib.Path('ledger/core.py')\ns = p.read_text()\n"
    "start = s.index({start!r})\nend = s.index({end!r}, start)\np.write_text(s[:start] + s[end:])\n"
    "print(len(s.splitlines()), '->', len(p.read_text().splitlines()))\nEOF"
)


def _cut(core: _Core, what: str, start: str, end: str) -> Call:
    """The agent cuts a section out of core.py with a small python snippet."""
    return (
        "bash",
        {"command": _CUT.format(start=start, end=end), "description": f"Cut {what} from core.py"},
        core.cut(start, end),
    )


def build_long_refactor() -> tuple[LogBuilder, LogBuilder]:
    core = _Core()
    b = LogBuilder(
        session_id=REFACTOR_ID,
        created_at=1_790_425_804_000,
        cwd=LEDGER,
        tools=[*DEFAULT_TOOLS, SUBAGENT_TOOL],
    )

    # Turn 1: map core.py (the big read here is pruned at the start of turn 4).
    b.turn(
        "ledger/core.py has grown past 1,800 lines and every change touches it. I want it split into "
        "ledger/accounts.py, ledger/journal.py and ledger/posting.py, keeping `from ledger.core import X` "
        "working for now via a shim. Start by mapping what's in core.py and who imports it — no edits "
        "in this turn.",
        title="Split ledger/core.py into modules",
    )
    defs = [
        f"ledger/core.py:{i}:{line}"
        for i, line in enumerate(core.text.split("\n"), 1)
        if line.startswith(("class ", "def "))
    ]
    _tools(
        b,
        "First the size of the modules and the top-level definitions in core.py.",
        [
            (
                "bash",
                {
                    "command": "wc -l ledger/*.py | sort -n | tail -6",
                    "description": "Sizes of ledger modules",
                },
                "    88 ledger/errors.py\n   141 ledger/fx.py\n   203 ledger/periods.py\n   267 ledger/cli.py\n"
                f"  {CORE_TOTAL} ledger/core.py\n  2584 total",
            ),
            ("grep", {"pattern": "^(class|def) ", "path": "ledger/core.py"}, "\n".join(defs)),
        ],
    )
    _tools(
        b,
        "Read the top of the file: the money/account/journal/posting types are the part that moves.",
        [core.read(1, len(_CORE_LINES))],
    )
    big_read = b.result_seq(b.last_call_ids[0])
    _tools(
        b,
        "Now who imports core, and a baseline test run.",
        [
            (
                "grep",
                {"pattern": r"ledger\.core", "path": "."},
                _grep_imports(_IMPORTERS)
                + "\n"
                + "\n".join(_DOC_HITS)
                + "\nREADME.md:58:    from ledger.core import ChartOfAccounts, Journal, Money",
            ),
            (
                "bash",
                {
                    "command": "python -m pytest -q -p no:randomly",
                    "description": "Baseline test run",
                },
                _suite("12.40s"),
            ),
        ],
    )
    b.assistant(
        reasoning=(
            "Dependencies inside core: Money is used by everything; Account and ChartOfAccounts use "
            "Money; JournalEntry/Posting use Money and AccountId; Journal uses ChartOfAccounts; the "
            "posting engine uses Journal. If accounts.py imports Money from core while core re-exports "
            "accounts, that is a cycle — Money probably needs its own leaf module."
        ),
        text=(
            f"Here's the map. `ledger/core.py` ({CORE_TOTAL:,} lines) starts with four layers, each "
            "depending only on the ones above it:\n\n"
            "| Layer | Names | Lines | Proposed home |\n"
            "|---|---|---|---|\n"
            f"| money | `Money`, `quantize`, `LEDGER_CONTEXT`, `_TOLERANCE` | 20–{_ACCOUNTS_AT - 3} | see below |\n"
            f"| accounts | `AccountId`, `AccountKind`, `Account`, `ChartOfAccounts` | {_ACCOUNTS_AT}–{_POSTING_AT - 3} | `ledger/accounts.py` |\n"
            f"| journal | `EntryId`, `Posting`, `JournalEntry`, `_validate_balanced`, `Journal` | {_POSTING_AT}–{_RULES_AT - 2} | `ledger/journal.py` |\n"
            f"| posting | `PostingRule`, `PostingEngine`, `allocate`, `convert` | {_RULES_AT}–{len(_CORE_LINES)} | `ledger/posting.py` |\n"
            f"| the rest | FX, periods, reports, bank matching, CSV, audit | 318–{CORE_TOTAL} | stays for now |\n\n"
            "**Who imports it:** 25 `from ledger.core import` lines — 15 in `ledger/` and `scripts/`, "
            "10 in `tests/` — plus 6 mentions in docs and the README.\n\n"
            "**Baseline:** 318 passed in 12.40s.\n\n"
            "**To decide up front:** `Money` is used by every layer. If `accounts.py` imports `Money` "
            "from `core` while `core` re-exports from `accounts`, that's a circular import, so I'd expect "
            "to need a small leaf module `ledger/money.py`. Also, core calls `setcontext(LEDGER_CONTEXT)` "
            "at import time, which silently changes Decimal rounding for the whole thread — I'd replace "
            "that with `localcontext()` while we're here.\n\n"
            "Order: accounts → journal → posting, running the tests after each move."
        ),
    ).end_turn()

    # Turn 2: accounts.py (hits the circular import, introduces money.py).
    b.turn("Plan looks right. Start with accounts.py — let's see whether we really need money.py.")
    first_accounts = ACCOUNTS_PY.replace(
        "from ledger.money import Money", "from ledger.core import Money"
    )
    _tools(
        b,
        "The user wants to see whether the cycle is real. Move the account classes first and import "
        "Money from core.",
        [
            (
                "write",
                {"path": "ledger/accounts.py", "content": first_accounts},
                _wrote("ledger/accounts.py", first_accounts),
            ),
            core.edit(
                'AccountId = NewType("AccountId", str)\n',
                "from ledger.accounts import Account, AccountId, AccountKind, ChartOfAccounts  # noqa: E402\n",
            ),
            _cut(
                core,
                "account classes",
                "class AccountKind(Enum):",
                "@dataclass(frozen=True, slots=True)\nclass Posting:",
            ),
            (
                "edit",
                {
                    "path": "ledger/__init__.py",
                    "old_string": "from ledger.core import Account, AccountKind, ChartOfAccounts, Journal, JournalEntry, Money, Posting",
                    "new_string": "from ledger.accounts import Account, AccountKind, ChartOfAccounts\nfrom ledger.core import Journal, JournalEntry, Money, Posting",
                },
                _edited("ledger/__init__.py"),
            ),
        ],
    )
    circular = (
        "ImportError while loading conftest '/home/mira/src/ledger-service/tests/conftest.py'.\n"
        "tests/conftest.py:5: in <module>\n"
        "    from ledger.core import Account, AccountKind, ChartOfAccounts, Journal, Money\n"
        "ledger/__init__.py:3: in <module>\n"
        "    from ledger.accounts import Account, AccountKind, ChartOfAccounts\n"
        f"ledger/accounts.py:{_line(first_accounts, 'from ledger.core import Money')}: in <module>\n"
        "    from ledger.core import Money\n"
        f"ledger/core.py:{core.line('from ledger.accounts import')}: in <module>\n"
        "    from ledger.accounts import Account, AccountId, AccountKind, ChartOfAccounts  # noqa: E402\n"
        "E   ImportError: cannot import name 'Account' from partially initialized module 'ledger.accounts' "
        "(most likely due to a circular import) (/home/mira/src/ledger-service/ledger/accounts.py)"
    )
    _tools(
        b,
        None,
        [
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_accounts.py -q",
                    "description": "Run account tests",
                },
                _failed(circular),
            )
        ],
    )
    _tools(
        b,
        "As predicted: accounts → core → accounts. Create ledger/money.py (no setcontext), point "
        "accounts at it, and move Money/quantize out of core.",
        [
            (
                "write",
                {"path": "ledger/money.py", "content": MONEY_PY},
                _wrote("ledger/money.py", MONEY_PY),
            ),
            (
                "edit",
                {
                    "path": "ledger/accounts.py",
                    "old_string": "from ledger.core import Money",
                    "new_string": "from ledger.money import Money",
                },
                _edited("ledger/accounts.py"),
            ),
            core.edit(
                "# Money arithmetic uses banker's rounding everywhere; set once at import time.\n"
                "LEDGER_CONTEXT = Context(prec=28, rounding=ROUND_HALF_EVEN)\nsetcontext(LEDGER_CONTEXT)\n",
                "from ledger.money import CENT as _CENT, LEDGER_CONTEXT, Money, quantize  # noqa: E402\n",
            ),
            _cut(
                core,
                "Money and quantize",
                "def quantize(",
                "@dataclass(frozen=True, slots=True)\nclass Posting:",
            ),
        ],
    )
    after_accounts = core.total
    _tools(
        b,
        None,
        [
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_accounts.py tests/test_money.py -q",
                    "description": "Account and money tests",
                },
                f"{_progress(41)}\n41 passed in 0.62s",
            ),
            (
                "bash",
                {"command": "python -m pytest -q -p no:randomly", "description": "Full suite"},
                _suite("12.11s"),
            ),
        ],
    )
    b.assistant(
        text=(
            "We do need it — the first attempt failed exactly as expected:\n\n"
            "```\nImportError: cannot import name 'Account' from partially initialized module 'ledger.accounts'\n```\n\n"
            "(`accounts` imported `Money` from `core`, and `core` re-exports from `accounts`.)\n\n"
            "So now:\n"
            "- `ledger/money.py` (new, leaf): `Money`, `quantize`, `CENT`, `BALANCE_TOLERANCE`, "
            "`LEDGER_CONTEXT`. No import-time `setcontext()`; rounding goes through `localcontext()`.\n"
            "- `ledger/accounts.py` (new): `AccountId`, `AccountKind`, `Account`, `ChartOfAccounts`.\n"
            f"- `ledger/core.py`: money and account code removed ({CORE_TOTAL:,} → {after_accounts:,} lines) "
            "and re-exported at the top.\n"
            "- `ledger/__init__.py`: imports the account classes from the new module.\n\n"
            "Tests: 41/41 for accounts + money, full suite 318 passed."
        ),
    ).end_turn()

    # Turn 3: journal.py.
    b.turn("Good call on money.py. Now journal.py.")
    rebuild_at = core.line("def rebuild_balances")
    _tools(
        b,
        "The journal section depends on Money, AccountId and ChartOfAccounts only. Check whether "
        "anything that stays in core calls _validate_balanced.",
        [
            (
                "grep",
                {"pattern": "_validate_balanced", "path": "ledger"},
                "\n".join(
                    [
                        core.grep("def _validate_balanced(entry: JournalEntry) -> None:"),
                        core.grep(
                            "        _validate_balanced(entry)\n        for p in entry.postings:\n            account"
                        ).split("\n")[0],
                        f"ledger/core.py:{rebuild_at + 5}:        _validate_balanced(entry)",
                    ]
                ),
            ),
            core.read(rebuild_at, _lines_of(REBUILD)),
        ],
    )
    _tools(
        b,
        "rebuild_balances stays in core and needs the validator: make it public in journal.py as "
        "validate_balanced and import it into core under the old name.",
        [
            (
                "write",
                {"path": "ledger/journal.py", "content": JOURNAL_PY},
                _wrote("ledger/journal.py", JOURNAL_PY),
            ),
            core.edit(
                'EntryId = NewType("EntryId", UUID)\n',
                "from ledger.journal import EntryId, Journal, JournalEntry, Posting  # noqa: E402\n"
                "from ledger.journal import validate_balanced as _validate_balanced  # noqa: E402\n",
            ),
            _cut(
                core,
                "journal classes",
                "@dataclass(frozen=True, slots=True)\nclass Posting:",
                "# --- posting rules",
            ),
        ],
    )
    after_journal = core.total
    _tools(
        b,
        None,
        [
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_journal.py -q",
                    "description": "Journal tests",
                },
                _failed(_journal_fail()),
            )
        ],
    )
    _tools(
        b,
        "Money.is_zero was copied verbatim and still says _TOLERANCE; money.py calls it "
        "BALANCE_TOLERANCE. Fix it there and look for other stale names.",
        [
            (
                "edit",
                {"path": "ledger/money.py", "old_string": _IS_ZERO_OLD, "new_string": _IS_ZERO_NEW},
                _edited("ledger/money.py"),
            ),
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_journal.py -q && python -m pytest -q -p no:randomly",
                    "description": "Journal then full suite",
                },
                f"{_progress(33)}\n33 passed in 0.45s\n{_suite('12.26s')}",
            ),
            (
                "bash",
                {
                    "command": "grep -rn '_TOLERANCE' ledger/ | grep -v BALANCE_TOLERANCE",
                    "description": "Stale tolerance names",
                },
                core.grep('_TOLERANCE = Decimal("0.005")'),
            ),
        ],
    )
    b.assistant(
        text=(
            "`ledger/journal.py` is in: `EntryId`, `Posting`, `JournalEntry`, `validate_balanced` "
            "(public now, because `core.rebuild_balances` still needs it) and `Journal`. `core.py` is "
            f"down to {after_journal:,} lines.\n\n"
            "One failure on the way: `test_reverse_entry_keeps_memo` hit `NameError: name '_TOLERANCE' "
            "is not defined` — `money.py` names the constant `BALANCE_TOLERANCE` but `Money.is_zero` "
            "was copied with the old name. Fixed. `core.py` still defines its own `_TOLERANCE` (now "
            "unused); I'll clean the leftover constants up once everything has moved.\n\n"
            "Journal tests 33/33, full suite 318 passed."
        ),
    ).end_turn()

    # Turn 4: posting.py. The tool-result pruner runs first (turn 1's read is over 8192 chars).
    b.turn(
        "posting.py next. Careful: posting relies on the Decimal context that core used to set up "
        "at import time."
    )
    b.prune_tool_result(big_read, head_chars=4096, tail_chars=1024)
    rules_at = core.line("# --- posting rules")
    _tools(
        b,
        "convert() already uses localcontext(LEDGER_CONTEXT). allocate() divides in the *thread's* "
        "context, which was LEDGER_CONTEXT only because of the import-time setcontext(). Check who "
        "else relies on the ambient context.",
        [
            core.read(rules_at, _lines_of(_section("# --- posting rules", None))),
            (
                "grep",
                {"pattern": "getcontext|setcontext|localcontext", "path": "."},
                "\n".join(
                    [
                        core.grep("    with localcontext(LEDGER_CONTEXT):"),
                        "ledger/fx.py:37:    if getcontext().prec < 28:",
                        f"ledger/money.py:{_line(MONEY_PY, '    with localcontext(LEDGER_CONTEXT):')}:    with localcontext(LEDGER_CONTEXT):",
                        "tests/test_posting.py:84:    with localcontext() as ctx:",
                    ]
                ),
            ),
            (
                "read",
                {"path": "tests/test_posting.py", "offset": 81, "limit": 15},
                _numbered(
                    '''def test_allocate_ignores_ambient_rounding():
    """allocate() must use banker's rounding even if the caller changed the thread context."""
    amount = Money(Decimal("100.00"), "EUR")
    with localcontext() as ctx:
        ctx.rounding = ROUND_HALF_UP  # must not leak into allocate()
        shares = allocate(amount, [Decimal(1), Decimal(1), Decimal(1)])
    assert [s.amount for s in shares] == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]
    assert sum((s.amount for s in shares), Decimal(0)) == Decimal("100.00")


def test_convert_rounds_half_even():
    eur = Money(Decimal("10.125"), "EUR")  # quantized to 10.12 on construction
    assert convert(eur, Decimal("1"), "USD").amount == Decimal("10.12")''',
                    81,
                    131,
                ),
            ),
        ],
    )
    _tools(
        b,
        "That test pins exactly this. Wrap allocate's arithmetic in localcontext(LEDGER_CONTEXT) "
        "while moving it; fx.py only reads getcontext().prec as a sanity check, leave it. Then give "
        "core a shim docstring.",
        [
            (
                "write",
                {"path": "ledger/posting.py", "content": POSTING_PY},
                _wrote("ledger/posting.py", POSTING_PY),
            ),
            (
                "edit",
                {
                    "path": "ledger/posting.py",
                    "old_string": _ALLOCATE_OLD,
                    "new_string": _ALLOCATE_NEW,
                },
                _edited("ledger/posting.py"),
            ),
            _cut(core, "posting rules", "# --- posting rules", "class FxRateTable:"),
            core.edit(
                "from ledger.journal import validate_balanced as _validate_balanced  # noqa: E402\n",
                "from ledger.journal import validate_balanced as _validate_balanced  # noqa: E402\n"
                "from ledger.posting import PostingEngine, PostingRule, allocate, convert  # noqa: E402\n",
            ),
            core.edit(
                '"""Core ledger types and operations.\n\nEverything lives here for historical reasons; see docs/architecture.md.\n"""',
                '"""FX, periods, reports, bank matching and CSV import/export.\n\n'
                "Money, accounts, the journal and posting rules moved to ledger.money, ledger.accounts,\n"
                'ledger.journal and ledger.posting; they are re-exported here for existing imports.\n"""',
            ),
        ],
    )
    _tools(
        b,
        None,
        [
            (
                "bash",
                {
                    "command": "python -m pytest tests/test_posting.py tests/test_fx.py -q",
                    "description": "Posting and FX tests",
                },
                f"{_progress(67)}\n67 passed in 0.91s",
            ),
            (
                "bash",
                {
                    "command": "python -m pytest -q -p randomly",
                    "description": "Full suite, random order",
                },
                _suite("12.87s", seed="2904476152"),
            ),
        ],
    )
    b.assistant(
        text=(
            "`ledger/posting.py` is in (`PostingRule`, `PostingEngine`, `allocate`, `convert`), and "
            f"`core.py` ({core.total:,} lines) now says in its docstring what moved where and re-exports it.\n\n"
            "You were right to flag the context: `allocate()` did its division in the *thread's* "
            "Decimal context and was only correct because core called `setcontext()` at import. "
            "`test_allocate_ignores_ambient_rounding` pins this, and it passes because `allocate` now "
            "wraps its arithmetic in `localcontext(LEDGER_CONTEXT)`. `fx.py` only *reads* "
            "`getcontext().prec` as a sanity check, so I left it.\n\n"
            "Posting + FX 67/67; full suite in random order 318 passed."
        ),
    ).end_turn()

    # Turn 5: call sites. The surface is compacted before step 3's request.
    b.turn(
        "Now update the call sites to import from the new modules directly, so the shim is only "
        "for external users. Leave docs for later."
    )
    t5_prompt = b.prompt_seq
    assert t5_prompt is not None
    current = [
        ("ledger/__init__.py", 4, "Journal, JournalEntry, Money, Posting")
        if p == "ledger/__init__.py"
        else (p, n, names)
        for p, n, names in _IMPORTERS
    ]
    _tools(
        b,
        None,
        [
            (
                "bash",
                {"command": _GREP_CORE, "description": "Find ledger.core imports"},
                _grep_imports(current),
            )
        ],
    )

    def edit(path: str, old: str, new: str) -> Call:
        return ("edit", {"path": path, "old_string": old, "new_string": new}, _edited(path))

    _tools(
        b,
        "Split each import by new home; names that stay in core (reports, FX revaluation, periods, "
        "bank matching, CSV) keep importing from core. ledger/ first.",
        [
            edit(
                "ledger/__init__.py",
                "from ledger.core import Journal, JournalEntry, Money, Posting",
                "from ledger.journal import Journal, JournalEntry, Posting\nfrom ledger.money import Money",
            ),
            edit(
                "ledger/api/routes.py",
                "from ledger.core import ChartOfAccounts, Journal, JournalEntry, Money\nfrom ledger.core import PostingEngine, trial_balance",
                "from ledger.accounts import ChartOfAccounts\nfrom ledger.core import trial_balance\nfrom ledger.journal import Journal, JournalEntry\nfrom ledger.money import Money\nfrom ledger.posting import PostingEngine, PostingRule",
            ),
            edit(
                "ledger/api/schemas.py",
                "from ledger.core import AccountKind, Money",
                "from ledger.accounts import AccountKind\nfrom ledger.money import Money",
            ),
            edit(
                "ledger/api/deps.py",
                "from ledger.core import ChartOfAccounts, Journal",
                "from ledger.accounts import ChartOfAccounts\nfrom ledger.journal import Journal",
            ),
            edit(
                "ledger/reports/trial_balance.py",
                "from ledger.core import ChartOfAccounts, Journal, TrialBalanceRow, trial_balance",
                "from ledger.accounts import ChartOfAccounts\nfrom ledger.core import TrialBalanceRow, trial_balance\nfrom ledger.journal import Journal",
            ),
            edit(
                "ledger/reports/income.py",
                "from ledger.core import Journal, Money, income_statement",
                "from ledger.core import income_statement\nfrom ledger.journal import Journal\nfrom ledger.money import Money",
            ),
            edit(
                "ledger/cli.py",
                "from ledger.core import ChartOfAccounts, Journal, Money, PostingEngine, close_period",
                "from ledger.accounts import ChartOfAccounts\nfrom ledger.core import close_period\nfrom ledger.journal import Journal\nfrom ledger.money import Money\nfrom ledger.posting import PostingEngine",
            ),
        ],
    )
    keep = len(b.surface) - b.surface.index(t5_prompt)
    b.compact(keep_last=keep, summary_text=REFACTOR_SUMMARY)
    sed = "; ".join(
        f"s/^from ledger.core import {names}$/from ledger.{mod} import {names}/"
        for mod, names in [
            ("accounts", "Account, AccountKind, ChartOfAccounts"),
            ("money", "Money, quantize"),
            ("journal", "Journal, JournalEntry, Posting"),
            ("posting", "PostingEngine, PostingRule, allocate, convert"),
        ]
    )
    _tools(
        b,
        "Continue with the remaining library modules, the scripts and the tests.",
        [
            edit(
                "ledger/reports/balance_sheet.py",
                "from ledger.core import Journal, Money, balance_sheet",
                "from ledger.core import balance_sheet\nfrom ledger.journal import Journal\nfrom ledger.money import Money",
            ),
            edit(
                "ledger/fx.py",
                "from ledger.core import FxRateTable, Money, convert, revalue_open_balances",
                "from ledger.core import FxRateTable, revalue_open_balances\nfrom ledger.money import Money\nfrom ledger.posting import convert",
            ),
            edit(
                "scripts/backfill_balances.py",
                "from ledger.core import Journal, rebuild_balances",
                "from ledger.core import rebuild_balances\nfrom ledger.journal import Journal, JournalEntry",
            ),
            edit(
                "tests/conftest.py",
                "from ledger.core import Account, AccountKind, ChartOfAccounts, Journal, Money",
                "from ledger.accounts import Account, AccountKind, ChartOfAccounts\nfrom ledger.journal import Journal\nfrom ledger.money import Money",
            ),
            (
                "bash",
                {
                    "command": f"sed -i '{sed}' tests/test_accounts.py tests/test_money.py tests/test_journal.py tests/test_posting.py && git diff --stat tests/",
                    "description": "Rewrite test imports",
                },
                " tests/conftest.py      | 4 +++-\n tests/test_accounts.py | 2 +-\n tests/test_journal.py  | 2 +-\n"
                " tests/test_money.py    | 2 +-\n tests/test_posting.py  | 2 +-\n 5 files changed, 8 insertions(+), 5 deletions(-)",
            ),
        ],
    )
    stays = [
        ("ledger/api/routes.py", 13, "trial_balance"),
        ("ledger/reports/trial_balance.py", 8, "TrialBalanceRow, trial_balance"),
        ("ledger/reports/income.py", 9, "income_statement"),
        ("ledger/reports/balance_sheet.py", 9, "balance_sheet"),
        ("ledger/importers/bank_csv.py", 10, "BankStatementLine, Money, match_bank_lines"),
        ("ledger/importers/chart_csv.py", 5, "import_chart_csv"),
        ("ledger/cli.py", 19, "close_period"),
        ("ledger/fx.py", 4, "FxRateTable, revalue_open_balances"),
        ("ledger/periods.py", 6, "PeriodLock, close_period, opening_balances"),
        ("scripts/backfill_balances.py", 9, "rebuild_balances"),
        ("scripts/export_journal.py", 7, "Journal, export_journal_csv"),
        ("tests/test_fx.py", 4, "FxRateTable, Money, convert"),
        ("tests/test_periods.py", 5, "PeriodLock, close_period"),
        ("tests/test_reports.py", 7, "balance_sheet, income_statement, trial_balance"),
        ("tests/test_bank_match.py", 4, "BankStatementLine, match_bank_lines"),
        ("tests/test_audit.py", 3, "audit_trail"),
    ]
    _tools(
        b,
        None,
        [
            (
                "bash",
                {"command": _GREP_CORE, "description": "Remaining ledger.core imports"},
                _grep_imports(stays),
            ),
            (
                "bash",
                {
                    "command": "ruff check ledger scripts tests",
                    "description": "Lint after the rewrite",
                },
                _failed(RUFF_FAIL),
            ),
        ],
    )
    _tools(
        b,
        "The remaining core imports are names that stay in core, except three that still pull moved "
        "names through the shim: bank_csv (Money), export_journal (Journal), test_fx (Money, convert). "
        "Fix those, then the two unused imports.",
        [
            edit(
                "ledger/importers/bank_csv.py",
                "from ledger.core import BankStatementLine, Money, match_bank_lines",
                "from ledger.core import BankStatementLine, match_bank_lines\nfrom ledger.money import Money",
            ),
            edit(
                "scripts/export_journal.py",
                "from ledger.core import Journal, export_journal_csv",
                "from ledger.core import export_journal_csv\nfrom ledger.journal import Journal",
            ),
            edit(
                "tests/test_fx.py",
                "from ledger.core import FxRateTable, Money, convert",
                "from ledger.core import FxRateTable\nfrom ledger.money import Money\nfrom ledger.posting import convert",
            ),
            (
                "bash",
                {
                    "command": "ruff check --fix ledger scripts tests && python -m pytest -q -p no:randomly",
                    "description": "Fix lint, run the suite",
                },
                f"Found 2 errors (2 fixed, 0 remaining).\n{_suite('12.19s')}",
            ),
        ],
    )
    b.assistant(
        text=(
            f"All internal call sites now import from the new modules. The {len(stays)} remaining "
            "`from ledger.core import` lines import only names that still live in core (reports, FX "
            "revaluation, periods, bank matching, CSV import/export, audit).\n\n"
            "- 18 files touched across `ledger/`, `scripts/` and `tests/`.\n"
            "- Three imports were still pulling *moved* names through the shim (`bank_csv.py`, "
            "`export_journal.py`, `test_fx.py`) — fixed.\n"
            "- ruff found 2 imports the split left unused (`PostingRule` in `routes.py`, "
            "`JournalEntry` in the backfill script); fixed with `--fix`.\n\n"
            "Full suite: 318 passed. Docs untouched, as requested."
        ),
    ).end_turn()

    # Turn 6: mypy.
    b.turn("Run mypy --strict on ledger/ and fix whatever the split broke.")
    engine_at = _line(JOURNAL_PY, "        self._engine")
    mypy_fail = (
        f'ledger/core.py:{core.line("_CENT = Decimal")}: error: Name "_CENT" already defined on line '
        f"{core.line('from ledger.money import CENT as _CENT')}  [no-redef]\n"
        f'ledger/journal.py:{engine_at}: error: Name "PostingEngine" is not defined  [name-defined]\n'
        "Found 2 errors in 2 files (checked 43 source files)"
    )
    _tools(
        b,
        None,
        [
            (
                "bash",
                {"command": "mypy --strict ledger/", "description": "Type-check the package"},
                _failed(mypy_fail),
            )
        ],
    )
    head_at = core.line("from ledger.money import CENT as _CENT")
    _tools(
        b,
        "Two errors: the leftover _CENT constant in core, and the Journal._engine annotation that "
        "names PostingEngine, which now lives in posting.py (which imports journal). Look at both.",
        [
            core.read(head_at, core.line("from ledger.accounts import") - head_at + 1),
            (
                "read",
                {"path": "ledger/journal.py", "offset": engine_at - 6, "limit": 10},
                _slice(JOURNAL_PY, engine_at - 6, 10),
            ),
        ],
    )
    _tools(
        b,
        "Drop the two dead constants in core; import PostingEngine under TYPE_CHECKING only.",
        [
            core.edit('_TOLERANCE = Decimal("0.005")\n_CENT = Decimal("0.01")\n\n', ""),
            (
                "edit",
                {
                    "path": "ledger/journal.py",
                    "old_string": "from typing import NewType",
                    "new_string": "from typing import TYPE_CHECKING, NewType",
                },
                _edited("ledger/journal.py"),
            ),
            (
                "edit",
                {"path": "ledger/journal.py", "old_string": _TC_OLD, "new_string": _TC_NEW},
                _edited("ledger/journal.py"),
            ),
        ],
    )
    _tools(
        b,
        None,
        [
            (
                "bash",
                {
                    "command": "mypy --strict ledger/ && python -m pytest -q -p no:randomly",
                    "description": "Type-check and test",
                },
                f"Success: no issues found in 43 source files\n{_suite('12.33s')}",
            )
        ],
    )
    b.assistant(
        text=(
            "`mypy --strict ledger/` is clean (43 files) and the suite still passes (318).\n\n"
            "What the split broke:\n"
            '1. `core.py` still defined `_CENT = Decimal("0.01")` after importing `CENT as _CENT` from '
            "`ledger.money` — removed it together with the unused `_TOLERANCE` (the cleanup I'd "
            "left for the end).\n"
            "2. `Journal._engine` is annotated with `PostingEngine`, which moved to `posting.py`; since "
            "`posting` imports `journal`, it is imported under `TYPE_CHECKING` only (the module has "
            "`from __future__ import annotations`, so nothing is evaluated at runtime)."
        ),
    ).end_turn()

    # Turn 7: delegate the docs audit to a subagent while adding the deprecation warning.
    b.turn(
        "Docs still talk about ledger.core everywhere. Have a subagent audit docs/ for stale "
        "references while you add a DeprecationWarning to the shim."
    )
    b.assistant(
        reasoning="Delegate the read-only audit; meanwhile look at the shim's imports.",
        tool_calls=[
            (
                "subagent",
                {"label": "Audit docs for ledger.core references", "prompt": AUDIT_PROMPT},
            ),
            ("read", {"path": "ledger/core.py", "limit": 24}),
        ],
    )
    child = build_audit(b)
    shim_head = core.read(1, 24)[2]
    b.tool_results(
        [
            ToolOutput(
                f"Subagent {AUDIT_ID} (Audit docs for ledger.core references) finished.\n\n{AUDIT_REPORT}",
                duration_ms=child.now - b.now + 350,
            ),
            shim_head,
        ]
    ).next_step()
    shim_test = (
        "import importlib\nimport sys\n\nimport pytest\n\n\n"
        "def test_core_shim_warns_and_reexports():\n"
        '    sys.modules.pop("ledger.core", None)\n'
        '    with pytest.warns(DeprecationWarning, match="ledger.core is deprecated"):\n'
        '        core = importlib.import_module("ledger.core")\n'
        "    from ledger.accounts import Account\n    from ledger.journal import Journal\n\n"
        "    assert core.Account is Account\n    assert core.Journal is Journal\n"
    )
    posting_line = (
        "from ledger.posting import PostingEngine, PostingRule, allocate, convert  # noqa: E402\n"
    )
    _tools(
        b,
        "Add the warning after the re-exports (so ruff's E402 stays quiet), a test for it, and "
        "apply the subagent's five doc fixes.",
        [
            core.edit("import threading\n", "import threading\nimport warnings\n"),
            core.edit(
                posting_line,
                posting_line + "\nwarnings.warn(\n"
                '    "ledger.core is deprecated for money, accounts, journal and posting names: import them "\n'
                '    "from ledger.money, ledger.accounts, ledger.journal or ledger.posting",\n'
                "    DeprecationWarning,\n    stacklevel=2,\n)\n",
            ),
            (
                "write",
                {"path": "tests/test_core_shim.py", "content": shim_test},
                _wrote("tests/test_core_shim.py", shim_test),
            ),
            edit(
                "docs/api.md",
                "::: ledger.core.ChartOfAccounts",
                "::: ledger.accounts.ChartOfAccounts",
            ),
            edit("docs/api.md", "::: ledger.core.Journal", "::: ledger.journal.Journal"),
            edit(
                "docs/api.md", "::: ledger.core.PostingEngine", "::: ledger.posting.PostingEngine"
            ),
            edit(
                "docs/architecture.md",
                "Everything starts in `ledger.core`: accounts, the journal and posting rules.",
                "Accounts live in `ledger.accounts`, the journal in `ledger.journal` and posting rules in\n`ledger.posting`; `ledger.money` is the leaf module for amounts and rounding.",
            ),
            edit(
                "README.md",
                "    from ledger.core import ChartOfAccounts, Journal, Money",
                "    from ledger import ChartOfAccounts, Journal, Money",
            ),
        ],
    )
    _tools(
        b,
        "Internal code must not trigger the warning: run the suite with it as an error, and build "
        "the docs strictly.",
        [
            (
                "bash",
                {
                    "command": "python -m pytest -q -p no:randomly -W error::DeprecationWarning",
                    "description": "Suite, warnings as errors",
                },
                _suite("12.58s", n=319),
            ),
            (
                "bash",
                {
                    "command": "mkdocs build --strict 2>&1 | tail -3",
                    "description": "Strict docs build",
                },
                "INFO    -  Cleaning site directory\nINFO    -  Building documentation to directory: "
                "/home/mira/src/ledger-service/site\nINFO    -  Documentation built in 3.12 seconds",
            ),
        ],
    )
    b.assistant(
        text=(
            "Done, alongside the audit:\n\n"
            "- `ledger/core.py` emits a `DeprecationWarning` naming the four new modules, with "
            "`stacklevel=2` so it points at the importing line.\n"
            "- New `tests/test_core_shim.py` checks the warning and that `ledger.core.Account` / "
            "`.Journal` are the new classes.\n"
            "- The subagent found 6 references; I applied its 5 fixes (three mkdocstrings paths in "
            "`docs/api.md`, the layout paragraph in `docs/architecture.md`, the README example — which "
            "now imports from `ledger`). The bank-statement how-to keeps `ledger.core.match_bank_lines`, "
            "which did not move.\n\n"
            "Suite with `-W error::DeprecationWarning`: 319 passed, so nothing internal imports the "
            "shim any more. `mkdocs build --strict` is clean."
        ),
    ).end_turn()

    # Turn 8: PR description.
    b.turn(
        "Write a short PR description: what moved where, the circular import fix, and how external "
        "users should migrate."
    )
    modules = {
        "ledger/accounts.py": ACCOUNTS_PY,
        "ledger/journal.py": JOURNAL_PY.replace(_TC_OLD, _TC_NEW),
        "ledger/posting.py": POSTING_PY.replace(_ALLOCATE_OLD, _ALLOCATE_NEW),
        "ledger/money.py": MONEY_PY,
    }
    sizes = {core.path: core.total, **{p: _lines_of(t) for p, t in modules.items()}}
    wc = "\n".join(f"{n:>6} {p}" for p, n in sizes.items()) + f"\n{sum(sizes.values()):>6} total"
    _tools(
        b,
        None,
        [
            (
                "bash",
                {"command": "git status --short", "description": "Changed files"},
                " M README.md\n M docs/api.md\n M docs/architecture.md\n M ledger/__init__.py\n M ledger/api/deps.py\n"
                " M ledger/api/routes.py\n M ledger/api/schemas.py\n M ledger/cli.py\n M ledger/core.py\n M ledger/fx.py\n"
                " M ledger/importers/bank_csv.py\n M ledger/reports/balance_sheet.py\n M ledger/reports/income.py\n"
                " M ledger/reports/trial_balance.py\n M scripts/backfill_balances.py\n M scripts/export_journal.py\n"
                " M tests/conftest.py\n M tests/test_accounts.py\n M tests/test_fx.py\n M tests/test_journal.py\n"
                " M tests/test_money.py\n M tests/test_posting.py\n?? ledger/accounts.py\n?? ledger/journal.py\n"
                "?? ledger/money.py\n?? ledger/posting.py\n?? tests/test_core_shim.py",
            ),
            (
                "bash",
                {
                    "command": "wc -l ledger/core.py ledger/accounts.py ledger/journal.py ledger/posting.py ledger/money.py",
                    "description": "Module sizes",
                },
                wc,
            ),
        ],
    )
    b.assistant(
        text=(
            "## Split `ledger/core.py` into focused modules\n\n"
            f"`core.py` was {CORE_TOTAL:,} lines and touched by nearly every change. This moves its four "
            "foundational layers into their own modules; nothing is renamed.\n\n"
            "| Module | Contents |\n|---|---|\n"
            "| `ledger.money` (new, leaf) | `Money`, `quantize`, `CENT`, `BALANCE_TOLERANCE`, `LEDGER_CONTEXT` |\n"
            "| `ledger.accounts` | `AccountId`, `AccountKind`, `Account`, `ChartOfAccounts` |\n"
            "| `ledger.journal` | `EntryId`, `Posting`, `JournalEntry`, `validate_balanced`, `Journal` |\n"
            "| `ledger.posting` | `PostingRule`, `PostingEngine`, `allocate`, `convert` |\n\n"
            f"FX revaluation, periods, reports, bank matching and CSV import/export stay in `ledger.core` "
            f"({core.total:,} lines now) for a follow-up.\n\n"
            "### Notable fixes\n"
            "- **Circular import:** `Money` is needed by every layer; `ledger.money` imports nothing else "
            "from `ledger`, which breaks the `core ↔ accounts` cycle.\n"
            "- **Decimal context:** core used to call `setcontext()` at import time, so rounding depended "
            "on import order. Money arithmetic now uses `localcontext(LEDGER_CONTEXT)`, and `allocate()` "
            "no longer picks up a caller's ambient rounding.\n\n"
            "### Migrating\n"
            "`from ledger.core import X` keeps working for moved names but emits a `DeprecationWarning`. "
            "Import from the module in the table instead, or from `ledger` for the common names. The "
            "shim will be removed in 3.0.\n\n"
            "### Checks\n"
            "`pytest` 319 passed (incl. new `tests/test_core_shim.py`), `mypy --strict ledger/` clean, "
            "`ruff` clean, `mkdocs build --strict` clean."
        ),
    ).end_turn()

    # Turn 9: a Chinese title and summary.
    b.turn("谢谢！最后再给一个中文的 PR 标题和一句话摘要。")
    b.assistant(
        reasoning="The user wants a Chinese PR title and a one-sentence summary.",
        text=(
            "**标题：** 将 `ledger/core.py` 拆分为 money、accounts、journal、posting 四个模块\n\n"
            f"**摘要：** 把 {CORE_TOTAL:,} 行的 `core.py` 按层拆分（新增无依赖的 `ledger.money` 以消除循环导入，"
            "并统一用 `localcontext` 处理 Decimal 舍入）；旧的 `from ledger.core import …` 仍然可用，但会给出 "
            "`DeprecationWarning`。"
        ),
    ).end_turn()
    return b, child


# --- driver --------------------------------------------------------------------------------


def build_samples() -> dict[str, LogBuilder]:
    """Every sample as a builder, in a fixed order."""
    flaky = build_fix_flaky_test()
    refactor, audit = build_long_refactor()
    return {
        "fix-flaky-test": flaky,
        "long-refactor": refactor,
        "fix-flaky-test-fork": build_fork(flaky),
        "long-refactor-docs-audit": audit,
    }


def write_samples(home: str | Path | None = None) -> dict[str, Path]:
    """Write every sample under ``<home>/sessions``; the default home is the package's own.

    Regenerating the package's home replaces its ``sessions`` tree so no stale session stays.
    """
    root = Path(home) if home is not None else SAMPLES_HOME
    sessions = root / "sessions"
    if home is None and sessions.exists():
        shutil.rmtree(sessions)
    out: dict[str, Path] = {}
    for name, b in build_samples().items():
        path = b.canonical_path(sessions)
        rel = path.relative_to(root).as_posix()
        if rel != _FILES[name]:
            raise RuntimeError(
                f"sample {name!r} is at {rel}, but ctxsdk.samples lists {_FILES[name]}"
            )
        out[name] = b.write(path, batch_size=24, overwrite=True)
        os.chmod(out[name], 0o644)  # write_new publishes a mkstemp file (0600); ship it readable
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/make_samples.py", description=__doc__)
    parser.add_argument(
        "--home", type=Path, default=None, help="DSH home to write into (default: the package's)"
    )
    args = parser.parse_args(argv)
    for name, path in write_samples(args.home).items():
        log = read_log(path)
        print(f"{name:<26} {len(log.events):>5} events {log.size:>7} bytes  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
