"""Small DSH sessions the project wrote itself, for the demo, the notebooks and the docs.

They live in a DSH-home layout (``home/sessions/<projectKey(cwd)>/<encodeSegment(id)>/``), so
``cx.Workspace(dsh_home=SAMPLES_HOME)`` lists them like a real home. They are regenerated,
byte for byte, by ``python scripts/make_samples.py`` (``make samples``) in the repository; the
generator is not shipped with the package.

They are read-only: appending to one (``append_to_log()``, ``Assembly.apply()``), saving into
their directory or forking one without ``dest_root=`` raises ``WriteError``. Work on a copy,
``cx.Session.open(cx.Session.open(sample(name)).save(some_dir / name))``.

- ``fix-flaky-test``: 3 turns fixing a pytest-xdist flake (bash/read/edit/grep, a failing run).
- ``long-refactor``: 9 turns splitting a module, 60+ tool calls, one prune, one compaction.
- ``fix-flaky-test-fork``: a fork of ``fix-flaky-test`` cut after its turn 2.
- ``long-refactor-docs-audit``: a one-shot subagent child of ``long-refactor``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UnknownName

__all__ = ["SAMPLES_DIR", "SAMPLES_HOME", "sample", "sample_paths"]

SAMPLES_DIR = Path(__file__).resolve().parent
SAMPLES_HOME = SAMPLES_DIR / "home"

# Relative to SAMPLES_HOME; scripts/make_samples.py checks these against the canonical paths.
_FILES: dict[str, str] = {
    "fix-flaky-test": (
        "sessions/--home-mira-src-invoicer--/5f0c9a7e-2d41-4b8e-9c3a-71e2d4b6f018/"
        "session.v3.jsonl.zstd"
    ),
    "long-refactor": (
        "sessions/--home-mira-src-ledger-service--/b93e27d4-6a15-4f0e-8d72-c40a19e5f3b6/"
        "session.v3.jsonl.zstd"
    ),
    "fix-flaky-test-fork": (
        "sessions/--home-mira-src-invoicer--/2a7d5c90-8e34-4c1b-b6f9-0d3e82a41c75/"
        "session.v3.jsonl.zstd"
    ),
    "long-refactor-docs-audit": (
        "sessions/--home-mira-src-ledger-service--/e41b08f6-97c2-4a5d-83e0-6f1d2b9c7a34/"
        "session.v3.jsonl.zstd"
    ),
}


def sample_paths() -> dict[str, Path]:
    """Sample name -> path of its log file."""
    return {name: SAMPLES_HOME / rel for name, rel in _FILES.items()}


def sample(name: str) -> Path:
    """The log file of one sample, e.g. ``sample("long-refactor")``."""
    try:
        return SAMPLES_HOME / _FILES[name]
    except KeyError:
        names = ", ".join(_FILES)
        raise UnknownName(f"no sample named {name!r}; the samples are: {names}") from None
