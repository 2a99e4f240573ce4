"""``ctxsdk`` / ``python -m ctxsdk``: the command line.

Sessions are named by a file or directory path, or by a unique id prefix in the DSH home
(``--home``, else ``$DSH_HOME`` or ``~/.dsh``). An argument that looks like a path (it has a
``/``, starts with ``.`` or ``~``, or ends in ``.jsonl`` / ``.zstd``) is always a path. Errors
print one clear line to stderr, in the command line's terms (flags, not keyword arguments),
and exit with status 2.

Nothing from a session reaches the terminal raw: control characters (ESC sequences, the other
C0 and C1 controls, bidi overrides) are shown escaped, as ``\\x1b``; only the newlines and tabs
of multi-line output stay.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from ..errors import CtxError
from ._assemble import cmd_assemble, cmd_fit
from ._cache import cmd_cache
from ._commands import (
    IMPORT_FORMATS,
    MIN_ID_CHARS,
    bench_exit_code,
    cmd_bench,
    cmd_demo,
    cmd_import,
    cmd_messages,
    cmd_sessions,
    cmd_show,
    cmd_tokens,
    conversation,
    sessions_table,
    short_ids,
    sizes,
)
from ._fold import cmd_fold, cmd_fold_search, cmd_fold_status, cmd_recall
from ._memory import cmd_memory
from ._merge import cmd_merge
from ._terminal import VisibleStream, cli_message, visible

__all__ = [
    "IMPORT_FORMATS",
    "MIN_ID_CHARS",
    "bench_exit_code",
    "cli_message",
    "main",
    "sessions_table",
    "short_ids",
    "visible",
]


# --- the parser ----------------------------------------------------------------------------------


def _build_parser() -> argparse.ArgumentParser:
    from .._version import __version__

    p = argparse.ArgumentParser(
        prog="ctxsdk", description="See and shape what an LLM agent's model receives."
    )
    p.add_argument("--home", help="DSH home (default: $DSH_HOME or ~/.dsh)")
    p.add_argument("--version", action="version", version=f"ctxsdk {__version__}")
    # The global options again, for after the command (`ctxsdk show X --home DIR`): SUPPRESS
    # leaves a value given before the command alone.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--home", default=argparse.SUPPRESS, help="DSH home (as before the command)"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    def max_bytes_arg(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument(
            "--max-bytes",
            type=int,
            metavar="N",
            help="decode at most N bytes of a log (default 1073741824, 1 GiB; a zstd bomb is "
            "refused there): give more for a real log that large",
        )

    def session_arg(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("session", help="a session file or directory, or a unique id prefix")
        cmd.add_argument(
            "--normalized",
            action="store_true",
            help="read a log whose seq/time were stripped (the harness's snapshot fixtures)",
        )
        max_bytes_arg(cmd)

    def writing_args(cmd: argparse.ArgumentParser, *, dry_run: str, out: str) -> None:
        """The two options of every command that writes a log: ``--dry-run`` and ``--out``."""
        cmd.add_argument("--dry-run", action="store_true", help=dry_run)
        cmd.add_argument("-o", "--out", metavar="PATH", help=out)

    def editing_args(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument(
            "--set",
            action="append",
            metavar="TARGET=MODE",
            help="repeatable: a seq (12), a range of seqs (20-30) or a row id (t6, t6.2, s221) "
            "and full, key or off; key:TEXT gives the digest (--set t6=key:'mypy is clean')",
        )
        cmd.add_argument("--tokenizer", default="cl100k_base", help="what tokens are counted with")
        writing_args(
            cmd,
            dry_run="show what would change; write nothing",
            out="write the edited session as a new file (or directory) instead of appending "
            "to its log",
        )
        cmd.add_argument("--force", action="store_true", help="replace an existing --out file")

    c = command("sessions", "list the sessions of a DSH home")
    c.add_argument("--refresh", action="store_true", help="ignore the index cache")
    c.add_argument("--json", action="store_true", help="print every column as JSON")
    c.add_argument("--limit", type=int, default=50, help="rows to show (default 50; -1: all)")
    c.set_defaults(fn=cmd_sessions)

    c = command("show", "a readable summary of a session's surface")
    session_arg(c)
    c.add_argument("--tokenizer", default="cl100k_base")
    c.add_argument("--width", type=int, default=80, help="characters per message gist")
    c.set_defaults(fn=cmd_show)

    c = command("messages", "the derived messages, as JSON lines or wire JSON")
    session_arg(c)
    c.add_argument("--wire", choices=("openai", "deepseek"), help="print provider wire JSON")
    c.set_defaults(fn=cmd_messages)

    c = command("tokens", "token counts of what the model receives")
    session_arg(c)
    c.add_argument("--tokenizer", action="append", help="repeatable; default: all four")
    c.set_defaults(fn=cmd_tokens)

    c = command(
        "assemble",
        "set rows of the context full, key or off (no --set: list the rows), and append the "
        "edit to the log",
    )
    session_arg(c)
    editing_args(c)
    c.add_argument("--rows", type=int, default=100, help="rows of the list (default 100; -1: all)")
    c.add_argument("--all", action="store_true", help="list the events replacements cover, too")
    c.set_defaults(fn=cmd_assemble)

    c = command("fit", "collapse what matters least until the context fits a token budget")
    session_arg(c)
    c.add_argument("budget", metavar="BUDGET", help="tokens the context may take (at least 1)")
    c.add_argument("--query", help="what the next step needs: related rows are kept longest")
    editing_args(c)
    c.set_defaults(fn=cmd_fit)

    def fold_args(cmd: argparse.ArgumentParser, *, json: str) -> None:
        """The options every fold command has: where the bundles are, and JSON output."""
        cmd.add_argument(
            "--store",
            metavar="DIR",
            help="the folder of fold bundles (default: <DSH home>/ctxsdk/fold for a session in "
            "a DSH home, else .ctxsdk-fold next to the log)",
        )
        cmd.add_argument("--json", action="store_true", help=json)

    c = command(
        "fold",
        "fold a session once if its policy says so: archive the exact messages in a verified "
        "bundle, then append the checkpoint to the log",
    )
    session_arg(c)
    c.add_argument(
        "--policy",
        default="economy",
        help="basic, masking, economy (default), balanced or quality",
    )
    c.add_argument(
        "--window", metavar="N", help="the context window in tokens (default: the log's route)"
    )
    fold_args(c, json="print the result as JSON")
    c.add_argument(
        "--force", action="store_true", help="fold even below the threshold (and admission)"
    )
    writing_args(
        c,
        dry_run="show what would be folded and why; write nothing",
        out="save the session as a new file (or directory) and fold that copy; the source is "
        "left as it was",
    )
    c.set_defaults(fn=cmd_fold)

    c = command("recall", "read back what a fold archived, verified against the log's hashes")
    session_arg(c)
    c.add_argument("ref", metavar="REF", help="cp:<id>, a checkpoint id, or a seq it archived")
    c.add_argument(
        "--depth",
        default="summary",
        help="summary (the checkpoint's text, default) or exact (the archived messages)",
    )
    c.add_argument(
        "--offset",
        metavar="N",
        help="first message of the exact page (default 0, or a seq REF's own message)",
    )
    c.add_argument(
        "--limit", default="20", metavar="N", help="messages per page (exact; 1..20, default 20)"
    )
    fold_args(c, json="print the recall as JSON (whole messages)")
    c.set_defaults(fn=cmd_recall)

    c = command("fold-search", "exact search over everything a session's folds archived")
    session_arg(c)
    c.add_argument("query", metavar="QUERY", help="a case-insensitive substring")
    c.add_argument("--limit", default="10", metavar="N", help="checkpoints to show (default 10)")
    fold_args(c, json="print the hits as JSON")
    c.set_defaults(fn=cmd_fold_search)

    c = command("fold-status", "a session's fold policy, pressure, checkpoints and bundle health")
    session_arg(c)
    c.add_argument("--policy", default="economy", help="the policy to measure pressure under")
    c.add_argument("--window", metavar="N", help="the context window in tokens")
    fold_args(c, json="print the status as JSON")
    c.set_defaults(fn=cmd_fold_status)

    c = command(
        "merge",
        "merge the beliefs of several sessions slot by slot and print the budgeted block",
    )
    c.add_argument(
        "sessions", nargs="+", metavar="SESSION", help="session files or unique id prefixes"
    )
    c.add_argument("--budget", type=int, default=1200, help="tokens the block may take")
    c.add_argument(
        "--score", default="egalitarian", choices=("egalitarian", "elitist"), help="the strategy"
    )
    c.add_argument("--query", help="what the next turn is about: related slots are preferred")
    c.add_argument("--tokenizer", default="cl100k_base", help="what tokens are counted with")
    c.add_argument("--block", action="store_true", help="print only the block")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    max_bytes_arg(c)
    c.set_defaults(fn=cmd_merge)

    c = command(
        "cache",
        "where the embedding cache is, how much it holds and its bound (--clear empties it)",
    )
    c.add_argument("--clear", action="store_true", help="delete every cached vector")
    c.add_argument("--json", action="store_true", help="print it as JSON")
    c.set_defaults(fn=cmd_cache)

    c = command(
        "memory",
        "a graph memory in a file or in a namespace of a PostgreSQL database: ingest "
        "sessions, find, read, print the map, the session map's boxes (episodes), export it, "
        "scrub credentials out of what it holds, copy it to another store; set a PostgreSQL "
        "database up (init, namespace)",
    )
    c.add_argument(
        "db",
        metavar="DB",
        help="the memory database file (created on first use), or a postgresql:// URL",
    )
    c.add_argument(
        "action",
        choices=(
            "show",
            "ingest",
            "find",
            "read",
            "map",
            "episodes",
            "export",
            "scrub",
            "copy",
            "init",
            "namespace",
        ),
        nargs="?",
        default="show",
    )
    c.add_argument(
        "args",
        nargs="*",
        help="sessions to ingest, a query, node ids to read, session id prefixes (episodes), "
        "the destination of a copy (a file or a postgresql:// URL), or the namespace to create",
    )
    c.add_argument(
        "--namespace",
        metavar="NS",
        help="the namespace of a postgresql:// DB (default: default)",
    )
    c.add_argument(
        "--to-namespace",
        metavar="NS",
        help="copy: the namespace of a postgresql:// destination (default: default)",
    )
    c.add_argument(
        "--role",
        help="namespace: the database role whose members may use it (created when missing; "
        "default: every role granted the tables)",
    )
    c.add_argument(
        "--verbatim",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ingest: keep every message as a verbatim observation (the default; "
        "--no-verbatim keeps the distilled memories alone)",
    )
    c.add_argument(
        "--top-k",
        type=int,
        default=None,
        help="find: how many hits (1..100; default: the memory's top_k setting)",
    )
    c.add_argument("--budget", type=int, default=400, help="map: tokens it may take")
    c.add_argument("--json", action="store_true", help="find / read / episodes: print JSON")
    c.add_argument(
        "--dry-run", action="store_true", help="scrub: say what would change, write nothing"
    )
    c.set_defaults(fn=cmd_memory)

    c = command("import", "import an agent log (format detected, or named) as a DSH v3 session")
    c.add_argument(
        "source",
        nargs="+",
        metavar="[FORMAT] PATH",
        help="the log to import; its format is detected from its content unless named "
        f"(--format, or the older positional FORMAT: {', '.join(IMPORT_FORMATS)})",
    )
    c.add_argument(
        "--format",
        dest="import_format",
        choices=IMPORT_FORMATS,
        metavar="FORMAT",
        help="skip detection and read PATH as this format",
    )
    c.add_argument("-o", "--output", help="file or directory to write (or give --home)")
    c.add_argument(
        "--conversation",
        type=conversation,
        metavar="N|ID",
        help="LoCoMo conversation: an index or a sample id such as conv-26 (default 0)",
    )
    c.add_argument("--force", action="store_true", help="replace an existing output file")
    c.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="read at most N bytes of the file (default 268435456, 256 MiB)",
    )
    c.set_defaults(fn=cmd_import)

    c = command("bench", "run a benchmark (table to stdout, optional JSON)")
    c.add_argument("name")
    c.add_argument("--quick", action="store_true", help="a smaller run, under a minute")
    c.add_argument("--json", metavar="PATH", help="write the result as JSON")
    c.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    c.add_argument(
        "--store",
        choices=("sqlite", "postgres"),
        help="bench memory only: sqlite (the default) or postgres, the engine on both stores "
        "in one run (a throwaway local server, or the one $CTXSDK_BENCH_PG_DSN names)",
    )
    c.add_argument(
        "--scale-sizes",
        "--scale",
        dest="scale_sizes",
        type=sizes,
        metavar="N,N,...",
        help="bench memory only: the memory sizes (nodes) find is timed at against bm25s, "
        "e.g. 6000,100000,1000000 (default 6000,100000; 6000,20000 with --quick)",
    )
    c.set_defaults(fn=cmd_bench)

    c = command("demo", "open the bundled sample sessions, show what the model gets")
    c.add_argument("--last", type=int, default=4, help="how many trailing messages to show")
    c.add_argument(
        "--html",
        metavar="DIR",
        help="also write one static HTML page per sample (its tree, composition, tokens per turn)",
    )
    c.set_defaults(fn=cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        with contextlib.redirect_stdout(VisibleStream(sys.stdout)):
            code: int = args.fn(args)
    except BrokenPipeError:  # e.g. `ctxsdk show ... | head`: the reader left, not an error
        sys.stderr.close()
        return 0
    except (CtxError, KeyError, OSError, ValueError) as exc:
        if isinstance(exc, KeyError) and exc.args:
            msg = str(exc.args[0])
        elif isinstance(exc, OSError) and exc.strerror:  # no "[Errno 17]" in front
            name = exc.filename
            msg = (
                exc.strerror
                if name is None or str(name) in exc.strerror
                else f"{name}: {exc.strerror}"
            )
        else:
            msg = str(exc)
        line = msg.splitlines()[0] if msg.strip() else type(exc).__name__
        print(f"ctxsdk: error: {visible(cli_message(line, args.home))}", file=sys.stderr)
        return 2
    return code
