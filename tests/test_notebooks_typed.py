"""The shipped notebooks type-check as strictly as the package (``nbqa mypy``, the project's
mypy settings: strict): a notebook teaches the API as it is typed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_notebook_type_checks_strictly() -> None:
    nbqa = shutil.which("nbqa", path=str(Path(sys.executable).parent))
    assert nbqa is not None, "nbqa is a dev dependency: pip install -e '.[dev]'"
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 6
    proc = subprocess.run(
        [nbqa, "mypy", *map(str, notebooks), "--strict", "--no-color-output"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
