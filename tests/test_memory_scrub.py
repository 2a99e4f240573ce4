"""``Memory.scrub``: credentials an old memory file still holds, withheld after the fact.

Each test builds a memory, then writes raw secrets into every text column with ``sqlite3``
directly, as a file written before the door (or under older redaction rules) would hold
them: a node's name, text, aliases, uri, sources (quote, session, a key of its own), until,
untilAt, fail, fix, times and ``extra`` (keys and values), a session-map box's summary, an
edge's time, a meta key and a meta value. Some are left in the WAL, and one only in the
free space of a page (written, then overwritten with ``secure_delete`` off). Every secret
is assembled at run time from pieces.

After ``scrub`` no secret is in any row, nor in the raw bytes of the file and its WAL; the
rest of each text is kept; the file is sound. A dry run writes nothing (the file's bytes are
identical); a second scrub changes nothing; a scrub that fails midway (an error raised in
the store's write, or the process SIGKILLed) leaves the file as it was.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import string
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.bench._redact_corpus import positives
from ctxsdk.errors import InvalidArgument, StaleRedactionWarning
from ctxsdk.memory import Memory, Node, ScrubReport, SQLiteStore
from ctxsdk.memory._scrub import RULES_KEY
from ctxsdk.samples import sample
from ctxsdk.session import Session, redact
from ctxsdk.session.kernel import REDACTION_RULES_VERSION

ALNUM = string.ascii_letters + string.digits


def _github() -> str:
    return "gh" + "p_" + "".join(secrets.choice(ALNUM) for _ in range(36))


def _aws() -> str:
    upper = string.ascii_uppercase + string.digits
    return "AK" + "IA" + "".join(secrets.choice(upper) for _ in range(16))


def _stripe() -> str:
    return "sk" + "_live_" + "".join(secrets.choice(ALNUM) for _ in range(24))


def _forms(secret: str) -> set[str]:
    """How a secret could be stored: as written, JSON-escaped, its lines (a key block)."""
    forms = {secret, json.dumps(secret, ensure_ascii=False)[1:-1], " ".join(secret.split())}
    forms |= {line.strip() for line in secret.splitlines() if len(line.strip()) >= 16}
    return {f for f in forms if f and "-----" not in f}


def _rows(path: Path) -> list[tuple[str, tuple[Any, ...]]]:
    """Every row of every table, in a stable order (read only)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [
            (t, tuple(row))
            for t in sorted(tables)
            for row in sorted(con.execute(f'SELECT * FROM "{t}"'), key=repr)
        ]
    finally:
        con.close()


def _raw(path: Path) -> bytes:
    """The bytes of the database file and its WAL, as they are on disk now."""
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def _leaks(path: Path, secrets_: list[str]) -> list[str]:
    """The secrets (shown by their first 6 characters) found in a row or in the raw bytes."""
    rows = "\n".join(repr(r) for r in _rows(path)) + "\n".join(
        "\n".join(str(v) for v in row) for _, row in _rows(path)
    )
    raw = _raw(path)
    return [s[:6] for s in secrets_ if any(f in rows or f.encode() in raw for f in _forms(s))]


def _integrity(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        con.close()


def _quiet_open(path: Path | str, **kw: Any) -> Memory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleRedactionWarning)
        return Memory(path, **kw)


# -- an old file ------------------------------------------------------------------------------
class Old:
    """A memory file holding raw secrets in every text column, and what was put where."""

    def __init__(self, path: Path, raw: sqlite3.Connection) -> None:
        self.path = path
        self.raw = raw  # kept open: what it wrote last is still in the WAL
        self.secrets: list[str] = []
        self.ids: dict[str, str] = {}
        self.ghost = ""

    def new(self, make: Any = _github) -> str:
        s = str(make())
        self.secrets.append(s)
        return s


def _build(path: Path) -> Old:
    """A memory made by today's code, then given secrets the way an old file holds them."""
    with Memory(path) as mem:
        pref = mem.remember("Always run the tests first.", link_to="pytest")
        dec = mem.remember("Freeze the API until the release.", type="decision", until="Friday")
        exp = mem.remember("The build broke on a stale lock file.", type="experience")
        ent = mem.remember("AuthGateway", type="entity")
        leak = mem.remember("LeakyName", type="entity")
        mem.ingest(Session.open(sample("fix-flaky-test")), verbatim=True)
        box = mem.episodes()[-1]
        observed = mem.nodes("observation")
        # rows in pages scrub has no reason to touch, short enough to fit in their page
        quiet_rows = sorted(observed[len(observed) // 2 :], key=lambda n: len(n.text))
        edge = mem.store.edges(src=pref.id)[0]
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA secure_delete = OFF")  # as any other program may write it
    old = Old(path, raw)
    old.ids = {"pref": pref.id, "dec": dec.id, "exp": exp.id, "ent": ent.id, "leak": leak.id}
    old.ids["box"] = box.id

    # Bytes no row holds: written, overwritten, checkpointed into the file's free space.
    # Whether SQLite leaves the old cell's bytes depends on the page's layout: the first
    # quiet row (shortest first) whose page keeps them holds the ghost.
    old.ghost = old.new()
    for quiet in quiet_rows[:8]:
        raw.execute(
            "UPDATE nodes SET text = ? WHERE id = ?", (f"{quiet.text} {old.ghost}", quiet.id)
        )
        raw.execute("UPDATE nodes SET text = ? WHERE id = ?", (quiet.text, quiet.id))
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if old.ghost.encode() in _raw(path):
            break
    assert old.ghost.encode() in _raw(path), "the free-space secret was not left: test is moot"

    raw.execute("PRAGMA wal_autocheckpoint = 0")  # the rest stays in the WAL
    sql = raw.execute
    sql("BEGIN")
    sql(
        "UPDATE nodes SET text = ?, name = ? WHERE id = ?",
        (f"deploy with {old.new()} to staging", f"token {old.new(_aws)} name", pref.id),
    )
    sql(
        "UPDATE nodes SET until = ?, until_at = ? WHERE id = ?",
        (f"until {old.new()} expires", f"2026-01-01 {old.new()}", dec.id),
    )
    sql(
        "UPDATE nodes SET fail = ?, fix = ? WHERE id = ?",
        (f"failed: {old.new(_stripe)} rejected", f"rotated {old.new()} and retried", exp.id),
    )
    sql(
        "UPDATE nodes SET aliases = ?, uri = ? WHERE id = ?",
        (json.dumps(["AG", old.new(), f"gw {old.new()}"]), f"ctx://entity/{old.new()}", ent.id),
    )
    sources = [
        {
            "session": old.new(),
            "seq": 3,
            "quote": f"the key {old.new()} was pasted",
            "via": "rule",
            "note": f"an old field {old.new()}",
        }
    ]
    extra = {old.new(): "a key that is a secret", "v": [f"deep {old.new()} value", 4]}
    sql(
        "UPDATE nodes SET sources = ?, extra = ?, created_at = ?, updated_at = ? WHERE id = ?",
        (
            json.dumps(sources),
            json.dumps(extra),
            f"2026-01-01T00:00:00Z {old.new()}",
            f"2026-01-02T00:00:00Z {old.new(_aws)}",
            dec.id,
        ),
    )
    sql("UPDATE nodes SET name = ?, text = ? WHERE id = ?", (old.new(), old.new(), leak.id))
    sql("UPDATE nodes SET text = ? WHERE id = ?", (old.new(), box.id))
    sql(
        "UPDATE edges SET created_at = ? WHERE src = ? AND dst = ? AND label = ?",
        (f"2026-01-03 {old.new()}", edge.src, edge.dst, edge.label),
    )
    sql("INSERT INTO meta (key, value) VALUES (?, ?)", (f"pins:{old.new()}", json.dumps([pref.id])))
    sql(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        ("note", json.dumps({"said": f"use {old.new(_stripe)} for billing"})),
    )
    sql(f"DELETE FROM meta WHERE key = '{RULES_KEY}'")  # an old file records no rules
    sql("COMMIT")
    wal = path.with_name(path.name + "-wal").read_bytes()
    assert all(s.encode() in wal for s in old.secrets[1:]), "the secrets are not in the WAL"
    return old


@pytest.fixture
def old(tmp_path: Path) -> Iterator[Old]:
    o = _build(tmp_path / "memory.db")
    yield o
    o.raw.close()


# -- the scrub --------------------------------------------------------------------------------
def test_scrub_withholds_every_secret_from_every_row_and_the_raw_bytes(old: Old) -> None:
    assert len(_leaks(old.path, old.secrets)) == len(old.secrets)  # all there before
    with pytest.warns(
        StaleRedactionWarning, match="does not record which redaction rules"
    ) as caught:
        mem = Memory(old.path)
    assert len([w for w in caught if w.category is StaleRedactionWarning]) == 1
    assert caught[0].filename == __file__  # it points at the caller's Memory(...)
    assert mem.redaction_rules is None
    with mem:
        report = mem.scrub()
        # the raw connection is still open: the WAL was emptied all the same
        assert _leaks(old.path, old.secrets) == []
        assert report.compacted is True
        assert mem.store.integrity_check() == ["ok"]
        assert mem.redaction_rules == REDACTION_RULES_VERSION
        n = {k: mem.store.get(v) for k, v in old.ids.items()}
        mem.find("deploy staging")  # the index follows the rewritten rows
    old.raw.close()
    assert _leaks(old.path, old.secrets) == []
    assert _integrity(old.path) == "ok"

    # The rest of each text is kept.
    pref, dec, exp, ent, leak, box = (n[k] for k in ("pref", "dec", "exp", "ent", "leak", "box"))
    assert pref and dec and exp and ent and leak and box
    assert pref.text == "deploy with [REDACTED:github] to staging"
    assert pref.name == "token [REDACTED:aws-access-key] name"
    assert dec.until == "until [REDACTED:github] expires"
    assert dec.until_at == "2026-01-01 [REDACTED:github]"
    assert exp.fail == "failed: [REDACTED:stripe] rejected"
    assert exp.fix == "rotated [REDACTED:github] and retried"
    assert exp.text == "The build broke on a stale lock file."
    assert ent.aliases == ("AG", "gw [REDACTED:github]")  # an alias that was only a key: gone
    assert ent.uri == "ctx://entity/[REDACTED:github]" and ent.status == "active"
    assert dec.sources[0].quote == "the key [REDACTED:github] was pasted"
    assert dec.sources[0].session == "[REDACTED:github]"
    assert dict(dec.extra) == {
        "[REDACTED:github]": "a key that is a secret",
        "v": ["deep [REDACTED:github] value", 4],
    }
    assert dec.created_at.startswith("2026-01-01T00:00:00Z [REDACTED:")
    # nothing but a credential: the marker is kept, and the entity is archived, not deleted
    assert (leak.name, leak.text, leak.status) == ("[REDACTED:github]",) * 2 + ("archived",)
    assert box.text == "(withheld: github)" and box.status == "active"
    rows = _rows(old.path)
    assert ("meta", ("pins:[REDACTED:github]", json.dumps([pref.id]))) in rows
    assert any(t == "meta" and "use [REDACTED:stripe] for billing" in str(r) for t, r in rows)
    sources_raw = next(r for t, r in rows if t == "nodes" and r[0] == dec.id)
    assert "an old field [REDACTED:github]" in str(sources_raw)  # a key the reader drops, kept

    # The report counts, and holds no secret.
    assert report.archived == (leak.id,)
    assert report.kinds == {"aws-access-key": 2, "github": len(old.secrets) - 5, "stripe": 2}
    assert report.withheld == len(old.secrets) - 1  # the free-space one is in no row
    assert report.nodes == 6 and report.edges == 1 and report.meta == 2
    assert report.fields == len(report.changes) == report.to_polars().height
    shown = str(report) + report._html_() + json.dumps(report.to_json())
    shown += report.to_polars().write_csv() + repr(report)
    assert not [s for s in old.secrets if any(f in shown for f in _forms(s))]
    assert "archived" in str(report) and "compacted" in str(report)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scrubbed with today's rules: no warning
        Memory(old.path).close()


def test_a_second_scrub_changes_nothing(old: Old) -> None:
    with _quiet_open(old.path) as mem:
        first = mem.scrub()
        assert first.changed
        rev = mem.store.revision()
        before = _rows(old.path)
        again = mem.scrub()
        assert not again.changed and again.changes == () and again.archived == ()
        assert again.previous == REDACTION_RULES_VERSION and again.withheld == 0
        assert mem.store.revision() == rev  # not even the rules' mark was written again
        assert _rows(old.path) == before
        assert "0 fields" in str(again)


def test_a_dry_run_writes_nothing(old: Old) -> None:
    old.raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old.raw.close()
    wal = old.path.with_name(old.path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    before = old.path.read_bytes()
    with _quiet_open(old.path) as mem:
        report = mem.scrub(dry_run=True)
        assert report.dry_run and report.compacted is None
        assert report.changed and report.withheld == len(old.secrets) - 1
        assert report.archived and "dry run: nothing written" in str(report)
        assert "would change" in str(report)
        assert mem.redaction_rules is None
        assert mem.store.get(old.ids["leak"]).status == "active"  # type: ignore[union-attr]
    assert old.path.read_bytes() == before
    assert not wal.exists() or wal.stat().st_size == 0
    # and what it said is what a real scrub does
    with _quiet_open(old.path) as mem:
        real = mem.scrub()
    assert [(c.ref, c.field, dict(c.counts)) for c in real.changes] == [
        (c.ref, c.field, dict(c.counts)) for c in report.changes
    ]


def test_a_scrub_that_fails_midway_leaves_the_file_as_it_was(
    old: Old, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _rows(old.path)
    calls = {"n": 0}
    real = SQLiteStore.update

    def failing(self: SQLiteStore, *args: Any, **kw: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError("disk full (injected)")
        real(self, *args, **kw)

    monkeypatch.setattr(SQLiteStore, "update", failing)
    with _quiet_open(old.path) as mem:
        with pytest.raises(OSError, match="injected"):
            mem.scrub()
        assert calls["n"] == 4
        assert _rows(old.path) == before
        assert mem.redaction_rules is None
        assert mem.store.integrity_check() == ["ok"]
        monkeypatch.setattr(SQLiteStore, "update", real)
        assert mem.scrub().changed  # and it can be done afterwards
    old.raw.close()
    assert _leaks(old.path, old.secrets) == []


_KILLED = """
import os, signal, sys, warnings
from ctxsdk.memory import Memory, SQLiteStore
real = SQLiteStore.update
calls = [0]
def update(self, *args, **kw):
    calls[0] += 1
    if calls[0] == 5:  # halfway through the rewrite, the process dies
        os.kill(os.getpid(), signal.SIGKILL)
    real(self, *args, **kw)
SQLiteStore.update = update
warnings.simplefilter("ignore")
Memory(sys.argv[1]).scrub()
"""


def test_a_scrub_killed_midway_leaves_the_file_as_it_was(old: Old) -> None:
    before = _rows(old.path)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED), str(old.path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _rows(old.path) == before
    assert _integrity(old.path) == "ok"
    with _quiet_open(old.path) as mem:
        assert mem.redaction_rules is None
        assert mem.scrub().changed
    old.raw.close()
    assert _leaks(old.path, old.secrets) == []


# -- decisions ---------------------------------------------------------------------------------
def test_uris_stay_unique_and_meta_keys_that_meet_keep_the_newer(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory(path) as mem:
        a = mem.remember("Alpha", type="entity")
        b = mem.remember("Beta", type="entity")
        mem.store.set_meta("pins:[REDACTED:github]", ["written through the door"])
    one, two, three = _github(), _github(), _github()
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE nodes SET uri = ? WHERE id = ?", (f"ctx://entity/{one}", a.id))
        con.execute("UPDATE nodes SET uri = ? WHERE id = ?", (f"ctx://entity/{two}", b.id))
        con.execute("INSERT INTO meta VALUES (?, '[\"old\"]')", (f"pins:{three}",))
    con.close()
    with _quiet_open(path) as mem:
        report = mem.scrub()
        got_a, got_b = mem.store.get(a.id), mem.store.get(b.id)
        assert got_a and got_b
        assert got_a.uri == "ctx://entity/[REDACTED:github]"
        assert got_b.uri == f"ctx://entity/{b.id}"  # the redacted one was taken: its own
        assert mem.store.get_meta("pins:[REDACTED:github]") == ["written through the door"]
        notes = {(c.field, c.note) for c in report.changes}
        assert ("uri", "default uri") in notes and ("key", "key taken: old value dropped") in notes
    assert _leaks(path, [one, two, three]) == []


def test_a_memory_whose_text_was_only_credentials_is_archived(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory(path) as mem:
        gone = mem.remember("Use the staging key.")
        kept = mem.remember("Use the deploy key.", type="decision")
    con = sqlite3.connect(path)
    with con:
        token = _github()
        con.execute("UPDATE nodes SET name = ?, text = ? WHERE id = ?", (token, token, gone.id))
        con.execute("UPDATE nodes SET text = ? WHERE id = ?", (token, kept.id))  # name stays
    con.close()
    with _quiet_open(path) as mem:
        report = mem.scrub()
        assert report.archived == (gone.id,)
        assert mem.store.get(gone.id).status == "archived"  # type: ignore[union-attr]
        after = mem.store.get(kept.id)
        assert after and after.status == "active" and after.text == "[REDACTED:github]"
        assert all(h.node.id != gone.id for h in mem.find("staging key"))
        mem.restore(gone.id)  # archived, not deleted: a person can bring it back


def test_a_new_file_records_todays_rules_and_does_not_warn(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with Memory(tmp_path / "memory.db") as mem:
            assert mem.redaction_rules == REDACTION_RULES_VERSION
        with Memory(tmp_path / "memory.db") as mem, Memory() as blank:
            assert blank.redaction_rules == REDACTION_RULES_VERSION
    # older rules recorded: said with the version, once per open
    with Memory(tmp_path / "memory.db") as mem:
        mem.store.set_meta(RULES_KEY, {"rules": REDACTION_RULES_VERSION - 1})
    with pytest.warns(StaleRedactionWarning, match=f"rules v{REDACTION_RULES_VERSION - 1}") as w:
        Memory(tmp_path / "memory.db").close()
    assert [getattr(x.message, "rules", None) for x in w.list] == [REDACTION_RULES_VERSION - 1]
    # a store given nodes past the door before any Memory opened it records nothing
    store = SQLiteStore(tmp_path / "direct.db")
    store.put(Node(id="", type="entity", name="x"))
    with pytest.warns(StaleRedactionWarning):
        assert Memory(store).redaction_rules is None
    store.close()


def test_scrub_is_refused_inside_a_batch(tmp_path: Path) -> None:
    with Memory(tmp_path / "memory.db") as mem:
        with mem.store.batch(), pytest.raises(InvalidArgument, match="inside a batch"):
            mem.scrub()
        assert isinstance(mem.scrub(), ScrubReport)


def test_old_bytes_another_reader_keeps_alive_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    Memory(path).close()
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM nodes").fetchone()  # a read transaction held open
    try:
        with Memory(SQLiteStore(path, timeout=0.2)) as mem:
            report = mem.scrub()
        assert report.compacted is False and "not compacted" in str(report)
    finally:
        reader.close()


# -- the corpus --------------------------------------------------------------------------------
CASES = [c for c in positives() if c.secret and c.secret not in redact(c.text).text]


def test_scrub_withholds_the_corpus_from_every_column(tmp_path: Path) -> None:
    assert len(CASES) > 100
    path = tmp_path / "memory.db"
    with Memory(path) as mem:
        anchor = mem.remember("Anchor", type="entity")
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN")
    for i, case in enumerate(CASES):
        nid = f"nscrub{i:06d}"
        con.execute(
            "INSERT INTO nodes (id, type, name, text, aliases, uri, sources, until, fail, fix,"
            " created_at, updated_at, extra) VALUES (?, 'observation', ?, ?, ?, ?, ?, ?, ?, ?,"
            " '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?)",
            (
                nid,
                case.text,
                f"note: {case.text}\n(end)",
                json.dumps([case.text]),
                f"ctx://observation/scrub{i}",
                json.dumps([{"session": "s", "seq": i, "quote": case.text, "via": "rule"}]),
                case.text,
                case.text,
                case.text,
                json.dumps({"said": case.text, case.text: 1}),
            ),
        )
        con.execute("INSERT INTO edges VALUES (?, ?, 'about', 1.0, ?)", (nid, anchor.id, case.text))
        con.execute(
            "INSERT INTO meta VALUES (?, ?)", (f"k{i}:{case.text}", json.dumps([case.text]))
        )
    con.execute("COMMIT")
    con.close()
    found = [c.secret for c in CASES if c.secret]
    with _quiet_open(path) as mem:
        report = mem.scrub()
        assert report.compacted and mem.store.integrity_check() == ["ok"]
        texts = [n.text for n in mem.nodes("observation", include_archived=True)]
    assert _leaks(path, found) == []
    assert len(texts) == len(CASES)
    # the rest is kept (a key block cut off takes its line break with it)
    assert all(t.startswith("note: ") and t.endswith("(end)") for t in texts)
    assert report.withheld >= 9 * len(CASES)  # each case in at least nine places
    assert report.nodes == len(CASES)
    shown = str(report) + json.dumps(report.to_json()) + report.to_polars().write_csv()
    assert not [s for s in found if any(f in shown for f in _forms(s))]


# -- the command line --------------------------------------------------------------------------
def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "ctxsdk", "memory", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
    )


def test_cli_scrub(old: Old) -> None:
    old.raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old.raw.close()
    db = old.path
    shown = _cli(db, "show")
    assert shown.returncode == 0, shown.stderr
    (line,) = shown.stderr.splitlines()
    assert line.startswith("ctxsdk: warning: ") and "`ctxsdk memory DB scrub`" in line
    before = db.read_bytes()
    dry = _cli(db, "scrub", "--dry-run")
    assert dry.returncode == 0 and dry.stderr == "", dry.stderr
    assert "would change" in dry.stdout and "dry run: nothing written" in dry.stdout
    assert db.read_bytes() == before
    for bad, words in (
        (["scrub", "now"], "takes no arguments"),
        (["find", "x", "--dry-run"], "--dry-run is for `ctxsdk memory DB scrub`"),
    ):
        proc = _cli(db, *bad)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    done = _cli(db, "scrub")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "credentials withheld" in done.stdout and "compacted" in done.stdout
    assert _leaks(db, old.secrets) == []
    shown_out = done.stdout + dry.stdout
    assert not [s for s in old.secrets if any(f in shown_out for f in _forms(s))]
    again = _cli(db, "show")
    assert again.returncode == 0 and again.stderr == ""
