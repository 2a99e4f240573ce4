"""Re-run the notebooks and store their outputs (``python scripts/refresh_notebooks.py [NB...]``).

Each notebook runs top to bottom in ``notebooks/`` with the project's kernel, and every output
is stored, so a notebook opened without a kernel (on GitHub, in the docs, in JupyterLab before
a run) shows what a run shows: the text, the HTML of each result (readable even where the host
sanitizes it, see ``ctxsdk/_display/_cold.py``), each widget's static picture. nbval then
compares the cells marked ``# NBVAL_CHECK_OUTPUT`` against these outputs (``make test``).
Review the diff before committing it: a changed checked output is a changed behaviour.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.metadata.pop("execution", None)  # run times would churn every refresh
    nb.metadata.pop("widgets", None)  # widget state needs a kernel; its picture is stored
    nbformat.write(nb, path)
    print(f"refreshed {path.relative_to(NOTEBOOKS.parent)}")


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        refresh(path.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
