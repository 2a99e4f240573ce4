"""Editing and deleting memories: through ``Memory.edit`` / ``Memory.delete``, through the
agent tools (``ctx_edit`` / ``ctx_delete``), and from two processes on one file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxsdk.errors import InvalidArgument, MemoryRefused, NotFound
from ctxsdk.memory import Memory
from ctxsdk.tools import ToolContext, default_registry

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"


def test_edit_keeps_id_and_edges_and_reindexes(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        pref = mem.remember("Always run the tests with pytest.", link_to="CI")
        ci = mem.get("CI")
        assert mem.find("pytest")[0].node.id == pref.id
        edited = mem.edit(pref.id, "Always run the tests with nox.")
        assert edited.id == pref.id and edited.uri == pref.uri and edited.sources == pref.sources
        assert edited.text == "Always run the tests with nox."
        assert edited.extra["edited"]["times"] == 1 and edited.extra["edited"]["at"]
        assert [e.dst for e in mem.store.edges(src=pref.id)] == [ci.id]
        assert not any(h.node.id == pref.id for h in mem.find("pytest"))
        assert mem.find("nox")[0].node.id == pref.id
        again = mem.edit(pref.id, "Always run the tests with nox -s tests.")
        assert again.extra["edited"]["times"] == 2
        assert "edited:" in mem.read(pref.id)._text_()
        # nothing new: the node is returned as it was
        assert mem.edit(pref.id, again.text) == again


def test_edit_name_and_until(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        pg = mem.remember("Postgres", type="entity")
        renamed = mem.edit(pg.id, name="Postgres 16")
        assert renamed.name == renamed.text == "Postgres 16" and renamed.aliases == ("Postgres",)
        d = mem.remember("Freeze the API.", type="decision", until="2030-01-31")
        assert d.until
        cleared = mem.edit(d.id, until="")
        assert cleared.until is None and cleared.until_at is None


def test_edit_goes_through_the_door(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        pref = mem.remember("Use the staging key.")
        out = mem.edit(pref.id, f"Use the staging key {KEY} for deploys.")
        assert KEY not in out.text and "[REDACTED:" in out.text
        with pytest.raises(MemoryRefused):
            mem.edit(pref.id, KEY)
        assert mem.get(pref.id).text == out.text  # a refusal writes nothing
        with pytest.raises(InvalidArgument):
            mem.edit(pref.id)
        with pytest.raises(InvalidArgument):
            mem.edit(pref.id, "   ")
        with pytest.raises(NotFound, match="n-missing"):
            mem.edit("n-missing", "x")


def test_delete_removes_node_edges_and_index(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db") as mem:
        pref = mem.remember("Deploy with blue-green switches.", link_to="Deploys")
        other = mem.remember("Deploy on Tuesdays only.", link_to="Deploys")
        ent = mem.get("Deploys")
        mem.link(pref.id, other.id, "about")
        assert any(h.node.id == pref.id for h in mem.find("blue-green"))
        gone = mem.delete(pref.id)
        assert gone.id == pref.id and mem.store.get(pref.id) is None
        assert not mem.store.edges(src=pref.id) and not mem.store.edges(dst=pref.id)
        assert [e.src for e in mem.store.edges(dst=ent.id)] == [other.id]
        assert not any(h.node.id == pref.id for h in mem.find("blue-green switches"))
        with pytest.raises(NotFound, match=pref.id):
            mem.delete(pref.id)
        with pytest.raises(InvalidArgument):
            mem.delete(mem.root.id)


def test_the_tools_edit_and_delete(tmp_path: Path) -> None:
    reg = default_registry()
    assert {"ctx_edit", "ctx_delete"} <= set(reg.names())
    with Memory(tmp_path / "m.db") as mem:
        ctx = ToolContext(None, extras={"memory": mem})
        pref = mem.remember("Use tabs.", link_to="Style")
        out = reg.dispatch("ctx_edit", json.dumps({"id": pref.id, "text": "Use spaces."}), ctx)
        assert out["id"] == pref.id and out["text"] == "Use spaces." and out["edited"]["times"] == 1
        out = reg.dispatch("ctx_edit", json.dumps({"id": pref.id, "text": KEY}), ctx)
        assert out["error"]["code"] == "refused" and KEY not in json.dumps(out)
        out = reg.dispatch("ctx_edit", json.dumps({"id": "n-nope\x1b", "text": "x"}), ctx)
        assert out["error"]["code"] == "not_found" and "\x1b" not in json.dumps(out)
        out = reg.dispatch("ctx_edit", json.dumps({"id": pref.id}), ctx)
        assert out["error"]["code"] == "invalid_arguments"
        out = reg.dispatch("ctx_delete", json.dumps({"id": pref.id}), ctx)
        assert out == {"deleted": pref.id, "type": "preference", "name": "Use spaces."}
        out = reg.dispatch("ctx_delete", json.dumps({"id": pref.id}), ctx)
        assert out["error"]["code"] == "not_found" and pref.id in out["error"]["message"]
        out = reg.dispatch("ctx_delete", json.dumps({"id": KEY}), ctx)
        assert out["error"]["code"] == "not_found" and KEY not in json.dumps(out)
    no_mem = reg.dispatch("ctx_delete", '{"id": "n1"}', ToolContext(None))
    assert "unavailable" in no_mem


_WORKER = """
import sys, json
from ctxsdk.memory import Memory
path, action, ref = sys.argv[1:4]
with Memory(path) as mem:
    if action == "edit":
        print(json.dumps(mem.edit(ref, "The cache lives in Redis now.").to_json()))
    else:
        print(json.dumps(mem.delete(ref).to_json()))
"""


def _in_process(path: Path, action: str, ref: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, str(path), action, ref],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    out: dict[str, object] = json.loads(done.stdout)
    return out


def test_edit_and_delete_from_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        cache = mem.remember("The cache lives in memcached.", type="decision", link_to="Cache")
        temp = mem.remember("Keep temporary files in /tmp/build.", link_to="Cache")
        assert mem.find("memcached")[0].node.id == cache.id  # this process's index is built
        # another process edits one memory and, a third, deletes another
        assert _in_process(path, "edit", cache.id)["text"] == "The cache lives in Redis now."
        assert _in_process(path, "delete", temp.id)["id"] == temp.id
        # this process sees both at its next call: the index follows the file
        assert mem.find("Redis")[0].node.id == cache.id
        assert not any(h.node.id == cache.id for h in mem.find("memcached"))
        assert not any(h.node.id == temp.id for h in mem.find("temporary files build"))
        assert mem.store.get(temp.id) is None
        assert not mem.store.edges(src=temp.id)
        assert mem.get(cache.id).extra["edited"]["times"] == 1
