"""``ctxsdk fold``, ``recall``, ``fold-search`` and ``fold-status``: the Fold engine from the
terminal, and the fold part of ``ctxsdk demo``.

``fold`` builds a ``Fold`` of the session and runs it once: the policy decides (``--force``
folds even below the threshold), the exact messages are archived in a verified bundle, then
the fold is appended to the session's log as one batch. ``--dry-run`` prints what ``run``
would do and why (``Fold.plan``) and writes nothing. ``-o/--out PATH`` saves the session to
a new file first and folds that copy (the source is left as it was). Everything that can be
refused (a flag's value, a read-only sample, an ``--out`` that exists) is refused before
anything is written, bundles included.

``recall``, ``fold-search`` and ``fold-status`` read what folds archived. A bundle that is
missing or fails verification is not a usage error: one line with the reason, exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    BundleError,
    BundleMissing,
    FoldConflict,
    InvalidArgument,
    NotFound,
    WriteError,
)
from ._assemble import in_place_problem
from ._naming import named_session
from ._terminal import cli_message, json_safe, plural, visible

if TYPE_CHECKING:
    from ctxsdk.fold import Decision
    from ctxsdk.session import Session

    from ..fold import FileBundleStore, Fold, FoldResult, FoldStatus

__all__ = [
    "DEMO_WINDOW",
    "cmd_fold",
    "cmd_fold_search",
    "cmd_fold_status",
    "cmd_recall",
    "demo_fold",
    "parse_count",
]

DEMO_WINDOW = 8192
"""The context window ``ctxsdk demo`` folds the ``long-refactor`` sample against."""

_DEPTHS = ("summary", "exact")


# --- flags ---------------------------------------------------------------------------------------


def parse_count(flag: str, raw: str, *, minimum: int, maximum: int | None = None) -> int:
    """A flag's whole-number value, checked; the error names the flag."""
    text = raw.strip().replace("_", "")
    value = int(text) if text.isdigit() else None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        span = f"{minimum}..{maximum}" if maximum is not None else f"at least {minimum}"
        raise InvalidArgument(f"{flag} must be a whole number ({span}), not {raw!r}")
    return value


def _policy(raw: str) -> str:
    from ..fold.kernel import POLICIES

    if raw not in POLICIES:
        raise InvalidArgument(
            f"--policy {raw}: no fold policy {raw!r}; the policies are: {', '.join(POLICIES)}"
        )
    return raw


def _window(raw: str | None) -> int | None:
    if raw is None:
        return None
    return parse_count("--window", raw, minimum=1)


def _store(args: argparse.Namespace, s: Session) -> FileBundleStore:
    """``--store DIR``, else the engine's default place next to the session."""
    from ctxsdk.fold.kernel import default_store_root, no_store_reason

    from ..fold import FileBundleStore

    if args.store:
        root = Path(args.store).expanduser()
        if root.exists() and not root.is_dir():
            raise InvalidArgument(f"--store {args.store}: not a directory")
        return FileBundleStore(root)
    default = default_store_root(s)
    if default is None:
        raise InvalidArgument(f"{no_store_reason(s)}: name one with --store DIR")
    return FileBundleStore(default)


def _fold_of(args: argparse.Namespace, s: Session, *, write: bool = True) -> Fold:
    from ..fold import Fold

    settings: dict[str, Any] = {}
    window = getattr(args, "window_tokens", None)
    if window is not None:
        settings["window"] = window
    policy = getattr(args, "policy", "economy")
    return Fold(s, store=_store(args, s), policy=policy, write=write, **settings)


def _shown(path: Path) -> Path:
    """``path`` relative to here when it is below here."""
    with contextlib.suppress(ValueError):
        return path.absolute().relative_to(Path.cwd())
    return path


def _print_json(value: Any) -> None:
    print(json_safe(json.dumps(value, indent=2, ensure_ascii=False)))


def _bundle_failure(exc: Exception, home: str | None) -> int:
    """A missing or corrupt bundle (or a lost race with another writer): one line, exit 1."""
    msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    line = msg.splitlines()[0] if msg.strip() else type(exc).__name__
    print(f"ctxsdk: error: {visible(cli_message(line, home))}", file=sys.stderr)
    return 1


def _header(s: Session) -> str:
    return f"{visible(s.id[:8])}  {visible(s.title or '(untitled)')}"


# --- ctxsdk fold ---------------------------------------------------------------------------------


def _out_path(args: argparse.Namespace, s: Session) -> Path:
    """Where ``--out`` writes (a directory gets the canonical file name), refused if taken."""
    from ctxsdk.session.kernel import canonical_file_name

    dest = Path(args.out).expanduser()
    if dest.is_dir() or not dest.suffix:  # as Session.save names a file in a directory
        dest = dest / canonical_file_name(s.version, s.compression)
    if dest.exists():
        raise WriteError(
            errno.EEXIST, f"-o/--out {dest}: exists; remove it or choose another --out path"
        )
    return dest


def _in_place_problem(s: Session) -> str | None:
    """Why a fold cannot be appended to the session's own log, or None."""
    return in_place_problem(s, instead="fold a copy with -o/--out PATH")


def _seqs(s: Session, span: tuple[int, int] | None) -> tuple[int, ...]:
    if span is None:
        return ()
    return tuple(s.index.surface_seqs()[span[0] : span[1]])


def _seq_span(seqs: tuple[int, ...]) -> str:
    return f"seq {seqs[0]}" if len(seqs) == 1 else f"seq {seqs[0]}..{seqs[-1]}"


def _decision_json(s: Session, f: Fold, d: Decision) -> dict[str, Any]:
    p = f.pressure()
    seqs = _seqs(s, d.span)
    return {
        "session": s.id,
        "dryRun": True,
        "folds": d.folds,
        "action": d.action,
        "reason": d.reason,
        "seqs": list(seqs),
        "spanTokens": d.span_tokens,
        "checkpointTokens": d.checkpoint_tokens,
        "reclaim": d.reclaim,
        "unreachable": d.unreachable,
        "policy": f.policy.name,
        "tokenizer": f.tokenizer,
        "pressure": p.to_json(),
        "store": str(f.store.root.absolute()),
    }


def _result_json(s: Session, r: FoldResult, store: Path, log: Path | None) -> dict[str, Any]:
    return {
        "session": s.id,
        "dryRun": False,
        "folded": r.folded,
        "action": r.action,
        "reason": r.reason,
        "tokensBefore": r.tokens_before,
        "tokensAfter": r.tokens_after,
        "reclaimed": r.reclaimed,
        "ref": f"cp:{r.checkpoint_id}" if r.checkpoint_id else None,
        "record": r.record.data() if r.record is not None else None,
        "log": str(log.absolute()) if log is not None and r.folded else None,
        "store": str(store.absolute()),
    }


def _dry_run(args: argparse.Namespace, s: Session, f: Fold) -> int:
    d = f.plan(force=args.force)
    if args.json:
        _print_json(_decision_json(s, f, d))
        return 0
    p = f.pressure()
    win = "from the log's route" if p.window_measured else "assumed"
    print(_header(s))
    print(
        f"policy {f.policy.name}: {p.total:,} tokens ({f.tokenizer}), threshold {p.threshold:,} "
        f"of a {p.window:,}-token window ({win})"
    )
    if not d.folds:
        print(f"no fold: {visible(d.reason)}")
        print("dry run, nothing written")
        return 0
    seqs = _seqs(s, d.span)
    into = (
        f" into a {d.checkpoint_tokens:,}-token checkpoint (reclaims {d.reclaim:,})"
        if d.checkpoint_tokens is not None
        else ""
    )
    print(
        f"would {d.action} fold {_seq_span(seqs)} ({plural(len(seqs), 'node')}, "
        f"{d.span_tokens:,} tokens){into}"
    )
    print(f"  why: {visible(d.reason)}")
    if args.out:
        where = f"a copy at {args.out} (the source unchanged)"
    else:
        assert s.path is not None or _in_place_problem(s) is not None
        where = visible(str(_shown(s.path))) if s.path is not None else s.id
    print(
        f"dry run, nothing written: would archive the exact messages in "
        f"{_shown(f.store.root)} and append the fold to {where}"
    )
    problem = None if args.out else _in_place_problem(s)
    if problem is not None:
        print(f"  but a run without --dry-run is refused: {visible(cli_message(problem))}")
    return 0


def cmd_fold(args: argparse.Namespace) -> int:
    policy = _policy(args.policy)  # flags are refused before anything is read
    args.window_tokens = _window(args.window)
    args.policy = policy
    s = named_session(args)
    dest: Path | None = None
    if not args.dry_run:
        if args.out:
            dest = _out_path(args, s)
        else:
            problem = _in_place_problem(s)
            if problem is not None:
                raise WriteError(errno.EROFS, problem)
    f = _fold_of(args, s, write=False)  # nothing is written by building or planning
    if args.dry_run:
        return _dry_run(args, s, f)
    d = f.plan(force=args.force)
    if not d.folds:  # decided on the source: a copy without a fold is not written either
        before = f.pressure().total
        if args.json:
            from ..fold import FoldResult

            r = FoldResult(False, "none", d.reason, before, before)
            _print_json(_result_json(s, r, f.store.root, None))
        else:
            print(_header(s))
            print(f"no fold: {visible(d.reason)}")
            hint = "" if args.force else " (--force folds even below the threshold)"
            print(f"nothing written{hint}")
        return 0
    target = s
    if dest is not None:
        from ctxsdk.session import Session
        from ctxsdk.session.kernel import MAX_DECODED_BYTES

        written = s.save(dest)
        target = Session.open(written, max_bytes=args.max_bytes or MAX_DECODED_BYTES)
    try:
        f = _fold_of(args, target)
        result = f.run(force=args.force)
    except FoldConflict as exc:
        return _bundle_failure(exc, args.home)
    except BaseException:
        if dest is not None:  # the copy this command made, without its fold: not left behind
            with contextlib.suppress(OSError):
                dest.unlink()
        raise
    log = target.path
    if args.json:
        _print_json(_result_json(target, result, f.store.root, log))
        return 0
    print(_header(target))
    print(visible(str(result), multiline=True))
    if result.folded and log is not None:
        copy = " (a copy; the source is unchanged)" if dest is not None else ""
        print(f"wrote the fold to {visible(str(_shown(log)))}{copy}")
        print(f"bundle in {visible(str(_shown(f.store.root)))}")
    elif dest is not None:
        print(f"wrote {visible(str(_shown(dest)))}: a copy of the source, without a fold")
    return 0


# --- reading back --------------------------------------------------------------------------------


def _ref(raw: str) -> str | int:
    text = raw.strip()
    return int(text) if text.isdigit() else text


def cmd_recall(args: argparse.Namespace) -> int:
    from ..fold.kernel import MAX_PAGE

    if args.depth not in _DEPTHS:
        raise InvalidArgument(f"--depth is summary or exact, not {args.depth!r}")
    offset = None if args.offset is None else parse_count("--offset", args.offset, minimum=0)
    limit = parse_count("--limit", args.limit, minimum=1, maximum=MAX_PAGE)
    s = named_session(args)
    f = _fold_of(args, s, write=False)
    ref = _ref(args.ref)
    from ctxsdk.fold.kernel import resolve_ref

    try:
        record = resolve_ref(f.records, ref)
    except NotFound as exc:  # a reference no fold has: the REF argument is wrong
        msg = str(exc.args[0]) if exc.args else str(exc)
        raise InvalidArgument(f"REF {args.ref}: {msg}") from None
    if offset is None:  # a seq starts the exact page at its own message
        offset = record.shadowed.index(ref) if isinstance(ref, int) else 0
    try:
        r = f.recall(ref, depth=args.depth, offset=offset, limit=limit)
    except (BundleError, BundleMissing) as exc:
        return _bundle_failure(exc, args.home)
    if args.json:
        _print_json({"session": s.id, **r.to_json()})
    else:
        print(visible(str(r), multiline=True))
    return 0


def cmd_fold_search(args: argparse.Namespace) -> int:
    limit = parse_count("--limit", args.limit, minimum=1)
    if not args.query.strip():
        raise InvalidArgument("QUERY is empty: search for an identifier, a path or a phrase")
    s = named_session(args)
    f = _fold_of(args, s, write=False)
    r = f.search(args.query, limit=limit)
    if args.json:
        _print_json({"session": s.id, **r.to_json()})
    else:
        print(visible(str(r), multiline=True))
    if r.unavailable:  # the hits are partial: say why, and fail
        cid, why = r.unavailable[0]
        more = f" (and {len(r.unavailable) - 1} more)" if len(r.unavailable) > 1 else ""
        return _bundle_failure(
            BundleError(f"cp:{cid} could not be searched{more}: {why}"), args.home
        )
    return 0


def _status_json(s: Session, st: FoldStatus) -> dict[str, Any]:
    p = st.pressure
    return {
        "session": s.id,
        "policy": st.policy,
        "tokenizer": st.tokenizer,
        "pressure": p.to_json(),
        "checkpoints": [f"cp:{c}" for c in st.on_surface],
        "folds": dict(st.folds),
        "healthy": st.healthy,
        "bundles": [
            {"ref": f"cp:{b.checkpoint_id}", "state": b.state, "reason": b.reason or None}
            for b in st.bundles
        ],
        "orphans": [f"cp:{o.checkpoint_id}" for o in st.orphans],
        "figures": {
            k: {"value": v.value, "how": v.how, "note": v.note} for k, v in st.figures.items()
        },
    }


def cmd_fold_status(args: argparse.Namespace) -> int:
    args.policy = _policy(args.policy)
    args.window_tokens = _window(args.window)
    s = named_session(args)
    f = _fold_of(args, s, write=False)
    st = f.status()
    if args.json:
        _print_json(_status_json(s, st))
    else:
        print(_header(s))
        print(visible(str(st), multiline=True))
    bad = [b for b in st.bundles if not b.ok]
    if bad:  # the report is whole, but what it reports is not: say so, and fail
        b = bad[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        why = f": {b.reason}" if b.reason else ""
        return _bundle_failure(
            BundleError(f"the bundle of cp:{b.checkpoint_id} is {b.state}{more}{why}"), args.home
        )
    return 0


# --- the demo ------------------------------------------------------------------------------------

_PATH = re.compile(r"\b[\w.-]+(?:/[\w.-]+)+\.\w+\b")


def _canonical(message: Any) -> bytes:
    return json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def demo_fold(html_dir: Path | None) -> Path | None:
    """Fold a temp copy of ``long-refactor`` at a small window, show the result and the status,
    search the archive for a file path its tool output names, recall that message exactly and
    compare its bytes with the original's. Writes ``fold.html`` to ``html_dir`` if given."""
    from ctxsdk.session import Session

    from ..fold import Fold
    from ..samples import sample
    from ..session.kernel import message_of

    original = Session.open(sample("long-refactor"))
    print(f"== fold: long-refactor at a {DEMO_WINDOW:,}-token window (on a temp copy)")
    with tempfile.TemporaryDirectory(prefix="ctxsdk-demo-fold-") as tmp:
        copy = Session.open(original.save(Path(tmp) / "long-refactor"))
        f = Fold(copy, store=Path(tmp) / "bundles", window=DEMO_WINDOW)
        result = f.run()
        for line in str(result).splitlines():
            print(f"   {line}")
        status = f.status()
        for line in str(status).splitlines():
            print(f"   {line}")
        if not result.folded or result.record is None:
            print("   nothing folded, so nothing to search or recall")
            return None
        # The probe: the first file path in the archived tool output, found by code.
        probe = None
        for offset in range(result.record.messages):
            page = f.recall(result.record.checkpoint_id, depth="exact", offset=offset, limit=1)
            msg = page.messages[0]
            content = msg.get("content")
            blocks: list[Any] = content if isinstance(content, list) else []
            if not any(isinstance(b, dict) and b.get("type") == "tool-result" for b in blocks):
                continue
            m = _PATH.search(json.dumps(msg, ensure_ascii=False))
            if m:
                probe = m.group()
                break
        if probe is None:
            print("   no file path in the archived tool output to search for")
            return None
        found = f.search(probe, limit=5)
        print(f"   probe (the first file path in the archived tool output): {probe}")
        for line in str(found).splitlines():
            print(f"   {line}")
        hit = found.hits[0]  # the probe's own message is the checkpoint's earliest match
        index = hit.earliest_message_index if hit.earliest_message_index is not None else 0
        exact = f.recall(f"cp:{hit.checkpoint_id}", depth="exact", offset=index, limit=1)
        for line in str(exact).splitlines():
            print(f"   {line}")
        seq = exact.seqs[0]
        recalled = _canonical(exact.messages[0])
        source = _canonical(message_of(original.raw_events[seq]))
        same = recalled == source
        digest = hashlib.sha256(recalled).hexdigest()[:12]
        verdict = "match" if same else "DO NOT match"
        print(
            f"   recalled seq {seq} exactly: {len(recalled):,} bytes, sha256 {digest}…; the "
            f"bytes {verdict} the original message in the sample"
        )
        if not html_dir:
            return None
        from .._display import page as html_page

        note = (
            f"long-refactor folded at a {DEMO_WINDOW:,}-token window on a temp copy; probe "
            f"{probe!r}; recalled bytes {'match' if same else 'do not match'} the original; "
            "rendered by ctxsdk demo"
        )
        html_dir.mkdir(parents=True, exist_ok=True)
        out = html_dir / "fold.html"
        tmp_page = out.with_suffix(".html.tmp")
        tmp_page.write_text(
            html_page("long-refactor: folded", [result, status, found, exact], note=note),
            encoding="utf-8",
        )
        tmp_page.replace(out)  # a reader never sees half a page
        print(f"   page: {out}")
        return out
