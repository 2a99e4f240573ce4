"""``ctxsdk memory``: ingest sessions into a memory file, find, read, print the map, scrub
credentials out of what it holds; and the demo's memory of the samples."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidArgument, StaleRedactionWarning
from ._terminal import visible

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["cmd_memory", "demo_memory"]

DEMO_QUESTION = "which file did the xdist workers share?"


def _check_args(args: argparse.Namespace) -> None:
    """Refuse arguments an action cannot take (``InvalidArgument``: exit 2, one line), before
    the memory file is opened or made."""
    action, given = args.action, args.args
    usage = f"ctxsdk memory DB {action}"
    if action in ("show", "map", "export", "scrub") and given:
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


def cmd_memory(args: argparse.Namespace) -> int:
    from ..memory import Memory
    from ._naming import open_session

    _check_args(args)
    with warnings.catch_warnings():
        # said below in the command line's terms (and not at all by scrub, its remedy)
        warnings.simplefilter("ignore", StaleRedactionWarning)
        mem = Memory(args.db)
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
        line = f"ctxsdk: warning: {args.db}: {why}; `ctxsdk memory DB scrub` applies them"
        print(visible(line), file=sys.stderr)


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
