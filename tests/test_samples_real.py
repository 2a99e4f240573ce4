"""The real sessions shipped in ``ctxsdk/samples/real``: each one imports, is the file its
provenance record names (sha256), carries its licence, and the README's usage block runs in a
fresh checkout with no ``../shared`` beside it."""

from __future__ import annotations

import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.errors import UnknownName
from ctxsdk.samples import REAL_DIR, RealSample, real_sample, real_samples
from ctxsdk.session.importers import FORMATS, detect_format, import_file, import_provenance

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = real_samples()
_MB = 1 << 20


def test_the_samples_are_the_manifests_records() -> None:
    records = json.loads((REAL_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in records] == list(SAMPLES)
    # one per format that has a redistributable small file (LoCoMo is non-commercial: never)
    assert {r.format for r in SAMPLES.values()} == set(FORMATS) - {"openai", "anthropic", "locomo"}
    shipped = {p for p in REAL_DIR.rglob("*") if p.is_file()}
    listed = {r.path for r in SAMPLES.values()} | {r.license_file for r in SAMPLES.values()}
    assert shipped == listed | {REAL_DIR / "manifest.json", REAL_DIR / "PROVENANCE.md"}
    assert sum(p.stat().st_size for p in shipped) < 0.4 * _MB


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_file_is_the_one_its_record_names(name: str) -> None:
    r = SAMPLES[name]
    data = r.path.read_bytes()
    assert len(data) == r.size
    assert hashlib.sha256(data).hexdigest() == r.sha256
    assert r.modified is False
    assert r.path.is_relative_to(REAL_DIR) and r.license_file.is_relative_to(REAL_DIR)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_licence_text_is_shipped(name: str) -> None:
    r = SAMPLES[name]
    text = r.license_file.read_text(encoding="utf-8")
    if r.license.startswith("MIT"):
        assert "Permission is hereby granted, free of charge" in text
        assert "Copyright" in text  # MIT asks that the copyright notice travel with the file
    else:
        assert r.license == "Apache-2.0"
        assert "Apache License" in text and "Version 2.0" in text
    assert r.repo in r.source_url or r.commit is None
    if r.commit is not None:
        assert re.fullmatch(r"[0-9a-f]{40}", r.commit)
        assert r.source_url.endswith(f"/blob/{r.commit}/{r.upstream_path}")


def test_the_notice_names_every_file_and_its_hash() -> None:
    notice = (REAL_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    for r in SAMPLES.values():
        assert r.path.relative_to(REAL_DIR).as_posix() in notice
        assert r.sha256 in notice
    assert "LoCoMo" in notice  # says why it is not here


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_imports_with_its_importer_and_open_any(name: str) -> None:
    r = SAMPLES[name]
    assert detect_format(r.path) == r.format
    by_name = import_file(r.format, r.path)
    detected = cx.Session.open_any(real_sample(name))
    assert by_name.messages() == detected.messages()
    assert by_name.turns() and len(by_name.messages()) >= 2
    prov = import_provenance(by_name)  # every message names the source record it came from
    assert {prov[seq]["format"] for seq in by_name.message_seqs()[1:]} == {r.format}
    assert {prov[seq]["source"] for seq in by_name.message_seqs()[1:]} == {r.path.name}


def test_the_claude_code_sample_keeps_its_compaction_and_its_sub_agent() -> None:
    cc = cx.Session.from_claude_code(real_sample("claude-code"))
    assert cc.id.startswith("c45af7b1")
    assert cc.tools_df().height == 10 and not cc.tools_df()["on_surface"].any()
    side = cx.Session.from_claude_code(real_sample("claude-code-sidechain"))
    assert side.header.origin == "subagent" and side.header.parent_session == cc.id


def test_an_unknown_name_lists_the_real_samples() -> None:
    with pytest.raises(UnknownName) as err:
        real_sample("locomo")
    assert "'locomo'" in str(err.value)
    for name in SAMPLES:
        assert name in str(err.value)
    assert isinstance(SAMPLES["codex"], RealSample)


def test_the_files_are_package_resources() -> None:
    # what an installed wheel reads: the package's own files, found through importlib
    real = resources.files("ctxsdk.samples").joinpath("real")
    records = json.loads(real.joinpath("manifest.json").read_text(encoding="utf-8"))
    for r in records:
        data = real.joinpath(r["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == r["sha256"]
        assert real.joinpath(r["license_file"]).is_file()


def _readme_usage() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    usage = readme.split("## Usage", 1)[1]
    block = re.search(r"```python\n(.*?)```", usage, re.S)
    assert block is not None
    return block.group(1)


def test_the_readme_usage_runs_in_a_fresh_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _readme_usage()
    assert "../shared" not in source and 'real_sample("claude-code")' in source
    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)  # no ../shared beside it
    for name in list(os.environ):
        if name.startswith("CTXSDK_LLM") or name == "DEEPSEEK_API_KEY":
            monkeypatch.delenv(name)  # no model route: the optional model lines stay off
    monkeypatch.setenv("CTXSDK_SHARED_DATA", str(tmp_path / "absent"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(source, "README.md (usage)", "exec"), namespace)
    assert isinstance(namespace["cc"], cx.Session)
    assert (work / "work" / "session.v3.jsonl.zstd").is_file()


def test_an_import_cannot_be_saved_into_the_bundled_samples(tmp_path: Path) -> None:
    s = cx.Session.open_any(real_sample("gemini-cli"))
    with pytest.raises(cx.errors.WriteError, match="sample shipped with ctxsdk"):
        s.save(REAL_DIR / "copy")
    assert not (REAL_DIR / "copy").exists()
    assert cx.Session.open(s.save(tmp_path / "copy")).id == s.id  # a copy elsewhere is fine
