"""Real-browser fixtures: JupyterLab on 127.0.0.1 and the system chromium, via playwright.

The server runs from this venv on a free port with a private config, runtime and data
directory (announcements, news and update checks off; a ``python3`` kernelspec that is this
venv's interpreter). Nothing is downloaded. Each server and browser started here is stopped
in a ``finally`` by its pid or handle. Under ``CI=true`` a missing chromium or playwright
fails the tests; elsewhere they skip.

Screenshots go to ``.cache/ui-artifacts/`` (or ``$CTXSDK_UI_ARTIFACTS``); the path is
printed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ctxsdk.bench._widgets import BROWSER_ARGS, chromium_path

ROOT = Path(__file__).resolve().parents[2]
ARGS = BROWSER_ARGS  # the flags the widgets bench launches chromium with, one list


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _need(what: str, why: str) -> None:
    if _in_ci():
        pytest.fail(f"{what} is required under CI=true: {why}")
    pytest.skip(f"{what} is not available: {why}")


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        _need("chromium", "apt-get install chromium (.ci/run installs it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _need("playwright", "pip install -e '.[dev]'")
    return str(path)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    out = Path(os.environ.get("CTXSDK_UI_ARTIFACTS") or ROOT / ".cache" / "ui-artifacts")
    out.mkdir(parents=True, exist_ok=True)
    print(f"\nUI artifacts (screenshots): {out}")
    return out


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Lab:
    """A running JupyterLab: its URL and the directory it serves."""

    def __init__(self, url: str, root: Path, log: Path) -> None:
        self.url = url
        self.root = root
        self.log = log

    def notebook(self, name: str, cells: list[str]) -> str:
        """Write a notebook of code cells under the served root; its URL path."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        nbformat.write(nb, self.root / name)
        return f"{self.url}/lab/tree/{name}"


@pytest.fixture(scope="module")
def lab(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _need("jupyterlab", "pip install -e '.[dev]'")
    base = tmp_path_factory.mktemp("lab")
    root, config, runtime, data = (base / d for d in ("root", "config", "runtime", "data"))
    for d in (root, config / "labconfig", runtime, data / "kernels" / "python3"):
        d.mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    (data / "kernels" / "python3" / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3",
                "language": "python",
            }
        )
    )
    port = _free_port()
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_RUNTIME_DIR=str(runtime),
        JUPYTER_DATA_DIR=str(data),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONPATH=str(ROOT),
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        "--IdentityProvider.token=",
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = base / "jupyterlab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/api/status", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not start (exit {proc.poll()}):\n{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.25)
        yield Lab(url, root, log)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def open_notebook(page: Any, url: str, ready: str) -> None:
    """Open a notebook in JupyterLab, wait for its kernel, run every cell, and wait until
    the widget's ``ready`` selector shows."""
    page.goto(url)
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel",
        timeout=90_000,
    )
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.ready")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
        timeout=60_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(ready, timeout=90_000)


@contextmanager
def notebook_page(
    browser: Any, url: str, ready: str, errors: list[str], *, height: int = 1300
) -> Iterator[Any]:
    """A browser page on the notebook at ``url``, opened and run (``open_notebook``), with
    page errors and console errors collected in ``errors``; the kernel is shut down and the
    page closed afterwards."""
    context = browser.new_context(viewport={"width": 1280, "height": height})
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on(
        "console",
        lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None,
    )
    try:
        open_notebook(page, url, ready)
        yield page
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    finally:
        context.close()
