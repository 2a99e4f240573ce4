"""``ctxsdk bench redact``: how many secrets redaction withholds, and what else it touches.

**Corpora.** ``_redact_corpus``: positives built from the formats the public secret scanners
document (provider keys, private keys, connection strings, JWTs, labelled assignments in
code, config, shell, JSON, YAML, English and Chinese), negatives a redactor must leave
(placeholders, hashes, UUIDs, prose about tokens and passwords, code identifiers); the rules
were written against it, and the targets are checked on it. Four more were each written by
someone who read neither the rules nor the other corpora, as an agent's logs show secrets
(tool output, chat, configs, tool-call arguments). ``_redact_holdout``, ``_redact_blind`` and
``_redact_final`` were each scored once, blind, and their misses then drove general fixes,
so they are no longer blind (``holdout_*``, ``holdout2_*``, ``holdout3_*``);
``_redact_unseen`` was written last and never used to change the rules (``blind_*``): it is
the honest estimate of what a user's data gets, and it carries the same targets, so the
bench fails when the rules do not hold on data they were not shaped to.

**Scoring.** A positive is caught when its secret does not survive in ``redact(text).text``
(a partial survival counts as a miss). A negative is a false positive when the text comes
back changed at all. Recall and false-positive rate per family; ``identifiers_redacted``
counts code identifiers touched (target 0).

**Baselines, same run.** ``detect-secrets`` (when installed), each case written to a file
whose extension fits its syntax (``.py``, ``.yaml``, ``.json``, ``.sh``, ``.env`` …), scanned
with its default plugins and filters. It is scored generously: a positive counts as found
when any reported value overlaps the secret (its GitHub plugin reports only the ``ghp``
prefix), a negative as a false positive when anything is reported. ``union_*``: ours and
detect-secrets together (what combining them would give).

**Doors.** ``door_leaks``: every corpus positive fed to every way into a memory (remember's
text, name, link and until, a source quote, rename, JSON and MEMORY.md import, ingest of a
session holding them in prompts, replies, tool calls and results, the session map, the four
memory tools) and to a Merge of sessions holding them (its block, its injected text); the
count of positives whose secret is then in the SQLite file, its WAL or any rendered text,
though ``redact`` withholds it from the case's text alone (``door_leaks``: what the doors add
to the engine's misses, target 0), and with the engine's own misses
(``door_leaks_with_engine_misses``).

**Speed.** ``redact_mb_per_s`` on the corpus texts joined, best of 3 interleaved with the
floor's, and
``redact_over_regex_floor_ratio``: its time over one pass of a single compiled regex over the
same text (the floor any regex-based redactor pays).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from .._progress import Progress, resolve_progress
from ..session import redact
from ._redact_corpus import NEGATIVE_FAMILIES, POSITIVE_FAMILIES, Case, corpus
from ._result import BenchResult, Target, best_of

__all__ = ["run", "score"]

Detector = Callable[[list[Case]], list[bool]]  # per case: positive -> caught, negative -> touched


def _ours(cases: list[Case]) -> list[bool]:
    out = []
    for c in cases:
        text = redact(c.text).text
        out.append(c.secret not in text if c.positive and c.secret else text != c.text)
    return out


_EXT = {
    "python": "py", "python-dict": "py", "python-kwarg": "py", "js": "js", "js-object": "js",
    "ts": "ts", "go": "go", "java": "java", "ruby": "rb", "php": "php", "json": "json",
    "json-escaped": "json", "yaml": "yaml", "yaml-quoted": "yaml", "toml": "toml", "ini": "ini",
    "dotenv": "env", "shell-export": "sh", "shell-inline": "sh", "cli-flag": "sh",
    "curl-header": "sh", "curl-u": "sh", "docker": "sh", "powershell": "ps1", "xml": "xml",
    "aws-secret": "ini", "netrc": "txt",
}  # fmt: skip


def _detect_secrets() -> Detector | None:
    try:
        from detect_secrets.core.secrets_collection import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def detect(cases: list[Case]) -> list[bool]:
        out = []
        with tempfile.TemporaryDirectory() as tmp, default_settings():
            for i, c in enumerate(cases):
                path = Path(tmp) / f"case{i}.{_EXT.get(c.shape, 'txt')}"
                path.write_text(c.text + "\n", encoding="utf-8")
                found = SecretsCollection()
                found.scan_file(str(path))
                values = [s.secret_value or "" for f in found.data for s in found.data[f]]
                if c.positive and c.secret:
                    out.append(any(v and (v in c.secret or c.secret in v) for v in values))
                else:
                    out.append(bool(values))
        return out

    return detect


def score(cases: list[Case], hits: list[bool], prefix: str = "") -> dict[str, float]:
    """Recall per positive family, false-positive rate per negative family, and totals."""
    n: Counter[str] = Counter()
    k: Counter[str] = Counter()
    for c, hit in zip(cases, hits, strict=True):
        n[c.family] += 1
        k[c.family] += hit
    out: dict[str, float] = {}
    for fam in POSITIVE_FAMILIES:
        if n[fam]:
            out[f"{prefix}recall_{fam.replace('-', '_')}"] = k[fam] / n[fam]
    for fam in NEGATIVE_FAMILIES:
        if n[fam]:
            out[f"{prefix}false_positive_rate_{fam}"] = k[fam] / n[fam]
    pos = [f for f in POSITIVE_FAMILIES if n[f]]
    neg = [f for f in NEGATIVE_FAMILIES if n[f]]
    key_fams = [f for f in ("provider", "private-key") if n[f]]
    if key_fams:
        out[f"{prefix}recall_provider_and_private_key"] = sum(k[f] for f in key_fams) / sum(
            n[f] for f in key_fams
        )
    if pos:
        out[f"{prefix}recall_all"] = sum(k[f] for f in pos) / sum(n[f] for f in pos)
    if neg:
        out[f"{prefix}false_positive_rate"] = sum(k[f] for f in neg) / sum(n[f] for f in neg)
    out[f"{prefix}identifiers_redacted"] = float(k["identifier"])
    return out


def _extra_corpus(module_name: str, function: str) -> list[Case]:
    """A corpus written apart from the rules, when its module is present."""
    import importlib

    try:
        module = importlib.import_module(f"ctxsdk.bench.{module_name}")
    except ImportError:
        return []
    cases: list[Case] = getattr(module, function)()
    return cases


def _speed(cases: Iterable[Case]) -> dict[str, float]:
    import re

    text = "\n".join(c.text for c in cases) * 20
    floor_re = re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}+")
    ours = floor = float("inf")
    for _ in range(3):  # best of three, interleaved: drift and load hit both alike
        ours = min(ours, best_of(lambda: redact(text), 1))
        floor = min(floor, best_of(lambda: floor_re.findall(text), 1))
    mb = len(text.encode("utf-8")) / 1e6
    return {"redact_mb_per_s": mb / ours, "redact_over_regex_floor_ratio": ours / floor}


def run(*, quick: bool = False, progress: Progress | None = None) -> BenchResult:
    report = resolve_progress(progress)
    cases = corpus()
    extra = [
        (prefix, cases_)
        for prefix, module, function in (
            ("holdout_", "_redact_holdout", "holdout"),
            ("holdout2_", "_redact_blind", "blind"),
            ("holdout3_", "_redact_final", "final"),
            ("blind_", "_redact_unseen", "unseen"),
        )
        if (cases_ := _extra_corpus(module, function))
    ]
    steps = 4
    report(0, steps, "redact")
    metrics = score(cases, _ours(cases))
    baselines: dict[str, float] = {}
    notes: dict[str, object] = {
        "quick": quick,  # quick: the doors see every third positive; the rest is the same
        "corpus": dict(Counter(c.family for c in cases)),
    }
    for prefix, extra_cases in extra:
        metrics.update(score(extra_cases, _ours(extra_cases), prefix))
        notes[f"{prefix}corpus"] = dict(Counter(c.family for c in extra_cases))
    report(1, steps, "redact")
    detect = _detect_secrets()
    if detect is not None:
        theirs = detect(cases)
        baselines.update(score(cases, theirs, "detect_secrets_"))
        union = [a or b for a, b in zip(_ours(cases), theirs, strict=True)]
        baselines.update(score(cases, union, "union_"))
        for prefix, extra_cases in extra:
            baselines.update(score(extra_cases, detect(extra_cases), f"{prefix}detect_secrets_"))
    else:
        notes["detect_secrets"] = "not installed: pip install detect-secrets for the baseline"
    report(2, steps, "redact")
    from ._redact_doors import door_leaks

    doors, total = door_leaks([c for c in cases if c.positive], quick=quick)
    metrics["door_leaks"] = float(doors)
    metrics["door_leaks_with_engine_misses"] = float(total)
    report(3, steps, "redact")
    t0 = time.perf_counter()
    metrics.update(_speed(cases))
    notes["speed_seconds"] = round(time.perf_counter() - t0, 2)
    report(4, steps, "redact")
    targets = [
        Target.at_least("recall_provider_and_private_key", 0.95),
        Target.at_least("recall_labelled", 0.90),
        Target.at_most("false_positive_rate", 0.02),
        Target.at_most("identifiers_redacted", 0),
        Target.at_most("door_leaks", 0),
    ]
    if "blind_recall_all" in metrics:  # the same targets on the corpus no rule was shaped to
        targets += [
            Target.at_least("blind_recall_provider_and_private_key", 0.95),
            Target.at_least("blind_recall_labelled", 0.90),
            Target.at_most("blind_false_positive_rate", 0.02),
            Target.at_most("blind_identifiers_redacted", 0),
        ]
    return BenchResult(
        name="redact", metrics=metrics, baselines=baselines, targets=targets, notes=notes
    )
