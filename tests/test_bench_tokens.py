"""ctxsdk.bench._tokens: the estimate-error / counting-throughput benchmark.

The quick bench runs once per module. Its timings are never asserted (only that the ratios
exist and are finite); what is checked is the shape of the result and the classifier.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ctxsdk.bench import BenchResult
from ctxsdk.bench import _tokens as bt
from ctxsdk.session import get_tokenizer

THROUGHPUT = [f"counting_over_raw_throughput_ratio_{t}" for t in bt.EXACT_TOKENIZERS]
SPEEDUP = [f"counting_warm_over_cold_speedup_{t}" for t in bt.EXACT_TOKENIZERS]


@pytest.fixture(scope="module")
def result() -> BenchResult:
    return bt.run(quick=True, progress=False)


def test_result_has_metrics_and_targets(result: BenchResult) -> None:
    assert result.name == "tokens"
    for name in [*THROUGHPUT, *SPEEDUP]:
        assert name in result.metrics
    targets = {t.metric: t for t in result.targets}
    for name in THROUGHPUT:
        assert targets[name].op == ">=" and targets[name].value == 0.8
    assert all(t.metric in result.metrics for t in result.targets)
    counts = result.notes["pieces_per_kind"]
    assert set(counts) == set(bt.KINDS)
    for kind in bt.KINDS:
        for tok in bt.EXACT_TOKENIZERS:
            for stat in ("mean", "worst", "total"):
                key = f"estimate_rel_error_{stat}_{kind}_{tok}"
                assert (key in result.metrics) == (counts[kind] > 0), key
        for tok in bt.EXACT_TOKENIZERS:
            assert f"message_estimate_rel_error_total_{tok}" in result.metrics
    out = result.to_json_dict()
    assert set(out) >= {"name", "metrics", "baselines", "published", "targets", "met"}
    json.dumps(out)  # serialisable as the CLI writes it
    assert "bench tokens" in result.table()


def test_counting_against_the_raw_batch_per_kind(result: BenchResult) -> None:
    # Every kind of text, every exact tokenizer: ctxsdk's count_batch timed beside the raw
    # tokenizer's own batch, the counts compared text for text.
    kinds = result.notes["throughput_texts"]
    assert set(kinds) == {*bt.KINDS, "mixed", "locomo"}
    assert all(v["texts"] > 0 and v["mb"] > 0 for v in kinds.values())
    targets = {t.metric: t for t in result.targets}
    for tok in bt.EXACT_TOKENIZERS:
        for kind in kinds:
            ratio = f"counting_over_raw_batch_ratio_{tok}_{kind}"
            assert math.isfinite(result.metrics[ratio]) and result.metrics[ratio] > 0
            assert targets[ratio].op == ">=" and targets[ratio].value == 0.9
            assert f"raw_batch_mb_per_s_{tok}_{kind}" in result.baselines
            assert result.notes["raw_batch_fastest"][f"{tok}_{kind}"] in bt.raw_batches(
                get_tokenizer(tok)
            )
        for kind in [*kinds, "messages"]:
            mismatched = f"counting_mismatched_texts_{tok}_{kind}"
            assert result.metrics[mismatched] == 0, mismatched
            assert targets[mismatched].op == "<=" and targets[mismatched].value == 0


def test_raw_batches_count_what_the_tokenizer_counts() -> None:
    texts = ["hello world", "深度求索是一家人工智能公司。", "def f(x):\n    return x\n", ""]
    for tok in bt.EXACT_TOKENIZERS:
        tk = get_tokenizer(tok)
        expected = [len(tk.encode(t)) for t in texts]  # type: ignore[attr-defined]
        ways = bt.raw_batches(tk)
        assert len(ways) >= 2
        for name, way in ways.items():
            assert way(texts) == expected, (tok, name)


def test_errors_and_ratios_are_finite(result: BenchResult) -> None:
    for name, value in {**result.metrics, **result.baselines}.items():
        assert math.isfinite(value), name
    for name in [*THROUGHPUT, *SPEEDUP]:
        assert result.metrics[name] > 0
    for name, value in result.metrics.items():
        if name.startswith("estimate_rel_error_"):
            assert value > -1.0, name  # an estimate is never negative


def test_every_kind_has_pieces_from_the_samples(result: BenchResult) -> None:
    # The samples alone supply CJK turns and JSON tool arguments when real data lacks them.
    per = result.notes["pieces_per_source_and_kind"]
    for kind in bt.KINDS:
        assert per.get(f"samples/{kind}", 0) > 0, kind


def test_real_data_is_used_when_present(result: BenchResult, shared_dir: Path) -> None:
    assert (shared_dir / "data" / "locomo" / "locomo10.json").is_file()
    assert result.notes["missing_sources"] == []
    assert set(result.notes["messages_per_source"]) == {
        "samples",
        "claude-code",
        "swe-agent",
        "locomo",
    }
    assert result.published["locomo_tokens_per_conversation"] == 16_600
    assert "locomo_tokens_over_published_ratio" in result.metrics


def test_absent_sources_are_skipped(tmp_path: Path) -> None:
    corpus = bt.load_corpus(quick=True, root=tmp_path)
    assert sorted(corpus.missing) == ["claude-code-transcript", "locomo", "swe-agent-trajectories"]
    assert set(corpus.messages_per_source) == {"samples"}
    assert corpus.pieces and corpus.locomo_dialogues == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"command": "ls -la", "description": "List files"}', "json"),
        ('[{"id": 1}, {"id": 2}]', "json"),
        ('  {\n  "nested": {"a": [1, 2, 3]}\n}\n', "json"),
        ("def add(a, b):\n    return a + b\n", "code"),
        ("import os\nfrom pathlib import Path\n\nx = Path(os.getcwd())\n", "code"),
        ("```\nmake test\n```", "code"),
        ("function f(x) {\n  return x * 2;\n}", "code"),
        (
            'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
            "ValueError: bad",
            "code",
        ),
        ("src/app.py:12: def main():\nsrc/app.py:40: main()", "code"),
        ("-rw-r--r-- 1 root root 120 Jan 1 10:00 a.txt\ndrwxr-xr-x 2 root root 40 b", "code"),
        ("深度求索是一家人工智能公司，成立于2023年。", "cjk"),
        ("谢谢！最后再给一个中文的 PR 标题和一句话摘要。", "cjk"),
        ("東京は日本の首都です。ここには多くの人が住んでいます。", "cjk"),
        ("**摘要：** 把 `core.py` 按层拆分，旧的导入仍然可用，但会给出警告。", "cjk"),
        ("Hey Mel! Good to see you! How have you been?", "english"),
        (
            "The script reproduces the bug. Next I will open the file and look at the "
            "function that rounds the value.",
            "english",
        ),
        ("Edited `ledger/core.py`: replaced **one** occurrence of the import.", "english"),
    ],
)
def test_classifier_obvious_examples(text: str, kind: str) -> None:
    assert bt.classify(text) == kind


def test_split_pieces() -> None:
    text = "Intro paragraph that is long enough.\n\n```python\nx = 1\ny = 2\n```\n\nok\n\nLast paragraph, also long enough."
    pieces = bt.split_pieces(text)
    assert pieces == [
        "Intro paragraph that is long enough.",
        "```python\nx = 1\ny = 2\n```",
        "Last paragraph, also long enough.",
    ]
    assert [bt.classify(p) for p in pieces] == ["english", "code", "english"]
    blob = '{"a": "x\\n\\ny", "b": [1, 2, 3], "c": "long enough"}'
    assert bt.split_pieces(blob) == [blob]  # JSON is never split
    assert bt.split_pieces("short") == []
