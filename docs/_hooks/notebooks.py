"""mkdocs hook: the shipped notebooks, executed in the build, as pages of the docs.

``mkdocs-jupyter`` turns ``docs/notebooks/*.ipynb`` (a link to ``notebooks/``) into pages. Its
own ``execute`` stores the widgets' state, and a page then draws each widget with the
widget manager fetched from a CDN: offline, or before that script loads, the output is blank.
So the notebooks run here instead, with the project's kernel in ``notebooks/`` as
``make test`` runs them, without widget state: a widget output then shows its static
rendering (HTML, else text), as in a notebook opened without a kernel. The page is rendered
from the executed copy, so the docs show what the code does now, never a stale saved output.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from mkdocs.exceptions import PluginError
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
# a notebook's link to a docs page (``../docs/fold.md``) as the site serves it from the page
# ``notebooks/NAME/``
_DOCS_LINK = re.compile(r"\]\(\.\./docs/([\w-]+)\.md(#[\w-]*)?\)")
# mkdocs-jupyter takes a page for a notebook by its path ("notebooks/*.ipynb"): keep the name
_OUT = Path(tempfile.mkdtemp(prefix="ctxsdk-docs-")) / "notebooks"


def executed(path: Path) -> Path:
    """``path`` run top to bottom in ``notebooks/``, saved without widget state."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    try:
        client.execute()
    except CellExecutionError as err:
        raise PluginError(f"{path.name} fails when run for the docs: {err}") from err
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _DOCS_LINK.sub(r"](../../\1/\2)", cell.source)
    out = _OUT / path.name
    _OUT.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


def on_files(files: Any, config: Any) -> Any:
    for f in files:
        src = Path(f.abs_src_path or "")
        if src.suffix == ".ipynb" and f.src_uri.startswith("notebooks/"):
            f.abs_src_path = str(executed(src.resolve()))
    return files


def on_post_build(config: Any) -> None:
    # the executed copies are rendered by now: leave nothing behind in the temp dir
    shutil.rmtree(_OUT.parent, ignore_errors=True)
