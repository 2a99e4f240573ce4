"""The commands that read sessions (``sessions``, ``show``, ``messages``, ``tokens``, ``demo``),
``import`` and ``bench``; a command line names a session as ``_naming`` reads it."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ctxsdk.session.kernel import gist

from ..errors import InvalidArgument
from ..session.importers import FORMATS
from ._naming import named_session
from ._terminal import cells, fit_cells, json_safe, plural, visible

if TYPE_CHECKING:
    from ctxsdk.session import Session

    from ..bench import BenchResult

__all__ = [
    "IMPORT_FORMATS",
    "MIN_ID_CHARS",
    "bench_exit_code",
    "cmd_bench",
    "cmd_demo",
    "cmd_import",
    "cmd_messages",
    "cmd_sessions",
    "cmd_show",
    "cmd_tokens",
    "conversation",
    "sessions_table",
    "short_ids",
]

IMPORT_FORMATS = FORMATS  # the importers' own list: one place to add a format
MIN_ID_CHARS = 8
"""``ctxsdk sessions`` shows each id by its shortest unique prefix, at least this long."""


# --- commands ------------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    from ctxsdk.session import Session

    from ..samples import sample_paths

    for name, path in sample_paths().items():
        s = Session.open(path)
        turns = s.turns()
        msgs = s.messages()
        est = s.tokens("estimate").total
        exact = s.tokens("cl100k_base").total
        print(f"== {name}: {visible(s.title or '(untitled)')}")
        lineage = ""
        if s.parent_id:
            kind = "fork" if s.is_fork else s.origin or "child"
            lineage = f", {kind} of {s.parent_id[:8]}"
        surface = s.surface()
        print(
            f"   {s.id[:8]}  v{s.version}  {plural(len(s), 'event')}  "
            f"{plural(len(turns), 'turn')}{lineage}  surface {plural(len(surface), 'node')} "
            f"({plural(surface.generation, 'replacement')})"
        )
        print(f"   tokens: {exact} cl100k_base, {est} estimated (chars/4)", end="")
        print(f", context window {s.context_window}" if s.context_window else "")
        shown = min(args.last, len(msgs))
        print(f"   last {shown} of {plural(len(msgs), 'message')} the model receives:")
        for m in msgs[-args.last :] if args.last > 0 else []:
            print(f"     {m.role:9} {visible(gist(m))}")
        if args.html:
            print(f"   page: {_demo_page(s, name, Path(args.html).expanduser())}")
        print()
    from ._fold import demo_fold

    demo_fold(Path(args.html).expanduser() if args.html else None)
    from ._merge import demo_merge

    demo_merge(Path(args.html).expanduser() if args.html else None)
    from ._memory import demo_memory

    demo_memory()
    return 0


def _demo_page(s: Session, name: str, out_dir: Path) -> Path:
    """One static page of ``s``: its context tree, composition and tokens per turn."""
    from .._display import page
    from ..assemble import Assembly
    from ..session import composition
    from ..session.kernel import turn_tokens

    results = [composition(s), turn_tokens(s), Assembly(s).tree()]
    title = f"{name}: {s.title or s.id}"
    note = f"session {s.id}, v{s.version}, {plural(len(s), 'event')}; rendered by ctxsdk demo"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page(title, results, note=note), encoding="utf-8")
    tmp.replace(path)  # a reader never sees half a page
    return path


def short_ids(ids: Sequence[str], minimum: int = MIN_ID_CHARS) -> dict[str, str]:
    """Each id by its shortest prefix (at least ``minimum`` characters) that no other id starts
    with, so that the prefix opens it; an id that is a prefix of another stays whole."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for i, sid in enumerate(ordered):
        common = 0
        for other in ordered[max(0, i - 1) : i] + ordered[i + 1 : i + 2]:
            n = 0
            while n < min(len(sid), len(other)) and sid[n] == other[n]:
                n += 1
            common = max(common, n)
        out[sid] = sid[: max(minimum, common + 1)]
    return out


def _reason(error: str, path: str | None) -> str:
    """An unreadable row's error with the reason first: its own path (the row shows where)
    dropped from the front."""
    if path and error.startswith(path):
        error = error[len(path) :].lstrip(" :,;")
    return error


_UNCUT = 10_000  # the width ``sessions`` fits to when its output is not a terminal


def sessions_table(rows: list[dict[str, Any]], all_ids: Sequence[str], width: int) -> list[str]:
    """The lines of ``ctxsdk sessions``: id (shortest unique prefix), events, updated, kind,
    title (or ``! error``), fitted to ``width`` columns; titles are cut with ``…``."""
    short = short_ids([*all_ids, *(r.get("parent") or "" for r in rows if r.get("parent"))])
    table: list[dict[str, str]] = []
    for r in rows:
        updated = r.get("updated") or r.get("created")
        parent = r.get("parent")
        kind = r.get("origin") or ("fork" if parent else "")
        if parent:
            kind = f"{kind} of {short.get(parent, parent[:MIN_ID_CHARS])}"
        if r.get("readable", True) is False or r.get("error"):
            title = "! " + _reason(str(r.get("error") or "unreadable"), r.get("path"))
        else:
            title = r.get("title") or "(untitled)"
        table.append(
            {
                "id": visible(short.get(r["id"], r["id"])),
                "events": "" if r.get("events") is None else str(r["events"]),
                "updated": updated.strftime("%Y-%m-%d %H:%M") if updated else "",
                "kind": visible(kind),
                "title": visible(title),
            }
        )
    heads = {"id": "id", "events": "events", "updated": "updated", "kind": "lineage"}
    widths = {k: max([len(h)] + [cells(t[k]) for t in table]) for k, h in heads.items()}
    keep = ["id", "events", "updated", "kind"]
    min_title = 30  # what a person picks a session by: narrow terminals drop lineage first
    # Drop the least needed columns until the title has room (the id always stays).
    while len(keep) > 1 and sum(widths[k] + 2 for k in keep) + min_title > width:
        keep.remove(next(k for k in ("kind", "updated", "events") if k in keep))
    room = max(min_title, width - sum(widths[k] + 2 for k in keep))
    right = {"events"}

    def line(row: dict[str, str]) -> str:
        parts = [
            row[k].rjust(widths[k]) if k in right else fit_cells(row[k], widths[k]) for k in keep
        ]
        return ("  ".join(parts) + "  " + fit_cells(row["title"], room)).rstrip()

    return [line({**heads, "title": "title"}), *(line(t) for t in table)]


def cmd_sessions(args: argparse.Namespace) -> int:
    from ctxsdk.session import Workspace

    df = Workspace(args.home).sessions(refresh=args.refresh)
    if args.json:
        print(json_safe(df.write_json()))
        return 0
    rows = df.head(args.limit).to_dicts() if args.limit >= 0 else df.to_dicts()
    # a terminal's width (or $COLUMNS); piped into a file or a pager, titles are not cut
    piped = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    width = _UNCUT if piped else shutil.get_terminal_size().columns
    for text in sessions_table(rows, df["id"].to_list(), width):
        print(text)
    unreadable = int((~df["readable"]).sum()) if len(df) else 0
    tail = f"{plural(len(df), 'session')}"
    if unreadable:
        tail += f", {unreadable} unreadable"
    if len(rows) < len(df):
        tail += f"; showing {len(rows)} (--limit N shows more)"
    print(f"({tail}; --json prints every column)")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    s = named_session(args)
    counts = s.tokens(args.tokenizer)
    by_seq = {r.seq: r.tokens for r in counts.rows}
    print(f"{visible(s.id)}  {visible(s.title or '(untitled)')}")
    lineage = f"  parent {visible(s.parent_id)}" if s.parent_id else ""
    print(
        f"v{s.version} {s.compression}  {plural(len(s), 'event')}  "
        f"{plural(len(s.turns()), 'turn')}{lineage}"
        + ("  INTERRUPTED (ends inside a turn)" if s.is_interrupted else "")
    )
    surface = s.surface()
    print(
        f"surface: {plural(len(surface), 'node')}, "
        f"{plural(surface.generation, 'replacement')}, "
        f"{plural(counts.total, 'token')} ({counts.tokenizer})"
    )
    for i, node in enumerate(surface):
        op = f"replaces {len(node.shadowed)}" if node.shadowed else ""
        tokens = by_seq.get(node.seq, 0)
        print(
            f"{i:4} {node.seq:6} {node.message.role:9} {tokens:6}  {op:12} "
            f"{visible(gist(node.message, args.width))}"
        )
    return 0


def cmd_messages(args: argparse.Namespace) -> int:
    s = named_session(args)
    if args.wire:
        print(json_safe(json.dumps(s.wire(args.wire), indent=2, ensure_ascii=False)))
    else:
        for m in s.messages():
            print(json_safe(json.dumps(m.to_json_dict(), ensure_ascii=False)))
    return 0


def cmd_tokens(args: argparse.Namespace) -> int:
    s = named_session(args)
    for name in args.tokenizer or ["cl100k_base", "o200k_base", "deepseek", "estimate"]:
        table = s.tokens(name)
        roles = "  ".join(f"{k} {v}" for k, v in sorted(table.by_role().items()))
        system = f"  (+{table.system} system)" if table.system else ""
        print(f"{name:12} {table.total:8}  {roles}{system}")
    return 0


def conversation(value: str) -> int | str:
    """``--conversation``: an index (``3``) or a LoCoMo sample id (``conv-26``)."""
    return int(value) if value.strip().isdigit() else value


def sizes(value: str) -> tuple[int, ...]:
    """``--scale-sizes``: positive whole numbers separated by commas (``6000,100000``;
    ``_`` allowed as in Python, ``6_000``)."""
    parts = [p.strip() for p in value.split(",") if p.strip()]
    try:
        got = tuple(int(p) for p in parts)
    except ValueError:
        got = ()
    if not got or min(got) < 1:
        raise argparse.ArgumentTypeError(
            f"{value!r}: sizes are positive whole numbers separated by commas, e.g. 6000,100000"
        )
    return got


def _import_source(args: argparse.Namespace) -> tuple[str, Path]:
    """``ctxsdk import``'s format and path: ``[FORMAT] PATH`` and ``--format``; a format not
    named is detected from the file's content."""
    from ..session.importers import detect_format

    source: list[str] = args.source
    if len(source) > 2:
        raise InvalidArgument(f"import takes one PATH (and an optional FORMAT), not {source!r}")
    named = args.import_format
    if len(source) == 2:
        if named is not None:
            raise InvalidArgument(
                f"give the format once: --format {named} or a FORMAT before PATH, not both"
            )
        named = source[0]
        if named not in IMPORT_FORMATS:
            raise InvalidArgument(
                f"unknown import format {named!r}: use one of {', '.join(IMPORT_FORMATS)} "
                "(or give only PATH to detect it)"
            )
    path = Path(source[-1]).expanduser()
    return (named if named is not None else detect_format(path)), path


def cmd_import(args: argparse.Namespace) -> int:
    from ctxsdk.session import Session, Workspace

    if args.output and args.home:
        raise InvalidArgument("give -o FILE|DIR or --home DIR, not both")
    if not args.output and not args.home:
        raise InvalidArgument(
            "say where to write the session: -o FILE|DIR, or --home DIR to place it in a DSH home"
        )
    fmt, path = _import_source(args)
    if args.conversation is not None and fmt != "locomo":
        raise InvalidArgument(f"--conversation applies to locomo imports only, not {fmt}")
    options: dict[str, Any] = {}
    if args.max_bytes is not None:
        options["max_bytes"] = args.max_bytes
    if fmt == "locomo":
        options["conversation"] = 0 if args.conversation is None else args.conversation
    s = Session.open_any(path, format=fmt, **options)  # "dsh": read (a copy is written below)
    if args.output:
        out = s.save(Path(args.output).expanduser(), overwrite=args.force)
    else:  # the home's canonical place: <home>/sessions/<projectKey(cwd)>/<id>/session.v3...
        placed = Workspace(args.home).add(s, overwrite=args.force)
        assert placed.path is not None
        out = placed.path
    with contextlib.suppress(ValueError):  # shown relative to here when it is below here
        out = out.absolute().relative_to(Path.cwd())
    print(f"imported {plural(len(s.messages()), 'message')} ({plural(len(s), 'event')}) -> {out}")
    if not args.output:
        print(f"open it with: ctxsdk --home {args.home} show {s.id[:MIN_ID_CHARS]}")
    return 0


def _stage_lines(name: str, stream: TextIO) -> Callable[[int, int, str], None]:
    """Progress for a log, not a terminal: one line per stage (and when it is done)."""
    t0 = time.perf_counter()
    seen: dict[str, bool] = {}

    def report(done: int, total: int, what: str) -> None:
        finished = total > 0 and done >= total
        if what not in seen or (finished and not seen[what]):
            seen[what] = finished
            state = "done" if finished else f"{done}/{total}"
            stream.write(f"bench {name}: {what} ({state}, {time.perf_counter() - t0:.1f}s)\n")
            stream.flush()

    return report


def bench_exit_code(result: BenchResult, strict: bool) -> int:
    """0, or 1 when ``strict`` and a target was missed."""
    return 1 if strict and not result.all_met else 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ..bench import BENCHMARKS, run_benchmark

    known = args.name in BENCHMARKS  # an unknown name: run_benchmark says which are known
    progress = None if sys.stderr.isatty() or not known else _stage_lines(args.name, sys.stderr)
    if progress is not None:  # off a terminal there is no bar: say what runs, stage by stage
        run = "a quick run" if args.quick else "a full run"
        if args.store:
            run += f" on --store {args.store}"
        if args.scale_sizes:
            run += f", find timed at {','.join(map(str, args.scale_sizes))} nodes"
        stages = progress
        said: list[bool] = []

        def progress(done: int, total: int, what: str) -> None:
            if not said:  # at the first stage: a refused option prints its error alone
                said.append(True)
                print(f"bench {args.name}: {run} (progress: a line per stage)", file=sys.stderr)
            stages(done, total, what)

    # an option is passed only when given: a benchmark without it refuses it by name
    options: dict[str, object] = {"store": args.store} if args.store else {}
    if args.scale_sizes:
        options["scale_sizes"] = args.scale_sizes
    result = run_benchmark(args.name, quick=args.quick, progress=progress, **options)
    print(result.table())
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    missed = [t for t, ok in result.met.items() if not ok]
    if missed and args.strict:
        print(
            f"ctxsdk: bench {args.name}: {plural(len(missed), 'target')} missed: "
            + "; ".join(missed),
            file=sys.stderr,
        )
    return bench_exit_code(result, args.strict)
