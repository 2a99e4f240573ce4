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

from ..errors import InvalidArgument, UnknownName

__all__ = [
    "PROFILES",
    "EconomicsProfile",
    "PrefixSplit",
    "prefix_split",
    "profile",
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
