"""The docs' examples run as written: every ```python block of a page, top to bottom, in one
namespace per page, in a fresh working directory whose ``../shared`` is the shared data. A
page whose examples never name ``shared/data`` (they use the bundled samples) runs without it.

The model page's examples talk to ``http://127.0.0.1:8080/v1`` (where ``make test-live`` and a
local llama.cpp server listen); here that address is replaced by a real OpenAI-compatible
server on a free loopback port (``tests/_openai_server.py``), started for the page.

A block that cannot run here says so on its first line (``# not run: <why>``, e.g. it needs a
model server); every other block runs, and the list of skipped blocks is asserted, so a new
unrunnable example is a deliberate choice, not an accident.
"""

from __future__ import annotations

import os
import re
import textwrap
from contextlib import ExitStack
from pathlib import Path

import pytest

from ._openai_server import openai_server
from .conftest import SHARED

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    "README.md",
    "docs/index.md",
    "docs/session.md",
    "docs/workspace.md",
    "docs/importers.md",
    "docs/assembly.md",
    "docs/fold.md",
    "docs/merge.md",
    "docs/memory.md",
    "docs/views.md",
    "docs/errors.md",
    "docs/llm.md",
    "docs/display.md",
    "docs/widgets.md",
]
_MODEL_URL = "http://127.0.0.1:8080/v1"  # the model page's server, replaced by a loopback one
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)  # also indented ones, in list items
_NOT_RUN = "# not run:"


def _blocks(page: str) -> list[str]:
    return _BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES)
def test_every_example_of_the_page_runs(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = _blocks(page)
    assert blocks, f"{page} has no python example"
    # a page on the bundled samples runs in any clone; one that reads the corpus needs it
    reads_corpus = any("shared/data" in b for b in blocks if not b.lstrip().startswith(_NOT_RUN))
    if reads_corpus and not (SHARED / "data").is_dir():
        pytest.skip(f"{SHARED / 'data'} is not available")
    work = tmp_path / "checkout"
    work.mkdir()
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)  # the examples name ../shared/data
    monkeypatch.chdir(work)
    for name in list(os.environ):
        if name.startswith("CTXSDK_LLM") or name == "DEEPSEEK_API_KEY":
            monkeypatch.delenv(name)  # no model route: the optional model examples stay off
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    namespace: dict[str, object] = {"__name__": "__docs__"}
    with ExitStack() as stack:
        url = _MODEL_URL
        if any(_MODEL_URL in b for b in blocks):
            url = stack.enter_context(openai_server()).url
        for i, block in enumerate(blocks):
            if block.lstrip().startswith(_NOT_RUN):
                continue
            source = textwrap.dedent(block).replace(_MODEL_URL, url)
            code = compile(source, f"{page} (python block {i + 1})", "exec")
            exec(code, namespace)


def test_the_readme_usage_runs_twice_in_one_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook cell is run again: the README's usage (which saves a copy) does not fail on
    the second run because the copy exists."""
    blocks = [b for b in _blocks("README.md") if "s.save(" in b]
    assert blocks
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    for _ in range(2):
        for block in blocks:
            exec(compile(textwrap.dedent(block), "README.md", "exec"), {"__name__": "__docs__"})


def test_only_marked_blocks_are_skipped_and_each_says_why() -> None:
    for page in PAGES:
        for block in _blocks(page):
            first = block.lstrip().split("\n", 1)[0]
            if first.startswith(_NOT_RUN):
                assert len(first) > len(_NOT_RUN) + 8, f"{page}: say why the block does not run"
