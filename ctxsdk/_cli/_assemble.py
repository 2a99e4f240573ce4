"""``ctxsdk assemble`` and ``ctxsdk fit``: edit what the model receives, from the terminal.

Both build an ``Assembly`` of the session, draft modes (``--set`` targets, or a budget fit),
and show the plan: its ops, the rows they collapse, tokens and messages before and after.
``--dry-run`` stops there and writes nothing. Otherwise the plan is applied: appended to the
session's own log as one batch under its lease (``Assembly.apply``), or, with ``--out PATH``,
written as a new file (``Session.save``) and the source left as it was. Everything that can be
refused (a bad ``--set``, a budget, a read-only sample, a ``--normalized`` log in place) is
refused before anything is written.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ctxsdk.session.kernel import gist

from ..errors import InvalidArgument, NotFound, WriteError
from ._naming import named_session
from ._terminal import cells, cli_message, fit_cells, plural, visible

if TYPE_CHECKING:
    from ctxsdk.session import Session

    from ..assemble import Assembly, Mode, Preview, Row

__all__ = ["SetSpec", "cmd_assemble", "cmd_fit", "parse_budget", "parse_set", "tree_lines"]

_MODES = ("full", "key", "off")
_SEQ = re.compile(r"\d+")
_RANGE = re.compile(r"(\d+)-(\d+)")
_ROW_ID = re.compile(r"[tse]\d+(?:\.\d+)?")


@dataclass(frozen=True)
class SetSpec:
    """One ``--set TARGET=MODE[:DIGEST]``: a seq, a range of seqs or a tree row id."""

    raw: str
    mode: Mode
    seq: int | None = None
    seq_range: tuple[int, int] | None = None
    row: str | None = None
    digest: str | None = None


def parse_set(raw: str) -> SetSpec:
    """``--set``'s value, checked: ``12=off``, ``20-30=key``, ``t6=key:DIGEST``, ``s221=full``."""
    target, eq, rest = raw.partition("=")
    target = target.strip()
    if not eq or not target:
        raise InvalidArgument(
            f"--set {raw}: give TARGET=MODE, such as --set 12=off, --set 20-30=key or --set t6=key"
        )
    mode, colon, digest = rest.partition(":")
    mode = mode.strip()
    if mode not in _MODES:
        raise InvalidArgument(f"--set {raw}: the mode is full, key or off, not {mode!r}")
    if colon and mode != "key":
        raise InvalidArgument(f"--set {raw}: a digest goes with key only (--set {target}=key:TEXT)")
    if colon and not digest.strip():
        raise InvalidArgument(
            f"--set {raw}: the digest after 'key:' is empty (leave out ':' for the automatic one)"
        )
    text = digest if colon else None
    mode_ = cast("Mode", mode)
    if _SEQ.fullmatch(target):
        return SetSpec(raw, mode_, seq=int(target), digest=text)
    m = _RANGE.fullmatch(target)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo > hi:
            raise InvalidArgument(f"--set {raw}: a range goes from low to high ({hi}-{lo})")
        return SetSpec(raw, mode_, seq_range=(lo, hi), digest=text)
    if _ROW_ID.fullmatch(target):
        return SetSpec(raw, mode_, row=target, digest=text)
    raise InvalidArgument(
        f"--set {raw}: the target is a seq (12), a range of seqs (20-30) or a row id of the "
        f"tree (t6 for turn 6, t6.2 for its step 2, s221 for node 221), not {target!r}; "
        "`ctxsdk assemble SESSION` lists the rows"
    )


def parse_budget(raw: str) -> int:
    """``fit``'s BUDGET: a positive whole number of tokens."""
    text = raw.strip().replace("_", "")
    if not text.isdigit() or int(text) < 1:
        raise InvalidArgument(
            f"BUDGET must be a positive whole number of tokens (at least 1), not {raw!r}"
        )
    return int(text)


def _apply_set(a: Assembly, spec: SetSpec) -> None:
    """Draft one ``--set``; an error names the flag and its value."""
    mode = spec.mode
    try:
        if spec.seq_range is not None:
            lo, hi = spec.seq_range
            seqs = [n.seq for n in a.session.surface() if lo <= n.seq <= hi]
            if not seqs:
                raise NotFound(
                    f"no surface node of session {a.session.id} has a seq in {lo}..{hi} "
                    "(`ctxsdk show SESSION` lists the nodes with their seqs)"
                )
            for seq in seqs:
                a.set(seq, mode, digest=spec.digest)
        else:
            target = spec.seq if spec.seq is not None else spec.row
            assert target is not None
            a.set(target, mode, digest=spec.digest)
    except (NotFound, InvalidArgument) as exc:
        msg = str(exc.args[0]) if exc.args else str(exc)
        if spec.row is not None and msg.startswith("no row "):
            msg += "; `ctxsdk assemble SESSION` lists the rows"
        raise type(exc)(f"--set {spec.raw}: {msg}") from None


def _span(first: int, last: int) -> str:
    return f"seq {first}" if first == last else f"seq {first}..{last}"


def _shown(path: Path) -> Path:
    """``path`` relative to here when it is below here."""
    with contextlib.suppress(ValueError):
        return path.absolute().relative_to(Path.cwd())
    return path


def in_place_problem(
    s: Session, instead: str = "write an edited copy with --out PATH"
) -> str | None:
    """Why an edit cannot be appended to the session's own log, or None; ``instead`` says
    what to do (the fold commands pass their own)."""
    from ..session.kernel import refuse_shipped_sample

    if s.path is None:
        return (
            "this log was read normalized (its seq/time stripped, rows numbered by position) "
            f"and is not appended to; {instead}"
        )
    try:
        refuse_shipped_sample(s.path, instead=instead)
    except WriteError as exc:
        return str(exc.args[1] if len(exc.args) > 1 else exc)
    return None


def _header(s: Session) -> None:
    print(f"{visible(s.id[:8])}  {visible(s.title or '(untitled)')}")


def _plan_lines(s: Session, p: Preview, tokenizer: str) -> list[str]:
    nodes = {n.seq: n for n in s.surface()}
    lines = [
        f"{plural(len(p.ops), 'op')}: {p.tokens_before} -> {p.tokens_after} tokens ({tokenizer}"
        + (f", saves {p.saved}" if p.saved >= 0 else f", adds {-p.saved}")
        + f"), {len(s.messages())} -> {plural(len(p.messages), 'message')} the model receives"
    ]
    if p.ops:
        lines.append(f"  {'op':>3}  {'kind':12}  {'mode':4}  {'seqs':12} {'nodes':>5}  tokens")
    for i, op in enumerate(p.ops, 1):
        seqs = f"{op.start_seq}" if op.start_seq == op.end_seq else f"{op.start_seq}..{op.end_seq}"
        first = nodes.get(op.shadowed[0]) if op.shadowed else None
        role = (
            "" if first is None else "tool" if first.type == "tool/result" else first.message.role
        )
        what = f"{role} {gist(first.message, 60)}" if first is not None else ""
        change = f"{op.tokens_before} -> {op.tokens_after}"
        lines.append(
            f"  {i:>3}  {op.kind:12}  {op.mode:4}  {seqs:12} {len(op.shadowed):>5}  "
            f"{change:14}  {visible(what)}"
        )
    return lines


def _notes(notes: list[str] | tuple[str, ...]) -> None:
    for note in dict.fromkeys(notes):  # once each, in order
        print(f"  note: {visible(note)}")


def _write(args: argparse.Namespace, a: Assembly, before: Session) -> None:
    """Apply the plan (or say what applying would do, with ``--dry-run``)."""
    if args.dry_run:
        pending = a.apply(write=False).pending_events  # in memory only
        first = len(before)
        span = _span(first, first + len(pending) - 1)
        if args.out:
            print(
                f"dry run, nothing written: would write an edited copy to {args.out} "
                f"({plural(len(before) + len(pending), 'event')}; the source unchanged)"
            )
            return
        problem = in_place_problem(before)
        assert before.path is not None or problem is not None
        where = _shown(before.path) if before.path is not None else before.id
        print(
            f"dry run, nothing written: would append {plural(len(pending), 'event')} ({span}) "
            f"to {visible(str(where))} as one batch"
        )
        if problem is not None:
            print(f"  but a run without --dry-run is refused: {visible(cli_message(problem))}")
        return
    if args.out:
        copy = a.apply(write=False)
        out = copy.save(Path(args.out).expanduser(), overwrite=args.force)
        added = len(copy) - len(before)
        print(
            f"wrote {_shown(out)}: an edited copy, {plural(added, 'event')} appended to "
            f"the source's {len(before)} (the source is unchanged)"
        )
        return
    assert before.path is not None  # _refuse_early saw to it
    after = a.apply()  # one batch, under the session's lease; re-read from the file
    print(
        f"wrote {plural(len(after) - len(before), 'event')} "
        f"({_span(len(before), len(after) - 1)}) to "
        f"{visible(str(_shown(before.path)))}"
    )


def _refuse_early(args: argparse.Namespace, s: Session) -> None:
    """A write that cannot happen, refused before anything is planned or printed: appending
    to a log that cannot take it, or an ``--out`` file that exists (without ``--force``)."""
    from ctxsdk.session.kernel import canonical_file_name

    if args.dry_run:
        return
    if args.out:
        dest = Path(args.out).expanduser()
        if dest.is_dir() or not dest.suffix:  # as Session.save names a file in a directory
            dest = dest / canonical_file_name(s.version, s.compression)
        if dest.exists() and not args.force:
            raise WriteError(errno.EEXIST, f"{dest} exists; pass --force to replace it")
        return
    problem = in_place_problem(s)
    if problem is not None:
        raise WriteError(errno.EROFS, problem)


def _check_out(args: argparse.Namespace) -> None:
    if args.force and not args.out:
        raise InvalidArgument("--force replaces an existing --out file; it goes with --out PATH")


def _assembly(args: argparse.Namespace) -> tuple[Session, Assembly]:
    specs = [parse_set(raw) for raw in args.set or []]  # refused before anything is read
    s = named_session(args)
    if specs or args.fn is cmd_fit:
        _refuse_early(args, s)
    a = s.assemble(tokenizer=args.tokenizer)
    for spec in specs:
        _apply_set(a, spec)
    return s, a


# --- the tree ------------------------------------------------------------------------------------


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal columns (with ``…``), not padded."""
    return fit_cells(text, width).rstrip() if cells(text) > width else text


def _tree_rows(row: Row, depth: int, all_rows: bool) -> list[tuple[Row, int]]:
    out = [(row, depth)]
    for child in row.children:
        if child.state == "shadowed" and not all_rows:
            continue
        out += _tree_rows(child, depth + 1, all_rows)
    return out


def tree_lines(root: Row, *, all_rows: bool, limit: int) -> list[str]:
    """The rows of the context tree, one line each: row id (what ``--set`` takes), label,
    mode, tokens, gist; events a replacement covers only with ``all_rows``."""
    rows = _tree_rows(root, 0, all_rows)[1:]  # the session row is the header
    shown = rows if limit < 0 else rows[:limit]
    lines = [f"{'row':8}  {'':26}  {'mode':4}  {'tokens':>6}  gist"]
    for row, depth in shown:
        label = "  " * (depth - 1) + row.label
        if row.state == "shadowed":
            label = "  " * (depth - 1) + f"({row.event_seq}) {row.label}"
        covers = f" (covers {plural(len(row.shadowed), 'event')})" if row.shadowed else ""
        gist_text = row.gist if row.kind not in ("turn", "step") else ""
        lines.append(
            f"{visible(row.id):8}  {fit_cells(visible(label), 26)}  {row.mode:4}  "
            f"{row.tokens:>6}  {_cut(visible(gist_text), 72)}{covers}".rstrip()
        )
    if len(shown) < len(rows):
        lines.append(f"... {len(rows) - len(shown)} more rows (--rows -1 shows all)")
    return lines


# --- the commands --------------------------------------------------------------------------------


def cmd_assemble(args: argparse.Namespace) -> int:
    _check_out(args)
    if not args.set and (args.out or args.dry_run):
        raise InvalidArgument(
            "nothing to assemble: give at least one --set TARGET=MODE (such as "
            "--set 12=off); without one, `ctxsdk assemble SESSION` lists the rows"
        )
    s, a = _assembly(args)
    _header(s)
    if not args.set:
        root = a.tree()
        print(
            f"{plural(root.tokens, 'token')} ({args.tokenizer}), "
            f"{plural(len(s.surface()), 'node')}; --set ROW=full|key|off edits a row"
        )
        for line in tree_lines(root, all_rows=args.all, limit=args.rows):
            print(line)
        return 0
    p = a.preview()
    if not p.ops:
        _notes(p.notes)
        print("nothing to change: the rows already have these modes; nothing written")
        return 0
    for line in _plan_lines(s, p, args.tokenizer):
        print(line)
    _notes(p.notes)
    _write(args, a, s)
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    _check_out(args)
    budget = parse_budget(args.budget)
    s, a = _assembly(args)
    _header(s)
    r = a.fit(budget, query=args.query)
    p = a.preview()
    query = f", keeping what {args.query!r} needs" if args.query else ""
    verdict = "fits" if p.tokens_after <= budget else "does NOT fit"
    print(f"fit {plural(budget, 'token')}{visible(query)}: {verdict}")
    if p.ops:
        for line in _plan_lines(s, p, args.tokenizer):
            print(line)
    _notes([*r.notes, *p.notes])
    if r.protected:
        print(f"  kept verbatim: seqs {', '.join(map(str, r.protected))} (never collapsed)")
    if not p.ops:
        print(f"nothing to change ({plural(p.tokens_before, 'token')} now); nothing written")
        return 0
    _write(args, a, s)
    return 0
