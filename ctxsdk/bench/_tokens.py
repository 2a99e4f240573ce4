"""``ctxsdk bench tokens``: how far the harness's chars/4 estimate is from exact token counts,
per kind of text, and what ctxsdk's exact counting costs over the raw tokenizer.

**Corpus.** Messages in the log's JSON shape (spec §4), deduplicated by content:

- the four sample sessions (``ctxsdk.samples``): every message of every surface event, also
  those compacted away since (this is where the CJK turns and most JSON tool arguments come
  from: the real transcripts have no CJK text);
- the real transcripts in ``shared/data`` (each source skipped when absent): the Claude Code
  JSONL (text, thinking, ``tool_use`` input as JSON arguments, tool results), the SWE-agent
  trajectories' ``history`` (system prompt, issue, thoughts, observations, function-call
  arguments), and the LoCoMo dialogue turns (English chat). ``--quick`` keeps the first 3 of
  the 10 LoCoMo conversations.

**Pieces.** The text of each block (text, reasoning, tool-call arguments, tool-result text) is
one piece when it parses as JSON; otherwise fenced code blocks become pieces of their own and
the rest splits at blank lines. Pieces shorter than ``MIN_CHARS`` characters are left out
(their error is mostly the rounding of ``ceil``), and repeats are counted once.

**Classifier** (``classify``, first rule that matches):

1. ``json``: the stripped piece parses as a JSON object or array;
2. ``cjk``: more than 30% of its non-space characters are CJK (Han, kana, hangul, CJK
   punctuation and full-width forms). This comes before ``code`` so that Chinese prose with
   inline code spans, or a Chinese commit message in a fence, counts as CJK: its tokens are
   dominated by the CJK characters;
3. ``code`` (code and machine output): it has a fenced block, or at least 30% of its
   non-empty lines look like code or machine output (``CODE_LINE``: definitions and
   imports, assignments, statements ending in ``;`` ``{`` ``}`` or ``:``, indented lines,
   diff and traceback lines, ``path:line:`` grep hits, shell prompts, ``ls -l`` rows), or at
   least 8% of its non-space characters are code symbols (``{}[]()<>=;_/\\|$#@*&%^~`` and
   backticks) once inline code spans and ``**`` emphasis are taken out (so Markdown prose
   that mentions ``a/path.py`` stays prose);
4. ``english``: anything else (prose).

**Error.** For each piece and exact tokenizer (``cl100k_base``, ``o200k_base``, ``deepseek``):
``(estimate - exact) / exact`` with ``estimate = ceil(utf16_len / 4)`` (spec §14, without the
per-block and per-message overheads). Reported per kind as the mean, the worst (largest
magnitude, signed) and the total (``sum(estimate) / sum(exact) - 1``, what a budget sees):
``estimate_rel_error_{mean,worst,total}_<kind>_<tokenizer>``. Whole messages are compared
too, the harness's ``estimate_message`` (with its +4 overheads)
against ``count_message``: ``message_estimate_rel_error_*``.

**Throughput.** For each exact tokenizer and each kind of text, ctxsdk's
``Tokenizer.count_batch`` against the raw tokenizer's own ways of counting a batch
(``raw_batches``: tiktoken's threaded ``encode_ordinary_batch`` with its default 8 threads and
with one per CPU, and a plain ``encode_ordinary`` loop; the rust ``tokenizers``'
``encode_batch`` and ``encode_batch_fast``), on the same texts. Each round runs every raw way
and ctxsdk once, in reverse order every other round, GC off; at least 9 rounds, more while
the kind's time budget lasts (1 s, 3 s in the full run). The raw side is its way with the
lowest median over half the rounds (rounds 0, 1, 4, 5, ...), and each side's time is its
median over the other half, so that picking the fastest of several noisy ways does not
flatter the raw side (where ctxsdk makes the very call of one raw way, the best of two noisy
medians alone put the ratio near 0.9):
``counting_over_raw_batch_ratio_<tokenizer>_<kind>`` = raw time / ctxsdk time (target >= 0.9;
the same with best times is in ``notes["counting_over_raw_batch_ratio_best_of"]``), beside
the baseline ``raw_batch_mb_per_s_<tokenizer>_<kind>`` (MB of UTF-8 per second) and the raw
way that won (``notes["raw_batch_fastest"]``). The counts must agree
text for text: ``counting_mismatched_texts_<tokenizer>_<kind>`` (target 0). The kinds: the
``english``, ``code`` and ``json`` pieces; ``cjk``, chat-sized texts made of the CJK
pieces taken in turn, because the data has few of them (text ``i`` joins ``1 + (i % 8) * n``
of the ``n`` pieces; 64 texts, 256 in the full run); ``mixed``, the counted text of every
message; ``locomo``, that of the LoCoMo turns. ``--quick`` times the first texts of each kind
up to ``QUICK_THROUGHPUT_CHARS``.

Whole messages (those whose texts ``mixed`` times): ``TokenCounter.count_messages`` with a
cold cache (text extraction, content hashing, framing, one ``count_batch``) and with every
count cached, against the raw tokenizer's fastest way on the already extracted texts, all in
the same rounds: ``counting_over_raw_throughput_ratio_<tokenizer>`` (target >= 0.8), baseline
``raw_count_batch_mb_per_s_<tokenizer>``; ``counting_warm_over_cold_speedup_<tokenizer>`` is
the cold time over the cached one (target >= 2: the cache must pay).

**Published.** The LoCoMo paper gives about 16.6k tokens per conversation; the bench counts
the dialogue text (the turns' ``text``, one per line, no speaker names) of all 10
conversations with ``cl100k_base``: ``locomo_tokens_over_published_ratio``.
"""

from __future__ import annotations

import ast
import functools
import gc
import json
import os
import re
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import orjson

from ctxsdk.session import TokenCounter, get_tokenizer
from ctxsdk.session.kernel import (
    count_message,
    estimate_message,
    estimate_text,
    message_of,
    message_text_for_count,
)

from .._progress import Progress, resolve_progress
from ._result import BenchResult, Target

__all__ = [
    "CODE_LINE",
    "EXACT_TOKENIZERS",
    "KINDS",
    "MIN_CHARS",
    "Corpus",
    "Kind",
    "Piece",
    "classify",
    "data_dir",
    "load_corpus",
    "run",
    "split_pieces",
]

Kind = Literal["english", "cjk", "code", "json"]
KINDS: Final[tuple[Kind, ...]] = ("english", "cjk", "code", "json")
EXACT_TOKENIZERS: Final[tuple[str, ...]] = ("cl100k_base", "o200k_base", "deepseek")
MIN_CHARS: Final = 20
"""Pieces shorter than this many characters are left out of the error statistics."""

QUICK_THROUGHPUT_CHARS: Final = 30_000
"""``--quick`` times the first texts of each throughput kind up to this many characters."""

LOCOMO_TOKENS_PER_CONVERSATION: Final = 16_600.0
"""LoCoMo paper: about 16.6k tokens per conversation (shared/spec/benchmarks-and-data.md)."""

CODE_LINE: Final = re.compile(
    r"""^\s*(?:
        (?:async\s+)?def\s+\w+ | class\s+\w+ | import\s+[\w.]+ | from\s+[\w.]+\s+import\b
      | function\b | (?:const|let|var)\s+\w+\s*= | export\s | \#include\b | package\s+[\w.]+
      | (?:public|private|protected|static)\s | fn\s+\w+ | return\b.*[;)\]}]$
      | @\w+ | (?:if|for|while|elif|else|try|except|with)\b.*:$ | [\w.\[\]'"]+\s*=[^=].*
      | diff\s--git | @@\s | \+\+\+\s | ---\s | index\s[0-9a-f]+\.\.
      | File\s".+",\sline\s\d+ | Traceback\s | \w*Error:\s
      | \$\s\S | >>>\s | [\w./-]+\.\w+:\d+ | [d-][rwx-]{9}\s | \d+[:\t]
      | [^\w\s]{4,} | .*\[\s*\d+%\]$
    )
    | [;{}]\s*$ | ^\s*[)\]}],?\s*$ | ^\s{4,}\S
    """,
    re.VERBOSE,
)
"""A line that looks like code or machine output (see the module docstring)."""

_CODE_SYMBOLS: Final = frozenset("{}[]()<>=;_/\\|$#@*&%^~`")
_CJK: Final = re.compile(
    "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)
_INLINE: Final = re.compile(r"`[^`\n]+`|\*\*")
_FENCE: Final = re.compile(r"(```.*?(?:```|\Z))", re.DOTALL)
_BLANK_LINE: Final = re.compile(r"\n[ \t\r]*\n")


# --- classifier and pieces -----------------------------------------------------------------------


def _is_json_container(text: str) -> bool:
    if not text or text[0] not in "[{":
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict | list)


def classify(text: str) -> Kind:
    """The kind of one piece of text: ``json``, ``code``, ``cjk`` or ``english`` (rules in the
    module docstring, first match wins)."""
    stripped = text.strip()
    if _is_json_container(stripped):
        return "json"
    nonspace = sum(1 for c in stripped if not c.isspace())
    if nonspace and len(_CJK.findall(stripped)) > 0.3 * nonspace:
        return "cjk"
    if "```" in stripped:
        return "code"
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    if lines and sum(1 for ln in lines if CODE_LINE.search(ln)) >= 0.3 * len(lines):
        return "code"
    chars = [c for c in _INLINE.sub(" ", stripped) if not c.isspace()]
    if chars and sum(1 for c in chars if c in _CODE_SYMBOLS) >= 0.08 * len(chars):
        return "code"
    return "english"


def split_pieces(text: str) -> list[str]:
    """The pieces of one text: the whole (stripped) text when it parses as JSON, else its
    fenced code blocks and its blank-line-separated paragraphs; pieces under
    ``MIN_CHARS`` characters are dropped."""
    stripped = text.strip()
    if len(stripped) < MIN_CHARS:
        return []
    if _is_json_container(stripped):
        return [stripped]
    out: list[str] = []
    for part in _FENCE.split(text):
        if part.startswith("```"):
            out.append(part.strip())
        else:
            out.extend(p.strip() for p in _BLANK_LINE.split(part))
    return [p for p in out if len(p) >= MIN_CHARS]


@dataclass(frozen=True)
class Piece:
    text: str
    kind: Kind
    source: str  # samples, claude-code, swe-agent, locomo


def _block_texts(message: Mapping[str, Any]) -> Iterator[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return
    for b in content:
        if not isinstance(b, Mapping):
            continue
        kind = b.get("type")
        if kind in ("text", "reasoning") and isinstance(b.get("text"), str):
            yield b["text"]
        elif kind == "tool-call" and isinstance(b.get("arguments"), str):
            yield b["arguments"]
        elif kind == "tool-result":
            yield from _block_texts(b)


# --- corpus --------------------------------------------------------------------------------------


def data_dir() -> Path:
    """``$CTXSDK_SHARED_DATA``, else ``shared/data`` next to the repository checkout."""
    env = os.environ.get("CTXSDK_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "data"


def _msg(role: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "content": blocks}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _sample_messages() -> list[dict[str, Any]]:
    from ctxsdk.session import Session

    from ..samples import sample_paths

    out: list[dict[str, Any]] = []
    surface = ("system/message", "user/message", "assistant/message", "tool/result")
    for path in sample_paths().values():
        for ev in Session.open(path).raw_events:
            msg = message_of(ev) if ev["type"] in surface else None
            if msg is not None:
                out.append(msg)
    return out


def _claude_code_messages(folder: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            msg = rec.get("message") if isinstance(rec, dict) else None
            if rec.get("type") not in ("user", "assistant") or not isinstance(msg, dict):
                continue
            content = msg.get("content")
            if isinstance(content, str):
                out.append(_msg(str(msg.get("role")), [_text(content)]))
                continue
            blocks: list[dict[str, Any]] = []
            for b in content if isinstance(content, list) else []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "text":
                    blocks.append(_text(str(b.get("text", ""))))
                elif b.get("type") == "thinking":
                    blocks.append({"type": "reasoning", "text": str(b.get("thinking", ""))})
                elif b.get("type") == "tool_use":
                    args = json.dumps(b.get("input"), ensure_ascii=False)
                    blocks.append(
                        {
                            "type": "tool-call",
                            "id": b.get("id"),
                            "name": b.get("name"),
                            "arguments": args,
                        }
                    )
                elif b.get("type") == "tool_result":
                    inner = b.get("content")
                    if isinstance(inner, str):
                        texts = [_text(inner)]
                    else:
                        texts = [
                            _text(x["text"])
                            for x in inner or []
                            if isinstance(x, dict) and isinstance(x.get("text"), str)
                        ]
                    blocks.append(
                        {
                            "type": "tool-result",
                            "toolCallId": b.get("tool_use_id"),
                            "content": texts,
                        }
                    )
            if blocks:
                out.append(_msg(str(msg.get("role")), blocks))
    return out


def _literal(value: Any) -> Any:
    """SWE-agent stores ``tool_calls`` / ``tool_call_ids`` as Python reprs of lists."""
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    return value


def _swe_agent_messages(folder: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.traj")):
        traj = json.loads(path.read_text(encoding="utf-8"))
        for m in traj.get("history") or []:
            if not isinstance(m, dict) or not isinstance(m.get("content"), str):
                continue
            role = m.get("role")
            if role == "tool":
                ids = _literal(m.get("tool_call_ids")) or [None]
                block = {
                    "type": "tool-result",
                    "toolCallId": ids[0],
                    "content": [_text(m["content"])],
                }
                out.append(_msg("user", [block]))
                continue
            blocks = [_text(m["content"])]
            for call in _literal(m.get("tool_calls")) or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    blocks.append(
                        {
                            "type": "tool-call",
                            "id": call.get("id"),
                            "name": fn.get("name"),
                            "arguments": fn["arguments"],
                        }
                    )
            out.append(_msg(role if role in ("system", "assistant") else "user", blocks))
    return out


def _locomo_conversations(path: Path) -> list[list[tuple[str, str]]]:
    """Per conversation: its (speaker, text) turns, sessions in order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for sample in data:
        conv = sample["conversation"]
        keys = [k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)]
        keys.sort(key=lambda k: int(k.split("_")[1]))
        out.append([(str(t.get("speaker")), str(t.get("text", ""))) for k in keys for t in conv[k]])
    return out


@dataclass
class Corpus:
    messages: list[dict[str, Any]]  # deduplicated by content
    pieces: list[Piece]  # deduplicated by text
    messages_per_source: dict[str, int]
    locomo_dialogues: list[str]  # one text per conversation (all 10), for the published check
    missing: list[str]


def load_corpus(*, quick: bool = False, root: Path | None = None) -> Corpus:
    """The messages and classified pieces the bench measures (see the module docstring)."""
    root = data_dir() if root is None else root
    sources: dict[str, list[dict[str, Any]]] = {"samples": _sample_messages()}
    missing: list[str] = []
    dialogues: list[str] = []
    if (root / "claude-code-transcript").is_dir():
        sources["claude-code"] = _claude_code_messages(root / "claude-code-transcript")
    else:
        missing.append("claude-code-transcript")
    if (root / "swe-agent-trajectories").is_dir():
        sources["swe-agent"] = _swe_agent_messages(root / "swe-agent-trajectories")
    else:
        missing.append("swe-agent-trajectories")
    locomo = root / "locomo" / "locomo10.json"
    if locomo.is_file():
        conversations = _locomo_conversations(locomo)
        dialogues = ["\n".join(text for _, text in c) for c in conversations]
        kept = conversations[:3] if quick else conversations
        sources["locomo"] = [_msg("user", [_text(text)]) for c in kept for _, text in c]
    else:
        missing.append("locomo")

    messages: list[dict[str, Any]] = []
    seen_messages: set[bytes] = set()
    pieces: list[Piece] = []
    seen_pieces: set[str] = set()
    per_source: dict[str, int] = {}
    for source, msgs in sources.items():
        n = 0
        for m in msgs:
            key = orjson.dumps(m.get("content"), option=orjson.OPT_SORT_KEYS)
            if key in seen_messages:
                continue
            seen_messages.add(key)
            messages.append(m)
            n += 1
            for text in _block_texts(m):
                for p in split_pieces(text):
                    if p not in seen_pieces:
                        seen_pieces.add(p)
                        pieces.append(Piece(p, classify(p), source))
        per_source[source] = n
    return Corpus(messages, pieces, per_source, dialogues, missing)


# --- measurements --------------------------------------------------------------------------------


def _error_stats(estimates: list[int], exact: list[int]) -> dict[str, float]:
    errs = [(e - x) / x for e, x in zip(estimates, exact, strict=True) if x > 0]
    if not errs:
        return {}
    return {
        "mean": sum(errs) / len(errs),
        "worst": max(errs, key=abs),
        "total": sum(estimates) / sum(exact) - 1.0,
    }


def run(
    *, quick: bool = False, progress: Progress | bool | None = None, root: Path | None = None
) -> BenchResult:
    report = resolve_progress(progress)
    repeat = 9  # interleaved rounds at least, then more within the budget (seconds)
    budget = 1.0 if quick else 3.0
    steps = 1 + 2 * len(EXACT_TOKENIZERS)
    report(0, steps, "bench tokens")
    corpus = load_corpus(quick=quick, root=root)
    report(1, steps, "bench tokens")
    by_kind: dict[Kind, list[Piece]] = {k: [p for p in corpus.pieces if p.kind == k] for k in KINDS}
    estimates = {k: [estimate_text(p.text) for p in ps] for k, ps in by_kind.items()}
    texts = [message_text_for_count(m) for m in corpus.messages]
    msg_estimates = [estimate_message(m) for m in corpus.messages]
    framing = [count_message(m, _ZERO) for m in corpus.messages]
    throughput_texts = _throughput_texts(corpus, by_kind, texts, quick=quick)
    messages = corpus.messages[: len(throughput_texts["mixed"])]  # "mixed" is their texts
    framing = framing[: len(messages)]
    gc.collect()
    gc.freeze()  # what is loaded stays: each timing's collection before it is then quick
    raw_winners: dict[str, str] = {}
    rounds_done: dict[str, int] = {}
    best_ratios: dict[str, float] = {}

    metrics: dict[str, float] = {}
    baselines: dict[str, float] = {}
    worst_pieces: dict[str, str] = {}
    for i, name in enumerate(EXACT_TOKENIZERS):
        tk = get_tokenizer(name)
        for kind, ps in by_kind.items():
            exact = tk.count_batch([p.text for p in ps]) if ps else []
            stats = _error_stats(estimates[kind], exact)
            for stat, value in stats.items():
                metrics[f"estimate_rel_error_{stat}_{kind}_{name}"] = value
            if stats:
                j = max(
                    (j for j in range(len(ps)) if exact[j] > 0),
                    key=lambda j: abs(estimates[kind][j] - exact[j]) / exact[j],
                )
                worst_pieces[f"{kind}_{name}"] = (
                    f"{ps[j].source}: {len(ps[j].text)} chars, estimate {estimates[kind][j]}, "
                    f"exact {exact[j]}: {ps[j].text[:80]!r}"
                )
        counts = [count_message(m, tk) for m in corpus.messages]
        for stat, value in _error_stats(msg_estimates, counts).items():
            metrics[f"message_estimate_rel_error_{stat}_{name}"] = value
        report(2 + 2 * i, steps, "bench tokens")

        # Throughput, per kind of text: the raw tokenizer's own batch against ctxsdk's
        # count_batch on the same texts, interleaved; the counts must agree text for text.
        raw = raw_batches(tk)
        for what, what_texts in throughput_texts.items():
            v = _versus_raw(
                raw, {"count_batch": tk.count_batch}, what_texts, rounds=repeat, budget=budget
            )
            metrics[f"counting_over_raw_batch_ratio_{name}_{what}"] = v.ratio("count_batch")
            rounds_done[f"{name}_{what}"] = len(v.raw_times)
            best_ratios[f"{name}_{what}"] = round(v.best_ratio("count_batch"), 3)
            metrics[f"counting_mismatched_texts_{name}_{what}"] = float(v.mismatched)
            baselines[f"raw_batch_mb_per_s_{name}_{what}"] = _mb(what_texts) / statistics.median(
                v.raw_times
            )
            raw_winners[f"{name}_{what}"] = v.fastest

        # Whole messages (those whose texts "mixed" times): ctxsdk's cold counter (text
        # extraction, hashing, framing, one count_batch) and a warm one (every count cached)
        # against the raw tokenizer's fastest batch on the already extracted texts.
        warm_counter = TokenCounter(tk)
        warm_counter.count_messages(messages)

        def cold(_: list[str], tk: Any = tk) -> list[int]:
            counts = TokenCounter(tk).count_messages(messages)
            return [c - f for c, f in zip(counts, framing, strict=True)]

        def warm(_: list[str], counter: TokenCounter = warm_counter) -> list[int]:
            counts = counter.count_messages(messages)
            return [c - f for c, f in zip(counts, framing, strict=True)]

        mixed = throughput_texts["mixed"]
        v = _versus_raw(raw, {"cold": cold, "warm": warm}, mixed, rounds=repeat, budget=budget)
        metrics[f"counting_over_raw_throughput_ratio_{name}"] = v.ratio("cold")
        rounds_done[f"{name}_messages"] = len(v.raw_times)
        metrics[f"counting_mismatched_texts_{name}_messages"] = float(v.mismatched)
        baselines[f"raw_count_batch_mb_per_s_{name}"] = _mb(mixed) / statistics.median(v.raw_times)
        raw_winners[f"{name}_messages"] = v.fastest
        metrics[f"counting_warm_over_cold_speedup_{name}"] = statistics.median(
            v.ours_times["cold"]
        ) / statistics.median(v.ours_times["warm"])
        report(3 + 2 * i, steps, "bench tokens")

    gc.unfreeze()

    published: dict[str, float] = {}
    if corpus.locomo_dialogues:
        cl100k = get_tokenizer("cl100k_base").count_batch(corpus.locomo_dialogues)
        metrics["locomo_tokens_per_conversation_cl100k_base"] = sum(cl100k) / len(cl100k)
        metrics["locomo_tokens_per_conversation_estimate"] = sum(
            estimate_text(d) for d in corpus.locomo_dialogues
        ) / len(corpus.locomo_dialogues)
        published["locomo_tokens_per_conversation"] = LOCOMO_TOKENS_PER_CONVERSATION
        metrics["locomo_tokens_over_published_ratio"] = (
            metrics["locomo_tokens_per_conversation_cl100k_base"] / LOCOMO_TOKENS_PER_CONVERSATION
        )

    notes: dict[str, Any] = {
        "pieces_per_kind": {k: len(v) for k, v in by_kind.items()},
        "pieces_per_source_and_kind": {
            f"{src}/{k}": n
            for src in corpus.messages_per_source
            for k in KINDS
            if (n := sum(1 for p in by_kind[k] if p.source == src))
        },
        "messages_per_source": corpus.messages_per_source,
        "messages": len(corpus.messages),
        "text_mb": round(_mb(texts), 3),
        "mean_chars_per_message": round(sum(map(len, texts)) / max(1, len(texts)), 1),
        "cpus": os.cpu_count(),
        "missing_sources": corpus.missing,
        "worst_pieces": worst_pieces,
        "repeat": repeat,
        "throughput_texts": {
            k: {"texts": len(v), "mb": round(_mb(v), 4)} for k, v in throughput_texts.items()
        },
        "raw_batch_fastest": raw_winners,
        "rounds": rounds_done,
        "counting_over_raw_batch_ratio_best_of": best_ratios,
        "budget_s": budget,
        "min_piece_chars": MIN_CHARS,
    }
    few = [k for k, v in by_kind.items() if len(v) < 10]
    if few:
        notes["few_samples"] = (
            f"kinds with fewer than 10 pieces: {', '.join(few)}; their error statistics are "
            "anecdotal"
        )
    return BenchResult(
        name="tokens",
        metrics=metrics,
        baselines=baselines,
        published=published,
        targets=[
            *(
                Target(metric=f"counting_over_raw_throughput_ratio_{name}", op=">=", value=0.8)
                for name in EXACT_TOKENIZERS
            ),
            *(
                Target(metric=f"counting_warm_over_cold_speedup_{name}", op=">=", value=2.0)
                for name in EXACT_TOKENIZERS
            ),
            *(
                Target.at_least(f"counting_over_raw_batch_ratio_{name}_{kind}", 0.9)
                for name in EXACT_TOKENIZERS
                for kind in throughput_texts
            ),
            *(
                Target.at_most(f"counting_mismatched_texts_{name}_{kind}", 0)
                for name in EXACT_TOKENIZERS
                for kind in [*throughput_texts, "messages"]
            ),
        ],
        notes=notes,
    )


class _ZeroTokenizer:
    """Counts nothing: ``count_message`` with it is a message's chat framing alone."""

    name = "zero"

    def count(self, text: str) -> int:
        return 0

    def count_batch(self, texts: list[str]) -> list[int]:
        return [0] * len(texts)


_ZERO: Final = _ZeroTokenizer()

RawCount = Callable[[list[str]], list[int]]


def raw_batches(tokenizer: Any) -> dict[str, RawCount]:
    """The ways the raw tokenizer under ``tokenizer`` counts a batch with no ctxsdk code, by
    name: tiktoken's ``encode_ordinary_batch`` with its default 8 threads and with one per
    CPU, and a plain ``encode_ordinary`` loop; the rust ``tokenizers``' ``encode_batch`` and
    ``encode_batch_fast``. A count is the length of what each returns."""
    encoding = getattr(tokenizer, "encoding", None)
    if encoding is not None:
        cpus = os.cpu_count() or 1

        def batch(texts: list[str], threads: int = 8) -> list[int]:
            return [len(ids) for ids in encoding.encode_ordinary_batch(texts, num_threads=threads)]

        def loop(texts: list[str]) -> list[int]:
            encode = encoding.encode_ordinary
            return [len(encode(t)) for t in texts]

        out: dict[str, RawCount] = {"encode_ordinary_batch(num_threads=8)": batch}
        if cpus != 8:
            out[f"encode_ordinary_batch(num_threads={cpus})"] = functools.partial(
                batch, threads=cpus
            )
        out["encode_ordinary loop"] = loop
        return out
    hf = tokenizer.tokenizer  # tokenizers.Tokenizer

    def encode_batch(texts: list[str]) -> list[int]:
        return [len(e) for e in hf.encode_batch(texts, add_special_tokens=False)]

    def encode_batch_fast(texts: list[str]) -> list[int]:
        return [len(e) for e in hf.encode_batch_fast(texts, add_special_tokens=False)]

    return {"encode_batch": encode_batch, "encode_batch_fast": encode_batch_fast}


@dataclass
class _Versus:
    raw_times: list[float]  # per round, of the fastest raw way
    ours_times: dict[str, list[float]]
    fastest: str
    mismatched: int

    def ratio(self, name: str) -> float:
        """The raw side's median time over that of ``ours[name]``."""
        return statistics.median(self.raw_times) / statistics.median(self.ours_times[name])

    def best_ratio(self, name: str) -> float:
        """The same with the best times (in the notes)."""
        return min(self.raw_times) / min(self.ours_times[name])


def _versus_raw(
    raw: dict[str, RawCount],
    ours: dict[str, RawCount],
    texts: list[str],
    *,
    rounds: int,
    budget: float,
) -> _Versus:
    """Every raw way and every one of ``ours`` on ``texts``, and how many counts of ``ours``
    differ from the raw tokenizer's.

    Each round runs every raw way and every one of ``ours`` once, so that all see the same
    machine state, in reverse order every other round; at least ``rounds`` rounds, then more
    while the time spent is under ``budget`` seconds (at most 50 times ``rounds``). A side's
    time is its median over the rounds (on a busy machine the best of a few rounds of a
    multi-threaded tokenizer was off by up to a third either way; the median by a tenth), and
    the raw side is its way with the lowest median. The way is picked on half the rounds
    (0, 1, 4, 5, ...: both orders) and the times are those of the other half, so the pick's
    luck does not carry into the figure. The cyclic GC is off while timing."""
    expected = next(iter(raw.values()))(texts)
    mismatched = 0
    for fn in ours.values():
        got = fn(texts)  # also the warm-up
        mismatched += sum(1 for a, b in zip(expected, got, strict=False) if a != b)
        mismatched += abs(len(expected) - len(got))
    sides = [*(("raw", n, f) for n, f in raw.items()), *(("ours", n, f) for n, f in ours.items())]
    times: dict[tuple[str, str], list[float]] = {(side, n): [] for side, n, _ in sides}
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    start = time.perf_counter()
    done = 0
    try:
        while done < rounds or (time.perf_counter() - start < budget and done < 50 * rounds):
            for side, n, fn in sides if done % 2 == 0 else sides[::-1]:
                t0 = time.perf_counter()
                fn(texts)
                times[side, n].append(time.perf_counter() - t0)
            done += 1
    finally:
        if was:
            gc.enable()
    pick = [i for i in range(done) if i % 4 < 2]
    kept = [i for i in range(done) if i % 4 >= 2] or pick  # fewer than 3 rounds: all of them
    fastest = min(raw, key=lambda n: statistics.median(times["raw", n][i] for i in pick))
    return _Versus(
        raw_times=[times["raw", fastest][i] for i in kept],
        ours_times={n: [times["ours", n][i] for i in kept] for n in ours},
        fastest=fastest,
        mismatched=mismatched,
    )


def _throughput_texts(
    corpus: Corpus, by_kind: dict[Kind, list[Piece]], texts: list[str], *, quick: bool
) -> dict[str, list[str]]:
    """The texts each throughput kind times (see the module docstring)."""
    out: dict[str, list[str]] = {k: [p.text for p in by_kind[k]] for k in KINDS if by_kind[k]}
    cjk = out.get("cjk", [])
    if cjk:  # the data has little CJK text: chat-sized texts made of its CJK pieces in turn
        n = 64 if quick else 256
        out["cjk"] = [
            "\n".join(cjk[(i + j) % len(cjk)] for j in range(1 + i % 8 * len(cjk)))
            for i in range(n)
        ]
    out["mixed"] = texts
    start = 0
    for source, n in corpus.messages_per_source.items():
        if source == "locomo":
            out["locomo"] = texts[start : start + n]
        start += n
    if quick:  # the first texts of each kind up to QUICK_THROUGHPUT_CHARS
        for what, ts in out.items():
            size = end = 0
            while end < len(ts) and size < QUICK_THROUGHPUT_CHARS:
                size += len(ts[end])
                end += 1
            out[what] = ts[:end]
    return out


def _mb(texts: list[str]) -> float:
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
