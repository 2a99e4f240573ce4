"""A throwaway PostgreSQL server on loopback, for tests, benchmarks and notebooks.

``LocalPostgres`` runs ``initdb`` in a fresh temporary directory and ``pg_ctl`` on a free
port of 127.0.0.1, with trust authentication and no durability (fsync off): a server to
use and throw away, never one to keep data in::

    with local_postgres() as pg:
        conn = psycopg.connect(pg.dsn())
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

from ctxsdk.errors import DataMissing, ServerError

__all__ = ["LocalPostgres", "local_postgres", "postgres_unavailable"]

_INSTALL = "Debian: apt-get install postgresql"
_SUPERUSER = "ctxsdk"
_HOST = "127.0.0.1"
_QUOTE = str.maketrans({"'": "''"})  # a quote inside a quoted conf value is doubled
_PORT_CLASH = re.compile(r"could not bind|Address already in use|could not create any TCP")
# A throwaway test server: durability costs time and protects nothing worth keeping.
# max_connections leaves room for 16 writer processes and a pool beside them.
_SETTINGS: dict[str, str] = {
    "listen_addresses": _HOST,
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "100",
}


def _bin_dir() -> Path | None:
    """The directory holding both ``initdb`` and ``pg_ctl``: PATH first (symlinks resolved,
    so the two come from one installation), then the newest ``/usr/lib/postgresql/*/bin``."""
    on_path = [Path(p).resolve().parent for t in ("initdb", "pg_ctl") if (p := shutil.which(t))]
    versions = Path("/usr/lib/postgresql").glob("*/bin")
    newest = sorted(versions, key=lambda d: [int(n) for n in re.findall(r"\d+", d.parent.name)])
    for directory in [*on_path, *reversed(newest)]:
        if all(os.access(directory / tool, os.X_OK) for tool in ("initdb", "pg_ctl")):
            return directory
    return None


def postgres_unavailable() -> str | None:
    """Why no local PostgreSQL server can be started here, or ``None`` when one can."""
    if _bin_dir() is None:
        missing = "initdb" if shutil.which("initdb") is None else "pg_ctl"
        return f"no PostgreSQL server here ({missing} not found; {_INSTALL})"
    if _as_root():
        import pwd  # POSIX only, like the servers this module runs

        if shutil.which("runuser") is None:
            return "running as root, and initdb refuses root: runuser (util-linux) not found"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and initdb refuses root: no 'postgres' user to run it as"
    return None


class LocalPostgres:
    """A PostgreSQL server in its own temporary directory on a free port of 127.0.0.1.

    Superuser ``ctxsdk``, trust authentication on loopback only, UTF8 with the C.UTF-8
    locale. ``start()`` makes and starts it; ``stop()`` stops it and removes the directory
    (also at interpreter exit). ``settings`` adds or overrides server settings."""

    def __init__(self, *, settings: Mapping[str, str] | None = None, timeout: float = 60) -> None:
        self._settings = {**_SETTINGS, **(settings or {})}
        self._timeout = timeout
        self._dir: Path | None = None
        self._port: int | None = None
        self._bin = Path()

    def __repr__(self) -> str:
        if self._dir is None:
            return "LocalPostgres(stopped)"
        return f"LocalPostgres(port={self._port}, data_dir='{self.data_dir}')"

    @property
    def host(self) -> str:
        return _HOST

    @property
    def port(self) -> int:
        if self._port is None:
            raise ServerError("this LocalPostgres is not running: call start() first")
        return self._port

    @property
    def data_dir(self) -> Path:
        if self._dir is None:
            raise ServerError("this LocalPostgres is not running: call start() first")
        return self._dir / "data"

    @property
    def pid(self) -> int | None:
        """The postmaster's pid (first line of ``postmaster.pid``); ``None`` when stopped."""
        if self._dir is None:
            return None
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def dsn(
        self, user: str = _SUPERUSER, dbname: str = "postgres", password: str | None = None
    ) -> str:
        """A ``postgresql://`` URL for this server (a password is put in it, never kept)."""
        auth = quote(user, safe="") + ("" if password is None else ":" + quote(password, safe=""))
        return f"postgresql://{auth}@{_HOST}:{self.port}/{quote(dbname, safe='')}"

    def create_database(self, name: str) -> str:
        """Create database ``name``, owned by ``ctxsdk``; returns its DSN."""
        self._client("createdb", name)
        return self.dsn(dbname=name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name`` if it exists, cutting the sessions still connected to it."""
        self._client("dropdb", "--if-exists", "--force", name)

    def start(self) -> LocalPostgres:
        """Make the data directory and start the server; a no-op when it runs already."""
        if self._dir is not None:
            return self
        reason = postgres_unavailable()
        if reason is not None:
            raise DataMissing(reason)
        self._bin = _bin_dir() or self._bin
        self._dir = Path(tempfile.mkdtemp(prefix="ctxsdk-pg-"))
        atexit.register(self.stop)
        try:
            if _as_root():  # initdb refuses root: the server runs as the postgres user
                shutil.chown(self._dir, user="postgres")
            args = ["-D", str(self.data_dir), "-U", _SUPERUSER, "--auth=trust", "-E", "UTF8"]
            self._run("initdb", *args, "--locale=C.UTF-8", "-N")
            for attempt in range(5):  # another process may take the free port before we bind
                self._configure(_free_port())
                try:
                    self._run("pg_ctl", *self._ctl_args(), "-l", str(self._log), "start")
                    break
                except ServerError:
                    if attempt == 4 or not _PORT_CLASH.search(self._log_tail()):
                        raise
        except BaseException:
            self.stop()
            raise
        return self

    def restart(self) -> None:
        """Stop (fast: open sessions are cut) and start again, on the same port and data."""
        self._run("pg_ctl", *self._ctl_args(), "-m", "fast", "-l", str(self._log), "restart")

    def stop(self) -> None:
        """Stop the server (fast; SIGKILL if it lingers) and remove its directory; idempotent."""
        if self._dir is None:
            return
        atexit.unregister(self.stop)
        pid = self.pid
        if pid is not None:
            try:
                self._run("pg_ctl", *self._ctl_args(), "-m", "fast", "stop")
                stopped = True
            except (ServerError, subprocess.TimeoutExpired):
                stopped = False
            # pg_ctl returns once postmaster.pid is gone, a moment before the process exits;
            # a server that did not stop (hung, or stopped by a signal) is killed, if that pid
            # is still this server's postmaster (a stale pid file's pid may be another's now)
            if not (stopped and _exited(pid, within=5)) and self._owns(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                _exited(pid, within=self._timeout)
        shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = self._port = None

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def _log(self) -> Path:
        assert self._dir is not None
        return self._dir / "server.log"

    def _configure(self, port: int) -> None:
        """The settings go in an included conf file (no shell quoting of ``pg_ctl -o``), so a
        restart keeps the port; the socket directory is the server's own temp dir."""
        assert self._dir is not None
        self._port = port
        values = {**self._settings, "port": str(port), "unix_socket_directories": str(self._dir)}
        conf = self.data_dir / "ctxsdk.conf"
        conf.write_text("".join(f"{k} = '{v.translate(_QUOTE)}'\n" for k, v in values.items()))
        main = self.data_dir / "postgresql.conf"
        if "include 'ctxsdk.conf'" not in main.read_text():
            with main.open("a") as out:
                out.write("\ninclude 'ctxsdk.conf'\n")
        if _as_root():
            shutil.chown(conf, user="postgres")

    def _owns(self, pid: int) -> bool:
        try:
            return str(self.data_dir).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            return _alive(pid) and not Path("/proc/self").exists()  # no /proc: trust the pid
        except OSError:
            return False

    def _ctl_args(self) -> list[str]:
        return ["-D", str(self.data_dir), "-w", "-t", str(int(self._timeout))]

    def _tool(self, name: str) -> Path:
        if os.access(self._bin / name, os.X_OK):
            return self._bin / name
        found = shutil.which(name)
        if found is None:
            raise DataMissing(f"no {name} next to initdb or on PATH ({_INSTALL})")
        return Path(found)

    def _client(self, tool: str, *args: str) -> None:
        """Run a client program (createdb, dropdb) as this user, over TCP as ``ctxsdk``."""
        where = ["-h", _HOST, "-p", str(self.port), "-U", _SUPERUSER, "-w"]
        command = [str(self._tool(tool)), *where, *args[:-1], "--", args[-1]]
        done = subprocess.run(command, capture_output=True, text=True, env=_env())
        if done.returncode != 0:
            raise ServerError(f"{tool} {args[-1]!r} failed on {self!r}: {done.stderr.strip()}")

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self._tool(tool)), *args]
        if _as_root():  # initdb refuses root, and pg_ctl must run as the data's owner
            command = ["runuser", "-u", "postgres", "--", *command]
        limit = self._timeout + 30  # pg_ctl's own -t gives up first
        done = subprocess.run(
            command, capture_output=True, text=True, env=_env(), cwd=self._dir, timeout=limit
        )
        if done.returncode != 0:
            action = "initdb" if tool == "initdb" else f"pg_ctl {args[-1]}"
            said = " / ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            log = f"\nthe server log ends:\n{self._log_tail()}" if self._log.exists() else ""
            raise ServerError(f"{action} failed for {self!r}: {said}{log}")

    def _log_tail(self, lines: int = 15) -> str:
        try:
            text = self._log.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.strip().splitlines()[-lines:]) or "(empty server log)"


@contextlib.contextmanager
def local_postgres(
    *, settings: Mapping[str, str] | None = None, timeout: float = 60
) -> Iterator[LocalPostgres]:
    """A started ``LocalPostgres`` for the ``with`` block, stopped and removed after it."""
    with LocalPostgres(settings=settings, timeout=timeout) as server:
        yield server


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie has exited: its parent (init, once pg_ctl is gone) reaps it in its own time
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def _exited(pid: int, *, within: float) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _env() -> dict[str, str]:
    """This environment without PG* variables, which would override the explicit options."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PG")}
