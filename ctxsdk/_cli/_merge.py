"""``ctxsdk merge``: merge the beliefs of several sessions and print the block; and the demo's
merge of two sample sessions."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import InvalidArgument
from ._terminal import visible

__all__ = ["cmd_merge", "demo_merge"]


def cmd_merge(args: argparse.Namespace) -> int:
    from ctxsdk.session import Session

    from ..merge import Merge
    from ._naming import open_session

    if args.budget < 0:
        raise InvalidArgument(f"--budget is a number of tokens >= 0, not {args.budget}")
    sessions: list[Session] = [
        open_session(ref, args.home, max_bytes=args.max_bytes) for ref in args.sessions
    ]
    m = Merge(sessions, tokenizer=args.tokenizer, budget=args.budget, score=args.score)
    r = m.run(query=args.query)
    if args.json:
        print(
            json.dumps(
                {
                    "sources": [b.id for b in r.branches],
                    "skipped": [{"source": s, "why": w} for s, w in r.skipped],
                    "block": r.text,
                    "tokens": r.tokens,
                    "budget": r.budget,
                    "reason": r.block.reason,
                    "slots": r.to_polars().to_dicts(),
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    elif args.block:
        print(r.text)
    else:
        print(visible(str(r), multiline=True))
    return 0


def demo_merge(html_dir: Path | None) -> Path | None:
    """Merge two sample sessions (a flaky-test fix and a module split) at a 400-token budget
    and print the result and the block; writes ``merge.html`` to ``html_dir`` if given."""
    from ctxsdk.session import Session

    from .._display import page
    from ..merge import Merge
    from ..samples import sample

    names = ("fix-flaky-test", "long-refactor")
    sessions = [Session.open(sample(n)) for n in names]
    r = Merge(sessions).budget(400).run()
    print(f"== merge: {' + '.join(names)} at a 400-token budget")
    for line in str(r).splitlines():
        print(f"   {line}")
    print()
    if html_dir is None:
        return None
    html_dir.mkdir(parents=True, exist_ok=True)
    path = html_dir / "merge.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page("merge: " + " + ".join(names), [r], note="rendered by ctxsdk demo"))
    tmp.replace(path)
    print(f"   page: {path}")
    return path
