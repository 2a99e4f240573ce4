"""Hatch build hook: bundle the widgets' front end (esbuild) into ctxsdk/widgets/_static.

It runs for wheel and editable builds. ``npm ci`` runs only when ``node_modules`` is older
than ``package-lock.json``; the build itself takes well under a second. Building from an
sdist whose ``_static`` is already there needs no node.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import (  # type: ignore[import-not-found,unused-ignore]
    BuildHookInterface,
)

STATIC = "ctxsdk/widgets/_static"


def _npm_current(root: Path) -> bool:
    stamp = root / "node_modules" / ".package-lock.json"
    lock = root / "package-lock.json"
    return stamp.is_file() and stamp.stat().st_mtime >= lock.stat().st_mtime


class CustomBuildHook(BuildHookInterface):  # type: ignore[misc,type-arg,unused-ignore]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        out = root / STATIC
        have_sources = (root / "widgets").is_dir() and (root / "package-lock.json").is_file()
        if have_sources and shutil.which("node") and shutil.which("npm"):
            if not _npm_current(root):
                subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=root, check=True)
            subprocess.run(["node", "scripts/build_widgets.mjs"], cwd=root, check=True)
        elif not (out / "context_tree.js").is_file():
            raise RuntimeError(
                f"cannot build the ctxsdk widgets: {out} is missing and node/npm are not "
                "installed; install node >= 18 and npm, then build again (or `make widgets`)"
            )
        # _static is git-ignored, which hatch would skip: ship it as a build artifact
        build_data.setdefault("artifacts", []).append(f"/{STATIC}/**")
