"""``ctxsdk`` / ``python -m ctxsdk``: the command line.

Sessions are named by a file or directory path, or by a unique id prefix in the DSH home
(``--home``, else ``$DSH_HOME`` or ``~/.dsh``). Errors print one clear line to stderr and exit
with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CtxError, WriteError
from .session._text import gist

if TYPE_CHECKING:
    from .session._session import Session

__all__ = ["main"]

IMPORT_FORMATS = ("openai", "anthropic", "claude-code", "swe-agent", "locomo")


def _session(ref: str, home: str | None) -> Session:
    """A path if it exists, else a unique id prefix in the DSH home."""
    from .session._session import Session

    p = Path(ref).expanduser()
    if p.exists():
        return Session.open(p)
    from .session._workspace import Workspace

    return Workspace(home).open(ref)


def _demo(args: argparse.Namespace) -> int:
    from .samples import sample_paths
    from .session._session import Session

    for name, path in sample_paths().items():
        s = Session.open(path)
        turns = s.turns()
        msgs = s.messages()
        est = s.tokens("estimate").total
        exact = s.tokens("cl100k_base").total
        print(f"== {name}: {s.title or '(untitled)'}")
        lineage = ""
        if s.parent_id:
            kind = "fork" if s.is_fork else s.origin or "child"
            lineage = f", {kind} of {s.parent_id[:8]}"
        print(
            f"   {s.id[:8]}  v{s.version}  {len(s)} events  {len(turns)} turns{lineage}  "
            f"surface {len(s.surface())} nodes ({s.surface().generation} replacements)"
        )
        print(f"   tokens: {exact} cl100k_base, {est} estimated (chars/4)", end="")
        print(f", context window {s.context_window}" if s.context_window else "")
        print(f"   last {min(args.last, len(msgs))} of {len(msgs)} messages the model receives:")
        for m in msgs[-args.last :]:
            print(f"     {m.role:9} {gist(m)}")
        print()
    return 0


def _sessions(args: argparse.Namespace) -> int:
    import polars as pl

    from .session._workspace import Workspace

    df = Workspace(args.home).sessions(refresh=args.refresh)
    if args.json:
        print(df.write_json())
        return 0
    cols = ["id", "title", "events", "updated", "parent", "origin", "version", "error"]
    shown = df.select([c for c in cols if c in df.columns]).with_columns(
        pl.col("id").str.slice(0, 8)
    )
    with pl.Config(tbl_rows=args.limit, tbl_width_chars=160, fmt_str_lengths=40):
        print(shown.head(args.limit))
    return 0


def _show(args: argparse.Namespace) -> int:
    s = _session(args.session, args.home)
    counts = s.tokens(args.tokenizer)
    by_seq = {r.seq: r.tokens for r in counts.rows}
    print(f"{s.id}  {s.title or '(untitled)'}")
    lineage = f"  parent {s.parent_id}" if s.parent_id else ""
    print(
        f"v{s.version} {s.compression}  {len(s)} events  {len(s.turns())} turns{lineage}"
        + ("  INTERRUPTED (ends inside a turn)" if s.is_interrupted else "")
    )
    surface = s.surface()
    print(
        f"surface: {len(surface)} nodes, {surface.generation} replacements, "
        f"{counts.total} tokens ({counts.tokenizer})"
    )
    for i, node in enumerate(surface):
        op = f"replaces {len(node.shadowed)}" if node.shadowed else ""
        tokens = by_seq.get(node.seq, 0)
        print(
            f"{i:4} {node.seq:6} {node.message.role:9} {tokens:6}  {op:12} "
            f"{gist(node.message, args.width)}"
        )
    return 0


def _messages(args: argparse.Namespace) -> int:
    s = _session(args.session, args.home)
    if args.wire:
        print(json.dumps(s.wire(args.wire), indent=2, ensure_ascii=False))
    else:
        for m in s.messages():
            print(json.dumps(m.to_json_dict(), ensure_ascii=False))
    return 0


def _tokens(args: argparse.Namespace) -> int:
    s = _session(args.session, args.home)
    for name in args.tokenizer or ["cl100k_base", "o200k_base", "deepseek", "estimate"]:
        table = s.tokens(name)
        roles = "  ".join(f"{k} {v}" for k, v in sorted(table.by_role().items()))
        system = f"  (+{table.system} system)" if table.system else ""
        print(f"{name:12} {table.total:8}  {roles}{system}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from .session.importers import import_file

    options: dict[str, Any] = {}
    if args.format == "locomo":
        options["conversation"] = args.conversation
    s = import_file(args.format, Path(args.path).expanduser(), **options)
    try:
        out = s.save(Path(args.output).expanduser(), overwrite=args.force)
    except FileExistsError as exc:  # WriteError(EEXIST): say it in the CLI's terms
        raise WriteError(exc.errno, f"{exc.filename or args.output} exists; pass --force") from None
    print(f"imported {len(s.messages())} messages ({len(s)} events) -> {out}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .bench import run_benchmark

    result = run_benchmark(args.name, quick=args.quick)
    print(result.table())
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0 if result.all_met or not args.strict else 1


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxsdk", description="See and shape what an LLM agent's model receives."
    )
    p.add_argument("--home", help="DSH home (default: $DSH_HOME or ~/.dsh)")
    sub = p.add_subparsers(dest="command", required=True)

    def session_arg(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("session", help="a session file or directory, or a unique id prefix")

    c = sub.add_parser("sessions", help="list the sessions of a DSH home")
    c.add_argument("--refresh", action="store_true", help="ignore the index cache")
    c.add_argument("--json", action="store_true", help="print the table as JSON")
    c.add_argument("--limit", type=int, default=50)
    c.set_defaults(fn=_sessions)

    c = sub.add_parser("show", help="a readable summary of a session's surface")
    session_arg(c)
    c.add_argument("--tokenizer", default="cl100k_base")
    c.add_argument("--width", type=int, default=80, help="characters per message gist")
    c.set_defaults(fn=_show)

    c = sub.add_parser("messages", help="the derived messages, as JSON lines or wire JSON")
    session_arg(c)
    c.add_argument("--wire", choices=("openai", "deepseek"), help="print provider wire JSON")
    c.set_defaults(fn=_messages)

    c = sub.add_parser("tokens", help="token counts of what the model receives")
    session_arg(c)
    c.add_argument("--tokenizer", action="append", help="repeatable; default: all four")
    c.set_defaults(fn=_tokens)

    c = sub.add_parser("import", help="import a foreign agent log as a DSH v3 session")
    c.add_argument("format", choices=IMPORT_FORMATS)
    c.add_argument("path")
    c.add_argument("-o", "--output", required=True, help="file or directory to write")
    c.add_argument("--conversation", type=int, default=0, help="LoCoMo conversation index")
    c.add_argument("--force", action="store_true", help="replace an existing output file")
    c.set_defaults(fn=_import)

    c = sub.add_parser("bench", help="run a benchmark (table to stdout, optional JSON)")
    c.add_argument("name")
    c.add_argument("--quick", action="store_true", help="a smaller run, under a minute")
    c.add_argument("--json", metavar="PATH", help="write the result as JSON")
    c.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    c.set_defaults(fn=_bench)

    c = sub.add_parser("demo", help="open the bundled sample sessions, show what the model gets")
    c.add_argument("--last", type=int, default=4, help="how many trailing messages to show")
    c.set_defaults(fn=_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        code: int = args.fn(args)
    except BrokenPipeError:  # e.g. `ctxsdk show ... | head`: the reader left, not an error
        sys.stderr.close()
        return 0
    except (CtxError, KeyError, OSError, ValueError) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(
            f"ctxsdk: error: {msg.splitlines()[0] if msg else type(exc).__name__}", file=sys.stderr
        )
        return 2
    return code
