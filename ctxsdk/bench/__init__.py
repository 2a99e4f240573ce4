"""Benchmarks, runnable as ``ctxsdk bench NAME [--quick] [--json PATH]``.

Each benchmark compares against a baseline measured in the same run (and the published
numbers where there are any) and says which targets it met; timing claims are ratios.
"""

from __future__ import annotations

from typing import Any

from .._progress import Progress
from .._public import publish
from ..errors import InvalidArgument, UnknownName
from ._mergebench import mergebench
from ._result import BenchResult, Target, best_of

__all__ = ["BENCHMARKS", "BenchResult", "Target", "best_of", "mergebench", "run_benchmark"]

# name -> module with ``run(quick: bool, progress) -> BenchResult``
BENCHMARKS: dict[str, str] = {
    "load": "ctxsdk.bench._load",
    "tokens": "ctxsdk.bench._tokens",
    "fit": "ctxsdk.bench._fit",
    "workspace": "ctxsdk.bench._workspace",
    "widgets": "ctxsdk.bench._widgets",
    "fold": "ctxsdk.bench._fold",
    "merge": "ctxsdk.bench._merge",
    "memory": "ctxsdk.bench._memory",
    "redact": "ctxsdk.bench._redact",
    "realworld": "ctxsdk.bench._realworld",
    "embedders": "ctxsdk.bench._embedders",
}


def run_benchmark(
    name: str, *, quick: bool = False, progress: Progress | None = None, **options: Any
) -> BenchResult:
    """Run benchmark ``name``; ``options`` go to its ``run`` (``store="postgres"`` for
    ``memory``), and one that its ``run`` does not take is ``InvalidArgument``."""
    import importlib
    import inspect

    module = BENCHMARKS.get(name)
    if module is None:
        raise UnknownName(f"no benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))}")
    run = importlib.import_module(module).run
    takes = inspect.signature(run).parameters
    for option in options:
        if option in ("quick", "progress") or option not in takes:
            raise InvalidArgument(
                f"bench {name} takes no {option}= option (--{option.replace('_', '-')} on "
                "the command line)"
            )
    result: BenchResult = run(quick=quick, progress=progress, **options)
    return result


publish(__name__, globals(), __all__)
