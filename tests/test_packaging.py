"""What the wheel ships: the package and its sample logs, not the fixture code that writes them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import ctxsdk.samples

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "ctxsdk" / "samples"


def test_samples_package_holds_no_generator() -> None:
    entries = {p.name for p in SAMPLES.iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__.py", "_real.py", "home", "real"}
    assert not [p for p in (SAMPLES / "home").rglob("*.py")]
    assert not [p for p in (SAMPLES / "real").rglob("*.py")]  # data, licences, provenance only
    assert sorted(p.name for p in (SAMPLES / "home").rglob("*.jsonl.zstd")) == [
        "session.v3.jsonl.zstd"
    ] * len(ctxsdk.samples.sample_paths())


def test_sample_generator_is_a_script() -> None:
    script = REPO / "scripts" / "make_samples.py"
    assert script.is_file()
    assert 'if __name__ == "__main__":' in script.read_text(encoding="utf-8")


def test_wheel_packages_only_ctxsdk() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["ctxsdk"]
    assert "scripts" not in wheel.get("force-include", {})
