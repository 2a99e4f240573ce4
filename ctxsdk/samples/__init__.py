"""Sample sessions for the demo, the notebooks and the docs: the project's own, and real ones.

**The project's own** are small DSH sessions it wrote itself (``sample(name)``).

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

**Real sessions** of other agents, small ones, are shipped too (``real_sample(name)``, a path
to open with ``Session.open_any`` or the format's importer). Each is a byte-for-byte copy of a
file published under MIT or Apache-2.0; ``real_samples()`` lists them with their provenance
(source, commit, upstream path, sha256, licence, agent and model), and ``real/PROVENANCE.md``,
``real/manifest.json`` and ``real/LICENSES/`` in this folder say the same. A larger corpus of
real sessions (122 files, 12.6 MB) is optional and not shipped: ``$CTXSDK_SHARED_DATA`` or
``../shared/data`` next to a checkout.

- ``claude-code``: a Claude Code session with an error, a multi-tool turn and a ``/compact``.
- ``claude-code-sidechain``: the same session's Explore sub-agent (a sidechain transcript).
- ``claude-code-spotter``: a short Claude Code session whose tool calls the user interrupts.
- ``codex``: a ``codex exec`` rollout that summarises a repository (3 shell calls).
- ``gemini-cli``: a Gemini CLI chat: a repository review with a sub-agent, then file edits.
- ``openhands``: an OpenHands chat where the user corrects the question.
- ``aider``: an Aider transcript page: a unit test written, failing, then fixed.
- ``swe-agent``: an autonomous SWE-agent run fixing a SyntaxError in a toy repository.
- ``mini-swe-agent``: an autonomous mini-SWE-agent run on SWE-bench Verified (resolved).
"""

from __future__ import annotations

from pathlib import Path

from .._public import publish
from ..errors import UnknownName
from ._real import REAL_DIR, RealSample, real_sample, real_samples

__all__ = [
    "REAL_DIR",
    "SAMPLES_DIR",
    "SAMPLES_HOME",
    "RealSample",
    "real_sample",
    "real_samples",
    "sample",
    "sample_paths",
]

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


publish(__name__, globals(), __all__)
