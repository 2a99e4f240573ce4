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
import io
import json
import re
import shutil
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import CtxError, InvalidArgument, NotFound
from .session._text import gist

if TYPE_CHECKING:
    from .bench import BenchResult
    from .session._session import Session

__all__ = ["main"]

IMPORT_FORMATS = ("openai", "anthropic", "claude-code", "swe-agent", "locomo")
MIN_ID_CHARS = 8
"""``ctxsdk sessions`` shows each id by its shortest unique prefix, at least this long."""

# --- what reaches the terminal -------------------------------------------------------------------

# C0 (but tab and newline), DEL, C1, and the bidi marks that reorder a line (Trojan Source).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ONE_LINE = re.compile(_CONTROL.pattern[:-1] + "\t\n]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character escaped (``\\x1b``, ``\\r``, ``\\u202e``);
    ``multiline=True`` keeps newlines and tabs."""
    return (_CONTROL if multiline else _CONTROL_ONE_LINE).sub(_escape, text)


def _json_safe(text: str) -> str:
    """JSON text with the controls JSON leaves raw (DEL, C1, bidi marks) written as JSON's own
    four-hex-digit ``\\u`` escapes: the same JSON value, nothing for a terminal to act on."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class _VisibleStream(io.TextIOBase):
    """stdout that escapes control characters, whatever prints to it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text, multiline=True))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _cells(text: str) -> int:
    """Terminal columns ``text`` takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal columns, with ``…`` when cut, padded to ``width``."""
    if _cells(text) > width:
        out, used = [], 0
        for c in text:
            w = _cells(c)
            if used + w > width - 1:
                break
            out.append(c)
            used += w
        text = "".join(out) + "…"
    return text + " " * max(0, width - _cells(text))


# --- errors in the command line's terms ----------------------------------------------------------

_CLI_TERMS: list[tuple[str, str]] = [
    ("pass overwrite=True to replace it", "pass --force to replace it"),
    ("Workspace.sessions() lists them", "`ctxsdk{home} sessions` lists them"),
    ("pass dsh_home= or set $DSH_HOME", "pass --home DIR or set $DSH_HOME"),
    ("pass dsh_home= for another DSH home", "pass --home DIR for another DSH home"),
    ("open one by path with Session.open(path)", "name one by its path"),
    ("conversation= applies to locomo only", "--conversation applies to locomo only"),
    ("sessions(refresh=True)", "`ctxsdk sessions --refresh`"),
]


def cli_message(message: str, home: str | None = None) -> str:
    """A library error message as the command line says it: flags for keyword arguments."""
    flag = f" --home {home}" if home else ""
    for python, cli in _CLI_TERMS:
        message = message.replace(python, cli.format(home=flag))
    return re.sub(r"\b1 (session|event|message|turn)s\b", r"1 \1", message)


# --- naming a session ----------------------------------------------------------------------------


def _looks_like_path(ref: str) -> bool:
    return (
        "/" in ref
        or "\\" in ref
        or ref.startswith((".", "~"))
        or ref.endswith((".jsonl", ".zstd", ".jsonl.zstd"))
    )


def _session(ref: str, home: str | None) -> Session:
    """A path if it exists or looks like one, else a unique id prefix in the DSH home."""
    from .session._session import Session

    p = Path(ref).expanduser()
    if p.exists():
        return Session.open(p)
    if _looks_like_path(ref):
        raise NotFound(
            f"{ref}: no such session file or directory (an id prefix has no '/' and does not "
            "start with '.' or '~'; `ctxsdk sessions` lists the ids)"
        )
    from .session._workspace import Workspace

    return Workspace(home).open(ref)


# --- commands ------------------------------------------------------------------------------------


def _demo(args: argparse.Namespace) -> int:
    from .samples import sample_paths
    from .session._session import Session

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
            f"   {s.id[:8]}  v{s.version}  {_plural(len(s), 'event')}  "
            f"{_plural(len(turns), 'turn')}{lineage}  surface {_plural(len(surface), 'node')} "
            f"({_plural(surface.generation, 'replacement')})"
        )
        print(f"   tokens: {exact} cl100k_base, {est} estimated (chars/4)", end="")
        print(f", context window {s.context_window}" if s.context_window else "")
        shown = min(args.last, len(msgs))
        print(f"   last {shown} of {_plural(len(msgs), 'message')} the model receives:")
        for m in msgs[-args.last :] if args.last > 0 else []:
            print(f"     {m.role:9} {visible(gist(m))}")
        print()
    return 0


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
    widths = {k: max([len(h)] + [_cells(t[k]) for t in table]) for k, h in heads.items()}
    keep = ["id", "events", "updated", "kind"]
    min_title = 16
    # Drop the least needed columns until the title has room (the id always stays).
    while len(keep) > 1 and sum(widths[k] + 2 for k in keep) + min_title > width:
        keep.remove(next(k for k in ("kind", "updated", "events") if k in keep))
    room = max(min_title, width - sum(widths[k] + 2 for k in keep))
    right = {"events"}

    def line(cells: dict[str, str]) -> str:
        parts = [
            cells[k].rjust(widths[k]) if k in right else _fit(cells[k], widths[k]) for k in keep
        ]
        return ("  ".join(parts) + "  " + _fit(cells["title"], room)).rstrip()

    return [line({**heads, "title": "title"}), *(line(t) for t in table)]


def _sessions(args: argparse.Namespace) -> int:
    from .session._workspace import Workspace

    df = Workspace(args.home).sessions(refresh=args.refresh)
    if args.json:
        print(_json_safe(df.write_json()))
        return 0
    rows = df.head(args.limit).to_dicts() if args.limit >= 0 else df.to_dicts()
    width = shutil.get_terminal_size().columns
    for text in sessions_table(rows, df["id"].to_list(), width):
        print(text)
    unreadable = int((~df["readable"]).sum()) if len(df) else 0
    tail = f"{_plural(len(df), 'session')}"
    if unreadable:
        tail += f", {unreadable} unreadable"
    if len(rows) < len(df):
        tail += f"; showing {len(rows)} (--limit N shows more)"
    print(f"({tail}; --json prints every column)")
    return 0


def _show(args: argparse.Namespace) -> int:
    s = _session(args.session, args.home)
    counts = s.tokens(args.tokenizer)
    by_seq = {r.seq: r.tokens for r in counts.rows}
    print(f"{visible(s.id)}  {visible(s.title or '(untitled)')}")
    lineage = f"  parent {visible(s.parent_id)}" if s.parent_id else ""
    print(
        f"v{s.version} {s.compression}  {_plural(len(s), 'event')}  "
        f"{_plural(len(s.turns()), 'turn')}{lineage}"
        + ("  INTERRUPTED (ends inside a turn)" if s.is_interrupted else "")
    )
    surface = s.surface()
    print(
        f"surface: {_plural(len(surface), 'node')}, "
        f"{_plural(surface.generation, 'replacement')}, "
        f"{_plural(counts.total, 'token')} ({counts.tokenizer})"
    )
    for i, node in enumerate(surface):
        op = f"replaces {len(node.shadowed)}" if node.shadowed else ""
        tokens = by_seq.get(node.seq, 0)
        print(
            f"{i:4} {node.seq:6} {node.message.role:9} {tokens:6}  {op:12} "
            f"{visible(gist(node.message, args.width))}"
        )
    return 0


def _messages(args: argparse.Namespace) -> int:
    s = _session(args.session, args.home)
    if args.wire:
        print(_json_safe(json.dumps(s.wire(args.wire), indent=2, ensure_ascii=False)))
    else:
        for m in s.messages():
            print(_json_safe(json.dumps(m.to_json_dict(), ensure_ascii=False)))
    return 0


def _tokens(args: argparse.Namespace) -> int:
    s = _session(args.session, args.home)
    for name in args.tokenizer or ["cl100k_base", "o200k_base", "deepseek", "estimate"]:
        table = s.tokens(name)
        roles = "  ".join(f"{k} {v}" for k, v in sorted(table.by_role().items()))
        system = f"  (+{table.system} system)" if table.system else ""
        print(f"{name:12} {table.total:8}  {roles}{system}")
    return 0


def _conversation(value: str) -> int | str:
    """``--conversation``: an index (``3``) or a LoCoMo sample id (``conv-26``)."""
    return int(value) if value.strip().isdigit() else value


def _import(args: argparse.Namespace) -> int:
    from .session import canonical_file_name, dsh_home, session_dir, sessions_root
    from .session.importers import import_file

    if args.conversation is not None and args.format != "locomo":
        raise InvalidArgument(f"--conversation applies to locomo imports only, not {args.format}")
    if args.output and args.home:
        raise InvalidArgument("give -o FILE|DIR or --home DIR, not both")
    if not args.output and not args.home:
        raise InvalidArgument(
            "say where to write the session: -o FILE|DIR, or --home DIR to place it in a DSH home"
        )
    options: dict[str, Any] = {}
    if args.format == "locomo":
        options["conversation"] = 0 if args.conversation is None else args.conversation
    s = import_file(args.format, Path(args.path).expanduser(), **options)
    if args.output:
        dest = Path(args.output).expanduser()
    else:  # the home's canonical place: <home>/sessions/<projectKey(cwd)>/<id>/session.v3...
        root = sessions_root(dsh_home(args.home))
        dest = session_dir(root, s.header.cwd, s.id) / canonical_file_name(s.version, "zstd")
    out = s.save(dest, overwrite=args.force)
    with contextlib.suppress(ValueError):  # shown relative to here when it is below here
        out = out.absolute().relative_to(Path.cwd())
    print(f"imported {_plural(len(s.messages()), 'message')} ({_plural(len(s), 'event')}) -> {out}")
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


def _bench(args: argparse.Namespace) -> int:
    from .bench import BENCHMARKS, run_benchmark

    known = args.name in BENCHMARKS  # an unknown name: run_benchmark says which are known
    progress = None if sys.stderr.isatty() or not known else _stage_lines(args.name, sys.stderr)
    if progress is not None:  # off a terminal there is no bar: say what runs, stage by stage
        run = "a quick run" if args.quick else "a full run"
        print(f"bench {args.name}: {run} (progress: a line per stage)", file=sys.stderr)
    result = run_benchmark(args.name, quick=args.quick, progress=progress)
    print(result.table())
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    missed = [t for t, ok in result.met.items() if not ok]
    if missed and args.strict:
        print(
            f"ctxsdk: bench {args.name}: {_plural(len(missed), 'target')} missed: "
            + "; ".join(missed),
            file=sys.stderr,
        )
    return bench_exit_code(result, args.strict)


# --- the parser ----------------------------------------------------------------------------------


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__

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

    def session_arg(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("session", help="a session file or directory, or a unique id prefix")

    c = command("sessions", "list the sessions of a DSH home")
    c.add_argument("--refresh", action="store_true", help="ignore the index cache")
    c.add_argument("--json", action="store_true", help="print every column as JSON")
    c.add_argument("--limit", type=int, default=50, help="rows to show (default 50; -1: all)")
    c.set_defaults(fn=_sessions)

    c = command("show", "a readable summary of a session's surface")
    session_arg(c)
    c.add_argument("--tokenizer", default="cl100k_base")
    c.add_argument("--width", type=int, default=80, help="characters per message gist")
    c.set_defaults(fn=_show)

    c = command("messages", "the derived messages, as JSON lines or wire JSON")
    session_arg(c)
    c.add_argument("--wire", choices=("openai", "deepseek"), help="print provider wire JSON")
    c.set_defaults(fn=_messages)

    c = command("tokens", "token counts of what the model receives")
    session_arg(c)
    c.add_argument("--tokenizer", action="append", help="repeatable; default: all four")
    c.set_defaults(fn=_tokens)

    c = command("import", "import a foreign agent log as a DSH v3 session")
    c.add_argument("format", choices=IMPORT_FORMATS)
    c.add_argument("path")
    c.add_argument("-o", "--output", help="file or directory to write (or give --home)")
    c.add_argument(
        "--conversation",
        type=_conversation,
        metavar="N|ID",
        help="LoCoMo conversation: an index or a sample id such as conv-26 (default 0)",
    )
    c.add_argument("--force", action="store_true", help="replace an existing output file")
    c.set_defaults(fn=_import)

    c = command("bench", "run a benchmark (table to stdout, optional JSON)")
    c.add_argument("name")
    c.add_argument("--quick", action="store_true", help="a smaller run, under a minute")
    c.add_argument("--json", metavar="PATH", help="write the result as JSON")
    c.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    c.set_defaults(fn=_bench)

    c = command("demo", "open the bundled sample sessions, show what the model gets")
    c.add_argument("--last", type=int, default=4, help="how many trailing messages to show")
    c.set_defaults(fn=_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        with contextlib.redirect_stdout(_VisibleStream(sys.stdout)):
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
