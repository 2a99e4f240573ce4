"""``ctxsdk memory``: ingest sessions into a memory (a file, or a namespace of a PostgreSQL
database), find, read, print the map, scrub credentials out of what it holds, copy it to
another store; set a PostgreSQL database up (``init``, ``namespace``); and the demo's memory
of the samples. A DSN's password is never printed: ``shown`` drops it."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..errors import InvalidArgument, NotFound, StaleRedactionWarning
from ._terminal import visible

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["cmd_memory", "demo_memory", "shown"]

DEMO_QUESTION = "which file did the xdist workers share?"
_SERVER_ACTIONS = ("init", "namespace")  # a PostgreSQL database's administration
_LINES_FROM = 2000  # rows: a copy at least this long prints progress lines off a terminal


def is_url(db: str) -> bool:
    """Whether ``db`` names a PostgreSQL database rather than a memory file."""
    return db.startswith(("postgresql://", "postgres://"))


def shown(db: str) -> str:
    """``db`` as output may show it: a ``postgresql://`` URL without its password (the user
    is kept) and without its query (which may hold one); a file path as given."""
    if not is_url(db):
        return db
    scheme, rest = db.split("://", 1)
    rest = rest.split("?", 1)[0].split("#", 1)[0]
    userinfo, at, hostpath = rest.rpartition("@")  # the last @: a password may hold one
    return f"{scheme}://{userinfo.split(':', 1)[0]}{at}{hostpath}"


def _check_args(args: argparse.Namespace) -> None:
    """Refuse arguments an action cannot take (``InvalidArgument``: exit 2, one line), before
    the memory file is opened or made."""
    action, given = args.action, args.args
    usage = f"ctxsdk memory DB {action}"
    _check_server_args(args)
    if action in ("show", "map", "export", "scrub", "init") and given:
        hint = " (give the budget as --budget N)" if action == "map" else ""
        raise InvalidArgument(f"{usage} takes no arguments, not {' '.join(given)!r}{hint}")
    if action == "ingest" and not given:
        raise InvalidArgument(f"{usage} SESSION...: name at least one session to ingest")
    if action == "read" and not given:
        raise InvalidArgument(f"{usage} ID...: name at least one node id to read")
    if action == "find":
        if not " ".join(given).strip():
            raise InvalidArgument(
                f"{usage} QUERY: QUERY is empty; search for an entity, a topic or a phrase"
            )
        if args.top_k is not None and not 1 <= args.top_k <= 100:
            raise InvalidArgument(f"--top-k is a number of hits from 1 to 100, not {args.top_k}")
    if action == "map" and args.budget < 0:
        raise InvalidArgument(f"--budget is a number of tokens >= 0, not {args.budget}")
    if args.dry_run and action != "scrub":  # it would write while the user expects it not to
        raise InvalidArgument(f"--dry-run is for `ctxsdk memory DB scrub`, not {action}")
    if action == "copy" and len(given) != 1:
        named = f", not {len(given)} ({' '.join(map(shown, given))})" if given else ""
        raise InvalidArgument(
            f"{usage} DST: name one destination, a memory file or a postgresql:// URL{named}"
        )
    if action == "namespace" and len(given) != 1:
        raise InvalidArgument(f"{usage} NAME: name one namespace to create")


def _check_server_args(args: argparse.Namespace) -> None:
    """The options and actions that belong to a PostgreSQL memory, or to one action."""
    action, url = args.action, is_url(args.db)
    if args.namespace is not None and not url:
        raise InvalidArgument(
            f"--namespace is for a PostgreSQL memory (a postgresql:// URL); {args.db} is a "
            "file, one namespace of its own"
        )
    if action in _SERVER_ACTIONS and not url:
        raise InvalidArgument(
            f"ctxsdk memory DB {action} sets up a PostgreSQL database: DB is a postgresql:// "
            f"URL, not the file {args.db}"
        )
    if action in _SERVER_ACTIONS and args.namespace is not None:
        hint = "; create one with `ctxsdk memory DB namespace NAME`" if action == "init" else ""
        raise InvalidArgument(f"--namespace is not for `ctxsdk memory DB {action}`{hint}")
    if args.to_namespace is not None and action != "copy":
        raise InvalidArgument(f"--to-namespace is for `ctxsdk memory DB copy DST`, not {action}")
    if args.to_namespace is not None and args.args and not is_url(args.args[0]):
        raise InvalidArgument(
            "--to-namespace is for a PostgreSQL destination (a postgresql:// URL); "
            f"{args.args[0]} is a file, one namespace of its own"
        )
    if args.role is not None and action != "namespace":
        raise InvalidArgument(
            f"--role is for `ctxsdk memory DB namespace NAME --role ROLE`, not {action}"
        )


def cmd_memory(args: argparse.Namespace) -> int:
    from ..memory import Memory
    from ._naming import open_session

    _check_args(args)
    if args.action in _SERVER_ACTIONS:
        return _administer(args)
    if args.action == "copy":
        return _copy(args)
    with warnings.catch_warnings():
        # said below in the command line's terms (and not at all by scrub, its remedy)
        warnings.simplefilter("ignore", StaleRedactionWarning)
        mem = Memory(args.db, namespace=args.namespace)
    with mem:
        _say_if_stale(mem, args)
        if args.action == "scrub":
            report = mem.scrub(dry_run=args.dry_run)
            print(visible(str(report), multiline=True))
            return 1 if report.compacted is False else 0
        if args.action == "ingest":
            for ref in args.args:
                s = open_session(ref, args.home, normalized=False)
                print(visible(str(mem.ingest(s, verbatim=args.verbatim)), multiline=True))
        elif args.action == "find":
            query = " ".join(args.args)
            result = mem.find(query, top_k=args.top_k)
            out = json.dumps(result.to_json(), ensure_ascii=False, indent=2)
            print(out if args.json else visible(str(result), multiline=True))
        elif args.action == "read":
            for ref in args.args:
                view = mem.read(ref)
                text = json.dumps(view.to_json(), ensure_ascii=False, indent=2)
                print(text if args.json else visible(str(view), multiline=True))
        elif args.action == "map":
            print(mem.map(args.budget).text)
        elif args.action == "episodes":
            _print_episodes(mem, args.args, as_json=args.json)
        elif args.action == "export":
            print(json.dumps(mem.export_json(), ensure_ascii=False, indent=2))
        else:  # "show"
            print(visible(repr(mem)))
    return 0


def _say_if_stale(mem: Memory, args: argparse.Namespace) -> None:
    """One line on stderr when the file's texts went through older redaction rules."""
    from ctxsdk.memory.kernel import stale

    why = None if args.action == "scrub" else stale(mem.redaction_rules)
    if why is not None:
        line = f"ctxsdk: warning: {shown(args.db)}: {why}; `ctxsdk memory DB scrub` applies them"
        print(visible(line), file=sys.stderr)


def _administer(args: argparse.Namespace) -> int:
    """``init``: create or migrate the schema; ``namespace NAME``: make one for a role."""
    from ..memory import PostgresStore

    where = shown(args.db)
    if args.action == "init":
        found = PostgresStore.init_schema(args.db)
        now = PostgresStore.init_schema(args.db)  # up to date now: this reads its version
        did = "created" if found == 0 else "up to date" if found == now else "migrated"
        was = f" (it was version {found})" if did == "migrated" else ""
        print(f"{where}: schema ctxsdk {did}, version {now}{was}")
        return 0
    name = args.args[0]
    PostgresStore.create_namespace(args.db, name, role=args.role)
    who = f"the members of role {args.role}" if args.role else "every role granted the tables"
    print(visible(f"{where}: namespace {name} is ready, for {who}"))
    return 0


def _copy(args: argparse.Namespace) -> int:
    """``copy DST``: every row of DB into an empty DST (a file or a PostgreSQL namespace)."""
    from ..memory import copy_memory
    from ..memory.kernel import open_store

    dst_db = args.args[0]
    try:
        src = open_store(args.db, namespace=args.namespace, create=False)
    except NotFound as exc:  # the store says create=False, a keyword the command line lacks
        why = str(exc.args[0] if exc.args else exc).replace(" (create=False)", "")
        raise NotFound(f"{why}: nothing to copy") from None
    try:
        dst = open_store(dst_db, namespace=args.to_namespace)
        try:
            report = copy_memory(src, dst, progress=_copy_progress(sys.stderr))
        finally:
            dst.close()
    finally:
        src.close()
    print(visible(str(report), multiline=True))
    return 0


def _copy_progress(stream: TextIO) -> Callable[[int, int, str], None] | None:
    """A bar on a terminal (``None``: the library's default); elsewhere, for a long copy, a
    line at each tenth of the rows, so a log shows it moving without a line per chunk."""
    if stream.isatty():
        return None
    said = -1

    def report(done: int, total: int, what: str) -> None:
        nonlocal said
        tenth = done * 10 // total if total else 10
        if total >= _LINES_FROM and tenth > said:
            said = tenth
            stream.write(f"ctxsdk: memory copy: {done:,} of {total:,} rows ({tenth * 10}%)\n")
            stream.flush()

    return report


def _print_episodes(mem: Memory, prefixes: list[str], *, as_json: bool) -> None:
    """The session map: each session's boxes in order, one line each (or JSON)."""
    from ..session.kernel import first_line, short_id

    boxes = [
        n
        for n in mem.episodes()
        if not prefixes or any(str(n.extra.get("session", "")).startswith(p) for p in prefixes)
    ]
    if as_json:
        print(json.dumps([n.to_json() for n in boxes], ensure_ascii=False, indent=2))
        return
    if not boxes:
        print("no episodes: ingest a session first")
    for n in boxes:
        sid, kind = short_id(str(n.extra.get("session", "")), width=12), n.extra.get("kind")
        print(
            visible(
                f"{sid:12} {kind:10} seq {n.extra.get('atSeq'):>5}  {n.name:12} "
                f"{first_line(n.text, 72)}"
            )
        )


def demo_memory() -> None:
    """Ingest the samples into a temporary memory (verbatim observations included), answer a
    question from it and print the session-start map."""
    from ctxsdk.session import Session

    from ..memory import Memory
    from ..samples import sample_paths

    print("== memory: the samples ingested into a temporary memory file")
    with (
        tempfile.TemporaryDirectory(prefix="ctxsdk-demo-memory-") as tmp,
        Memory(Path(tmp) / "memory.db") as mem,
    ):
        for path in sample_paths().values():
            report = mem.ingest(Session.open(path), verbatim=True)
            print(f"   {report._text_().splitlines()[0]}")
        print(f"   {mem!r}")
        print(f"   question: {DEMO_QUESTION}")
        for line in str(mem.find(DEMO_QUESTION, top_k=3)).splitlines():
            print(f"   {visible(line)[:160]}")
        print("   map:")
        for line in mem.map(200).text.splitlines():
            print(f"     {line}")
    print()
