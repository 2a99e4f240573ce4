"""``ctxsdk.testing.LocalPostgres``: a real PostgreSQL server that tests, benchmarks and
notebooks start and stop themselves.

Every test runs real servers (initdb, pg_ctl, postgres) and talks to them through psycopg:
they start on free loopback ports, answer, survive a restart, stop without leaving a process
or a directory behind, and never show a password. Without a PostgreSQL server on the machine
the ``postgres_server`` fixture skips (fails under ``CI=true``); the tests that start servers
of their own skip the same way.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from ctxsdk.errors import CtxError, DataMissing, ServerError
from ctxsdk.testing import LocalPostgres, _postgres, local_postgres, postgres_unavailable

WAIT = 60.0  # seconds a process exit may take to show before the test gives up


@pytest.fixture(autouse=True)
def _needs_a_server(postgres_server: LocalPostgres) -> None:
    """Every test here needs PostgreSQL; the session fixture skips (or fails on CI) without."""


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (the postmaster's background processes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    """True once ``os.kill(pid, 0)`` finds no process. An exited server is reaped by init
    (pg_ctl, its parent, is gone), which may take a moment: wait for it, within ``WAIT``."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_the_session_server_answers_select_1(postgres_server: LocalPostgres) -> None:
    with psycopg.connect(postgres_server.dsn()) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        row = conn.execute("select current_user, current_setting('fsync')").fetchone()
        assert row == ("ctxsdk", "off")
        addr = conn.execute("select inet_server_addr()::text").fetchone()
        assert addr is not None and addr[0].startswith("127.0.0.1")
    assert postgres_server.host == "127.0.0.1"


def test_each_test_gets_a_fresh_database_where_pg_trgm_can_be_created(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn) as conn:
        (name,) = conn.execute("select current_database()").fetchone() or ("",)
        assert name.startswith("test_")
        assert conn.execute("select count(*) from pg_class where relname = 't'").fetchone() == (0,)
        conn.execute("create extension pg_trgm")
        conn.execute("create table t (body text)")
        conn.execute("insert into t values ('PARSE-7741 failed'), ('all green')")
        hits = conn.execute("select body from t where body % 'PARSE-7741'").fetchall()
        assert hits == [("PARSE-7741 failed",)]


def test_room_for_16_writers_and_a_pool(postgres_dsn: str) -> None:
    writers = [psycopg.connect(postgres_dsn) for _ in range(16)]
    try:
        with ConnectionPool(postgres_dsn, min_size=10, max_size=10, open=True) as pool:
            pool.wait()
            with pool.connection() as conn:
                busy = conn.execute(
                    "select count(*) from pg_stat_activity where datname = current_database()"
                )
                (count,) = busy.fetchone() or (0,)
                assert count >= 26
    finally:
        for conn in writers:
            conn.close()


def test_two_servers_at_once_get_their_own_port_and_directory() -> None:
    with local_postgres() as one, local_postgres() as two:
        assert one.port != two.port
        assert one.data_dir != two.data_dir
        assert one.pid != two.pid
        for server in (one, two):
            with psycopg.connect(server.dsn()) as conn:
                assert conn.execute("show port").fetchone() == (str(server.port),)
                assert conn.execute("show data_directory").fetchone() == (str(server.data_dir),)


def test_stop_leaves_no_process_and_no_directory_and_stops_once() -> None:
    server = LocalPostgres().start()
    pid = server.pid
    assert pid is not None
    children = _children(pid)
    assert children  # checkpointer, walwriter, ... run beside the postmaster
    root = server.data_dir.parent
    assert root.is_dir()
    server.stop()
    assert all(_gone(p) for p in [pid, *children])
    assert not root.exists()
    assert server.pid is None and repr(server) == "LocalPostgres(stopped)"
    server.stop()  # a second stop is a no-op
    with pytest.raises(ServerError, match="not running"):
        server.dsn()


def test_a_server_that_does_not_stop_is_killed() -> None:
    server = LocalPostgres(timeout=2).start()
    pid = server.pid
    assert pid is not None
    root = server.data_dir.parent
    os.kill(pid, signal.SIGSTOP)  # it can no longer answer pg_ctl's stop request
    try:
        server.stop()
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)
    assert _gone(pid)
    assert not root.exists()


def test_a_server_left_running_is_stopped_at_exit() -> None:
    code = (
        "from ctxsdk.testing import LocalPostgres\n"
        "pg = LocalPostgres().start()\n"
        "print(pg.pid, pg.data_dir.parent, flush=True)\n"
        "raise SystemExit(3)  # no stop(): atexit must do it\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    pid, root = done.stdout.split()
    assert _gone(int(pid))
    assert not Path(root).exists()


def test_restart_keeps_the_port_and_committed_rows() -> None:
    with local_postgres() as server:
        dsn = server.create_database("kept")
        with psycopg.connect(dsn) as conn:
            conn.execute("create table t (n int)")
            conn.execute("insert into t values (7)")
        port, pid = server.port, server.pid
        open_conn = psycopg.connect(dsn)
        server.restart()
        assert server.port == port and server.pid != pid
        with pytest.raises(psycopg.OperationalError):  # a fast restart cuts open sessions
            open_conn.execute("select 1")
        open_conn.close()
        with psycopg.connect(dsn) as conn:
            assert conn.execute("select n from t").fetchall() == [(7,)]


def test_drop_database_cuts_its_sessions(postgres_server: LocalPostgres) -> None:
    dsn = postgres_server.create_database("dropped")
    conn = psycopg.connect(dsn)
    postgres_server.drop_database("dropped")
    with pytest.raises(psycopg.OperationalError):
        conn.execute("select 1")
    conn.close()
    with pytest.raises(psycopg.OperationalError, match="does not exist"):
        psycopg.connect(dsn)
    postgres_server.drop_database("dropped")  # gone already: nothing to do


def test_no_password_in_a_repr_or_a_failed_start(postgres_server: LocalPostgres) -> None:
    secret = "s3cr3t-Pa55:/@word"
    dsn = postgres_server.create_database("team")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"create role writer login password '{secret}'")
    team = postgres_server.dsn(user="writer", dbname="team", password=secret)
    assert "s3cr3t-Pa55%3A%2F%40word" in team  # quoted in the URL, and it connects
    with psycopg.connect(team) as conn:
        assert conn.execute("select current_user").fetchone() == ("writer",)
    assert secret not in repr(postgres_server) and "s3cr3t" not in str(postgres_server)
    broken = LocalPostgres(settings={"max_connections": "many"})
    with pytest.raises(ServerError) as failed:
        broken.start()
    message = str(failed.value)
    assert "pg_ctl start failed" in message
    assert 'invalid value for parameter "max_connections": "many"' in message  # the log tail
    assert "s3cr3t" not in message
    assert repr(broken) == "LocalPostgres(stopped)"  # its directory is gone
    assert not Path(message.split("data_dir='", 1)[1].split("'", 1)[0]).exists()
    postgres_server.drop_database("team")


def test_a_taken_port_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process may bind the free port between the probe and the server's start."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ports = iter([taken, _postgres._free_port()])
        monkeypatch.setattr(_postgres, "_free_port", lambda: next(ports))
        with local_postgres() as server:
            assert server.port != taken
            with psycopg.connect(server.dsn()) as conn:
                assert conn.execute("select 1").fetchone() == (1,)


def test_no_server_program_is_data_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert postgres_unavailable() is None  # this machine has one (the fixture started it)
    monkeypatch.setattr(_postgres, "_bin_dir", lambda: None)
    monkeypatch.setenv("PATH", "")
    reason = postgres_unavailable()
    assert (
        reason == "no PostgreSQL server here (initdb not found; Debian: apt-get install postgresql)"
    )
    with pytest.raises(DataMissing) as missing:
        LocalPostgres().start()
    assert str(missing.value) == reason
    assert isinstance(missing.value, CtxError) and isinstance(missing.value, FileNotFoundError)
