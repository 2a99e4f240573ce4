"""What context costs: provider price profiles and the prefix-cache arithmetic folds are
judged by.

A request's prompt splits at the first node that differs from the previous request's prompt
(``m``): the tokens before it are warm (the provider's prefix cache can serve them, at the
hit price, with realisation ``h``), the rest are cold (the miss price). A fold that rewrites
an early node makes everything after it cold; a leaf fold at the frontier keeps the frozen
prefix warm. The profiles are the ones the Epistemic Fold seed published (captured
2026-09; prices per million tokens), kept here as data, not advice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._display import Rendered, kv, section
from ..errors import InvalidArgument, UnknownName

__all__ = [
    "PROFILES",
    "EconomicsProfile",
    "PrefixSplit",
    "UsageCost",
    "prefix_split",
    "profile",
    "usage_cost",
]

CacheMode = Literal["automatic", "explicit", "none"]


@dataclass(frozen=True)
class EconomicsProfile:
    """Prices (USD per million tokens) and cache behaviour of one provider route."""

    id: str
    input_miss_per_m: float
    input_hit_per_m: float
    output_per_m: float
    window_tokens: int
    cache_mode: CacheMode = "automatic"
    cache_write_per_m: float = 0.0
    minimum_cacheable_tokens: int = 0
    model_pattern: str = "*"
    source: str = ""

    @property
    def rho(self) -> float:
        """Hit price over miss price: how much a warm token saves."""
        return self.input_hit_per_m / self.input_miss_per_m if self.input_miss_per_m else 1.0

    def warm_price(self, h: float) -> float:
        """The expected price of one warm prompt token (per token) at realisation ``h``."""
        return (h * self.input_hit_per_m + (1 - h) * self.input_miss_per_m) / 1e6

    def request_cost(
        self, prompt: int, warm: int, *, h: float, output: int = 0, cache_write: int = 0
    ) -> float:
        """USD of one request: ``warm`` of its ``prompt`` tokens cacheable, a share ``h`` of
        them actually served from cache; cold and unrealised tokens at the miss price."""
        if not 0.0 <= h <= 1.0:
            raise InvalidArgument(f"cache realisation h must be in [0, 1], got {h}")
        warm = min(max(warm, 0), prompt)
        if self.cache_mode == "none" or warm < self.minimum_cacheable_tokens:
            warm = 0
        hit = warm * h
        miss = prompt - hit
        return (
            hit * self.input_hit_per_m
            + miss * self.input_miss_per_m
            + cache_write * self.cache_write_per_m
            + output * self.output_per_m
        ) / 1e6

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str | Path) -> EconomicsProfile:
        """A profile from the seed's JSON schema (a dict, or a path to a file)."""
        if not isinstance(data, Mapping):
            data = json.loads(Path(data).read_text(encoding="utf-8"))
            assert isinstance(data, Mapping)
        try:
            pricing, cache, context = data["pricing"], data["cache"], data["context"]
            return cls(
                id=str(data["id"]),
                input_miss_per_m=float(pricing["inputMissPerM"]),
                input_hit_per_m=float(pricing["inputHitPerM"]),
                output_per_m=float(pricing["outputPerM"]),
                cache_write_per_m=float(pricing.get("cacheWritePerM", 0.0)),
                window_tokens=int(context["windowTokens"]),
                cache_mode=cache["mode"],
                minimum_cacheable_tokens=int(cache.get("minimumCacheableTokens", 0)),
                model_pattern=str(data.get("modelPattern", "*")),
                source=str(data.get("source", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidArgument(f"not an economics profile: missing or bad {exc}") from None


PROFILES: dict[str, EconomicsProfile] = {
    p.id: p
    for p in (
        EconomicsProfile(
            "deepseek-flash-2026-09", 0.28, 0.0056, 0.42, 131072,
            minimum_cacheable_tokens=64, model_pattern="deepseek-*flash*",
            source="DeepSeek public pricing, captured 2026-09-28 by the Epistemic Fold seed",
        ),
        EconomicsProfile(
            "deepseek-pro-2026-09", 0.56, 0.0185, 1.68, 131072,
            minimum_cacheable_tokens=64, model_pattern="deepseek-*pro*",
            source="DeepSeek public pricing, captured 2026-09 by the Epistemic Fold seed",
        ),
        EconomicsProfile(
            "openai-gpt-5.6-2026-09", 1.25, 0.125, 10.0, 400000, cache_mode="explicit",
            cache_write_per_m=1.5625, minimum_cacheable_tokens=1024, model_pattern="gpt-5.6*",
            source="OpenAI public pricing, captured 2026-09 by the Epistemic Fold seed",
        ),
        EconomicsProfile(
            "synthetic-no-cache", 1.0, 1.0, 1.0, 128000, cache_mode="none",
            source="a route without a prefix cache (every token a miss)",
        ),
    )
}  # fmt: skip


def profile(name_or_profile: str | EconomicsProfile) -> EconomicsProfile:
    """A built-in profile by id (or the profile itself)."""
    if isinstance(name_or_profile, EconomicsProfile):
        return name_or_profile
    try:
        return PROFILES[name_or_profile]
    except KeyError:
        raise UnknownName(
            f"no economics profile {name_or_profile!r}; the built-in ones are: "
            + ", ".join(sorted(PROFILES))
        ) from None


@dataclass(frozen=True)
class PrefixSplit:
    """How one request's prompt relates to the previous one: ``nodes`` in common from the
    front (SPN), the previous request's tokens before the split (SPT, warm) and after it (IST,
    invalidated)."""

    nodes: int
    warm_tokens: int
    invalidated_tokens: int


def prefix_split(
    previous: Sequence[tuple[str, int]], current: Sequence[tuple[str, int]]
) -> PrefixSplit:
    """The split between two prompts given as (node identity, tokens) in order; identity is
    anything that changes when a node's bytes change (a content hash, or a seq)."""
    m = 0
    for (a, _), (b, _) in zip(previous, current, strict=False):
        if a != b:
            break
        m += 1
    warm = sum(t for _, t in previous[:m])
    return PrefixSplit(m, warm, sum(t for _, t in previous[m:]))


@dataclass(frozen=True)
class UsageCost(Rendered):
    """What a session's requests cost, from the usage the provider reported in its log
    (``Fold.economics``): per request and in total, priced under one profile.

    ``cache_realisation`` is measured (cache-read tokens over all input tokens), unlike the
    modeled ``h`` of a benchmark; ``None`` when the log's usage has no cache counts, in which
    case ``cost`` prices every input token as a miss and says so in ``note``."""

    profile: EconomicsProfile
    requests: tuple[tuple[int, int, int | None, int, float], ...]  # seq, input, hits, output, $
    note: str = ""

    @property
    def input_tokens(self) -> int:
        return sum(r[1] for r in self.requests)

    @property
    def cache_hit_tokens(self) -> int | None:
        hits = [r[2] for r in self.requests]
        return None if any(h is None for h in hits) else sum(h or 0 for h in hits)

    @property
    def output_tokens(self) -> int:
        return sum(r[3] for r in self.requests)

    @property
    def cost(self) -> float:
        return sum(r[4] for r in self.requests)

    @property
    def cache_realisation(self) -> float | None:
        hits = self.cache_hit_tokens
        total = self.input_tokens + (hits or 0)
        return None if hits is None or total == 0 else hits / total

    def __repr__(self) -> str:
        return f"UsageCost({self.profile.id}, {len(self.requests)} requests, ${self.cost:.6f})"

    def _rows(self) -> list[tuple[str, str]]:
        h = self.cache_realisation
        hits = self.cache_hit_tokens
        return [
            ("profile", f"{self.profile.id} (prices per million tokens; {self.profile.source})"),
            ("requests", f"{len(self.requests):,} with provider usage in the log"),
            ("input (cache misses)", f"{self.input_tokens:,} tokens (measured)"),
            ("cache hits", "unknown" if hits is None else f"{hits:,} tokens (measured)"),
            ("output", f"{self.output_tokens:,} tokens (measured)"),
            ("cache realisation", "unknown" if h is None else f"{h:.3f} (measured)"),
            ("cost", f"${self.cost:.6f} (estimated at the profile's prices)"),
            *((("note", self.note),) if self.note else ()),
        ]

    def _text_(self) -> str:
        width = max(len(k) for k, _ in self._rows())
        return "Usage cost\n" + "\n".join(f"  {k:<{width}}  {v}" for k, v in self._rows())

    def _html_(self) -> str:
        return section("Usage cost", kv(self._rows()))


def usage_cost(usage: Sequence[tuple[int, Any]], econ: EconomicsProfile) -> UsageCost:
    """Price each (seq, TokenUsage) under ``econ`` (DSH buckets are disjoint: input
    excludes cache reads)."""
    rows = []
    unknown = False
    for seq, u in usage:
        hits = u.cache_read_tokens
        unknown |= hits is None
        dollars = (
            u.input_tokens * econ.input_miss_per_m
            + (hits or 0) * econ.input_hit_per_m
            + (u.cache_write_tokens or 0) * econ.cache_write_per_m
            + u.output_tokens * econ.output_per_m
        ) / 1e6
        rows.append((seq, u.input_tokens, hits, u.output_tokens, dollars))
    note = "some requests report no cache counts: their input is priced as misses" * unknown
    return UsageCost(econ, tuple(rows), note)
