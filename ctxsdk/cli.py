"""``ctxsdk`` / ``python -m ctxsdk``: the command line.

Errors print one clear line to stderr and exit non-zero.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from .errors import CtxError

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from .samples import sample_paths
    from .session.session import Session

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
            body = m.text
            if m.tool_calls:
                body = (
                    (body + " " if body else "")
                    + "-> "
                    + ", ".join(f"{c.name}({c.arguments})" for c in m.tool_calls)
                )
            if m.tool_results:
                r = m.tool_results[0]
                body = ("error: " if r.is_error else "result: ") + r.text
            line = " ".join(body.split())
            print(f"     {m.role:9} {textwrap.shorten(line, 96, placeholder=' ...')}")
        print()
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .bench import run_benchmark

    result = run_benchmark(args.name, quick=args.quick)
    print(result.table())
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0 if result.all_met or not args.strict else 1


def _messages(args: argparse.Namespace) -> int:
    from .session.session import Session

    s = Session.open(args.path)
    if args.wire:
        print(json.dumps(s.wire(args.wire), indent=2, ensure_ascii=False))
    else:
        for m in s.messages():
            print(json.dumps(m.to_json_dict(), ensure_ascii=False))
    return 0


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxsdk", description="See and shape what an agent's model receives."
    )
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser(
        "demo", help="open the bundled sample sessions and show what the model receives"
    )
    d.add_argument("--last", type=int, default=4, help="how many trailing messages to show")
    d.set_defaults(fn=_demo)
    b = sub.add_parser("bench", help="run a benchmark (table to stdout, optional JSON)")
    b.add_argument("name")
    b.add_argument("--quick", action="store_true", help="a smaller run, under a minute")
    b.add_argument("--json", metavar="PATH", help="write the result as JSON")
    b.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    b.set_defaults(fn=_bench)
    m = sub.add_parser("messages", help="print the derived messages of a session file")
    m.add_argument("path")
    m.add_argument("--wire", choices=("openai", "deepseek"), help="print provider wire JSON")
    m.set_defaults(fn=_messages)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        code: int = args.fn(args)
    except (CtxError, KeyError, OSError) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"ctxsdk: error: {msg}", file=sys.stderr)
        return 2
    return code
