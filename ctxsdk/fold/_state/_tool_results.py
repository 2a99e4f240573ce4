"""Tool calls and their results: the reducer's layer that reads failures, their
verification by a later run, evidence, written artifacts and what a call shows of a file.

- failures: a ``tool/result`` block with ``isError: true`` ⇒ ``failure:<callId>`` (stateKey
  ``failure/tool/<callId>``, empirical, open, value ``<tool name>: <the failing line>``).
  The result of a command (a ``command``/``cmd``/``script`` argument) that the kernel reads
  as failed (its exit code, test counts, a traceback, ``error:`` …) ⇒ ``failure:<call
  key>`` (stateKey ``failure/cmd/<call key>``, value ``<call key>: <the kernel's error
  line>``), where the call key is the tool name and its command, e.g. ``bash:pytest
  tests/test_x.py``. A command that only reads (ls, grep, cat, echo) gives no failure, even
  flagged ``isError``, nor does a harness note (cancelled, denied). A poll of a still-running
  process (Codex's ``write_stdin`` of a ``Process running with session ID N``) stands for
  the command it polls. A later result with no failure verifies every open
  failure it re-ran (isError ones included): the same call key, or the same tool with a
  command line that covers the failed one (the kernel's ``covers``: each part that mattered
  matched by a part running the same program and subcommand on the failed part's operands or
  more, launchers such as ``python -m`` and ``uv run`` aside, options ignored; a narrower run
  never covers a broader failure). That leaves hot state (``retired_count += 1``): the
  evidence is a real tool result, never a claim.
- evidence: a successful command whose output has a kernel pass signal (``N passed``,
  ``OK``, ``ok <pkg>``, ``all tests pass(ed)``, ``BUILD SUCCESSFUL`` …) ⇒
  ``evidence:<call key>`` (empirical), value ``<call key>: <that line>``; a newer one for
  the same call replaces it. A kernel error fact with the change that made the failing
  command pass (what failed, and the fix) ⇒ ``evidence:fixed:<command>``.
- artifacts: the paths named by a successful call of a tool whose name has a word write,
  edit, multiedit, create, replace, patch or insert (``str_replace_based_edit_tool`` but not
  its ``view`` command, ``apply_patch``, ``MultiEdit``): its path argument and the file
  headers of a patch; and the files a shell call's command writes (the kernel's
  ``written_paths``: a redirection, ``tee``, ``sed -i``, ``touch``, the target of ``mv`` /
  ``cp``; never a here-doc's body) ⇒ stateKey ``file/<path>``, authority procedural. A file
  a shell command changed keeps that command in its value (``x.py (by sed -i 's/a/b/'
  x.py)``); a redirect, ``tee`` or ``echo`` carries contents and keeps only the path. A file
  an edit tool changed (old and new text: ``old_string``/``new_string``, ``old_str``/
  ``new_str``, ``search``/``replace``) shows the first line its latest edit added, comments
  and imports passed over (``app.py (added `def add(a, b):`)``); an edit that only removed
  lines keeps the line shown before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...session import redact
from ...session.kernel import (
    call_command,
    first_line,
    harness_note,
    heredoc_writes,
    message_of,
    message_text,
    pass_line,
    run_outcome,
    written_paths,
    written_text,
)
from .._holds import (
    branch_made,
    manifest_facts,
    read_path,
    root_configs,
    runtime_versions,
    search_hits,
)
from ._anchors import Anchor, _cut
from ._calls import (
    _DELEGATES,
    _RUNNING,
    _arguments,
    _call_key,
    _explores,
    _report,
    _reruns,
    _written,
)
from ._derived import _DerivedGroups
from ._reducer_base import _Call


class _ToolResults(_DerivedGroups):
    """The reducer's layer for ``tool/call`` and ``tool/result`` events."""

    def tool_call(self, ev: Mapping[str, Any]) -> None:
        data = ev.get("data")
        if not isinstance(data, Mapping):
            self.skipped += 1
            return
        cid, name = data.get("callId"), data.get("name")
        if isinstance(cid, str) and isinstance(name, str):
            self.calls[cid] = (name, _arguments(data.get("arguments")))

    def tool_result(self, ev: Mapping[str, Any], seq: int) -> None:
        msg = message_of(ev)
        content = msg.get("content") if msg is not None else None
        if not isinstance(content, list):
            self.skipped += 1
            return
        source = msg.get("source") if msg is not None else None
        fallback = source.get("callId") if isinstance(source, dict) else None
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool-result":
                cid = block.get("toolCallId")
                cid = cid if isinstance(cid, str) and cid else fallback
                is_error = block.get("isError") is True or block.get("is_error") is True
                self._result(str(cid or f"seq-{seq}"), message_text(block), is_error, seq)

    def _result(self, cid: str, text: str, is_error: bool, seq: int) -> None:
        name, args = self.calls.get(cid, ("tool", {}))
        if harness_note(text):
            return  # cancelled, denied, a sibling's error: no verdict on the call itself
        running = _RUNNING.search(text[:400])
        if running is not None:
            self.running[int(running.group(1))] = (name, dict(args))
            return  # still running (Codex): its output and verdict come with a later poll
        polled = self.running.get(args.get("session_id"))
        if polled is not None:  # a poll (``write_stdin``) stands for the command it polls
            name, args = polled
        identity = _call_key(name, args)
        command = call_command(args)
        width = self.limits.text
        if not is_error and name.lower() in _DELEGATES:
            self._statements(_report(redact(text).text), seq)  # a sub-agent's findings
        if command is not None:
            self._command(command, seq)
        if is_error and command is not None and _explores(command):
            return  # a search that found nothing, a listing of a missing path: no failure
        if is_error:
            self.failed_edits.update(written_paths(name, args))
            fid = f"failure:{cid}"
            line = run_outcome(text, True).error or first_line(text, width) or "error"
            value = f"{name}: {line}"
            self._failure(fid, f"failure/tool/{cid}", value, (identity, (name, command)), seq)
            return
        verdict = None
        if command is not None and not _explores(command):
            verdict = run_outcome(text)
            for key, value in runtime_versions(text):  # a failed run's header says it too
                self._project_value(key, value, seq)
        if verdict is not None and verdict.failed:
            fid = f"failure:{identity}"
            line = verdict.error or first_line(text, width) or "failed"
            value = _cut(f"{identity}: {line}", width)
            self._failure(fid, f"failure/cmd/{identity}", value, (identity, (name, command)), seq)
            return
        # A success: it verifies the open failures of the same call, or of a command it
        # covers (run again with options, or as part of a broader run: tool evidence either
        # way).
        done = (name, command)
        for fid in [
            f
            for f, (ident, failed) in self.identity_of.items()
            if ident == identity or _reruns(done, failed)
        ]:
            self.verify(fid)
        proof = pass_line(text) if verdict is not None else None
        if proof is not None:
            self.declare(
                Anchor(
                    id=f"evidence:{identity}",
                    kind="evidence",
                    value=_cut(f"{identity}: {proof}", width),
                    authority="empirical",
                    sources=(seq,),
                ),
                auto=True,
            )
        self._holds(name, args, command, text, seq)
        for path in written_paths(name, args):
            # A re-edit declares the same id: its head is refreshed, never superseded; an
            # edit that only removed lines keeps the line an earlier edit added.
            value = _written(path, command, args)
            old = self.active.get(f"artifact:{path}")
            if value == path and old is not None:
                value = str(old.value)
            self.declare(
                Anchor(
                    id=f"artifact:{path}",
                    kind="artifact",
                    state_key=f"file/{path}",
                    value=_cut(value, width),
                    authority="procedural",
                    sources=(seq,),
                ),
                auto=True,
            )

    def _holds(
        self, name: str, args: Mapping[str, Any], command: str | None, text: str, seq: int
    ) -> None:
        """What a successful call shows of a file: the text an edit tool wrote into it, or
        what a read printed of it; a manifest's (or npm's banner's) package and scripts are
        project facts."""
        if "\nOutput:\n" in text[:400]:
            text = text.split("\nOutput:\n", 1)[-1]  # a harness's header (Codex) is no content
        code, replaced = written_text(args)  # nothing for a shell: its here-documents below
        if code:
            for path in written_paths(name, args):
                self.outlines.add(path, code, seq, written=True, replaced=replaced)
        if command is not None:
            for path, body in heredoc_writes(command):
                self.outlines.add(path, body, seq, written=True)
            branch = branch_made(command)
            if branch is not None:
                self._project_value("branch", branch, seq)
            configs = root_configs(command, text)
            if configs:  # the root's listing: the files that configure the project's tools
                self._project_value("config_files", ", ".join(configs), seq)
            for path, lines in search_hits(command, redact(text).text).items():
                self.outlines.add(path, lines, seq, written=False)
        read = read_path(name, args)
        if read is not None:
            self.outlines.add(read, redact(text).text, seq, written=False)
        for key, value in manifest_facts(read or "", text):
            self._project_value(key, value, seq)

    def _failure(self, fid: str, key: str, value: str, call: _Call, seq: int) -> None:
        self.declare(
            Anchor(
                id=fid,
                kind="failure",
                state_key=key,
                value=value,
                authority="empirical",
                failure_state="open",
                sources=(seq,),
            ),
            auto=True,
        )
        if fid in self.active:
            self.identity_of[fid] = call
