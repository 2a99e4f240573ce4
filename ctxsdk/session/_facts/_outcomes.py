"""What a command's output says about how it went: the exit code each agent records in its
own way, the test counts runners print, and the one line that names the failure.

Exit codes: Codex ``Process exited with code N`` / ``Exit code: N``, Claude Code ``Exit code
N`` at the top of an error result, mini-swe-agent ``<returncode>N</returncode>``, OpenHands
``... executed with exit code N`` and ``[Command finished with exit code N]``, Gemini CLI
``Exit Code: N``. Test counts: pytest (``3 failed, 40 passed``), unittest and Django
(``Ran 12 tests`` then ``OK`` / ``FAILED (failures=2)``), Jest/Vitest (``Tests: 5 passed``),
cargo (``test result: ok. 5 passed; 0 failed``), go (``ok``/``FAIL`` per package), mocha
(``5 passing``, ``1 failing``), RSpec (``5 examples, 1 failure``) and the plain
``N passed, N failed`` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "RunOutcome",
    "body",
    "error_line",
    "exit_code",
    "harness_note",
    "outcome",
    "pass_line",
    "runner_counts",
    "running_session",
]

_EXIT = (
    re.compile(r"^<returncode>\s*(-?\d+)\s*</returncode>", re.M),
    re.compile(r"\bProcess exited with code (-?\d+)"),
    re.compile(r"^Exit code:?\s*(-?\d+)\s*$", re.M | re.I),
    re.compile(r"executed with exit code (-?\d+)"),
    re.compile(r"\[Command finished with exit code (-?\d+)\]"),
    re.compile(r"^Exit Code:\s*(-?\d+)", re.M),
    re.compile(r"^\s*exit(?:_| )code[=:]\s*(-?\d+)\s*$", re.M | re.I),
)
# A still-running Codex process: the final code comes with a later write_stdin poll.
_RUNNING = re.compile(r"\bProcess running with session ID (\d+)")

_FAIL = (
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r"^FAILED\b|^=+ .*\b\d+ (?:failed|errors?)\b", re.M),
    re.compile(r"\b[1-9]\d* (?:tests? )?(?:failed|failing)\b", re.I),
    re.compile(r"^FAILED \((?:failures|errors)=\d+", re.M),
    re.compile(r"^(?:npm|pnpm|yarn) (?:ERR!|error)", re.M),
    # not on a line the program labels a warning ("Warning: _curses.error: setupterm: …")
    re.compile(r"^(?!\s*warn(?:ing)?\b).*\berror(?:\[E\d+\])?(?: TS\d+)?:", re.I | re.M),
    re.compile(r"^(?:error|fatal|ERROR|FATAL)\b[:\[]", re.M),
    re.compile(r"^\w+(?:\.\w+)*(?:Error|Exception):", re.M),
    re.compile(r"^(?:SyntaxError|ModuleNotFoundError|ImportError|NameError)\b", re.M),
    re.compile(r"command not found|No such file or directory|Permission denied", re.I),
    re.compile(r"^FAIL\b", re.M),
    re.compile(r"^\d+ (?:tests?|examples?), [1-9]\d* failures?", re.M),
    re.compile(r"(?:错误|失败|异常)[:：]"),
    re.compile(r"^test result: FAILED", re.M),
    re.compile(r"\bBUILD FAILED\b|\bCompilation failed\b|\bbuild failed\b", re.I),
)
_PASS = (
    re.compile(r"\b\d+ (?:tests? )?passed\b", re.I),
    re.compile(r"^OK\b(?: \(skipped=\d+\))?\s*$", re.M),
    re.compile(r"^test result: ok\.", re.M),
    re.compile(r"\b\d+ passing\b"),
    re.compile(r"\ball tests pass(?:ed)?\b", re.I),
    re.compile(r"\bBUILD SUCCESSFUL\b|\bbuild succeeded\b|\bCompiled successfully\b", re.I),
    re.compile(r"^ok\s+\S+\s+[\d.]+s\b", re.M),
)
_ERROR_LINE = (
    # the most telling lines first
    re.compile(r"^E\s+\w+(?:\.\w+)*(?:Error|Exception|Warning)\b.*$", re.M),
    re.compile(r"^FAILED \S+.*$", re.M),
    re.compile(r"^(?:\w+\.)*\w+(?:Error|Exception): \S.*$", re.M),  # an exception line
    re.compile(r"^\*\* \(\w+(?:\.\w+)*\) .*$", re.M),  # Elixir: ** (CompileError) ...
    re.compile(r"^\s+\d+\) test .*$", re.M),  # ExUnit / numbered runner failures
    # a line the program labels a warning ("Warning: _curses.error: …") is not its failure
    re.compile(r"^(?!\s*warn(?:ing)?\b).*\berror(?:\[E\d+\])? ?(?:TS\d+)?:.*$", re.M | re.I),
    re.compile(r"^(?:npm|pnpm|yarn) (?:ERR!|error) .*\S.*$", re.M),
    re.compile(r"^.*(?:command not found|No such file or directory|Permission denied).*$", re.M),
    re.compile(r"^FAIL\b.*$", re.M),
    re.compile(r"^.*\bBUILD FAILED\b.*$|^.*\bbuild failed\b.*$", re.M | re.I),
    re.compile(r"^=+ .*\b\d+ failed\b.*=+$", re.M),
    re.compile(r"^.*\b[1-9]\d* (?:tests? )?(?:failed|failing)\b.*$", re.M | re.I),
    re.compile(r"^FAILED \((?:failures|errors)=\d+.*$", re.M),
    re.compile(r"^.*(?:错误|失败|异常)[:：].*$", re.M),
    # a harness killed the command: that, not the warnings it printed, is what went wrong
    re.compile(r"^.*\b(?:timed out|time(?:d)?-?out after)\b.*$", re.M | re.I),
)
_PY_EXC = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Exit|Interrupt|Warning)(?::.*)?)$", re.M)
_COUNTS = re.compile(
    r"\b(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b", re.I
)
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \(((?:\w+=\d+(?:, )?)+)\)", re.M)
_JEST = re.compile(r"^\s*Tests:?\s+(.*\d+ (?:passed|failed).*)$", re.M)
_CARGO = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed", re.M)
_MOCHA = re.compile(r"^\s*(\d+) (passing|failing|pending)\b", re.M)
_RSPEC = re.compile(r"^(\d+) (?:examples?|tests?|properties), (\d+) failures?", re.M)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Harness notes that say nothing about the command itself.
_HARNESS = re.compile(
    r"^\s*(?:<tool_use_error>|Sibling tool call errored|The user doesn't want to proceed|"
    r"\[Request interrupted|Error: The user (?:rejected|denied)|User rejected|"
    r"Tool (?:call|execution) (?:was )?(?:cancelled|canceled|denied))",
    re.I,
)
_WRAPPER_LINE = re.compile(
    r"^(?:Chunk ID:|Wall time:|Process (?:exited with code|running with session ID)|"
    r"Original token count:|Output:\s*$|</?output>|<returncode>|Exit code:? -?\d+\s*$|"
    r"Command `.*` executed with exit code|\[Command finished with exit code)"
)
_NOISE_LINE = re.compile(r"^\s*(?:at |File \"|\^|~|\d+\s*\||│|\|)")


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How one command went: its exit code (None when the log does not record one), whether
    it failed, the line that says so, and the test counts the output shows."""

    exit_code: int | None
    failed: bool
    passed: bool  # positive evidence: a pass line, or exit code 0
    error: str | None  # the one line that names the failure
    counts: dict[str, int]


def body(text: str) -> str:
    """A result's text without the harness's wrapper lines (Codex chunk headers,
    mini-swe-agent's ``<returncode>``/``<output>`` tags, exit-code lines)."""
    head = text[:600]
    if not _WRAPPER_LINE.search(head.split("\n", 1)[0]) and "<returncode>" not in head:
        return text
    lines = text.split("\n")
    i = 0
    while i < min(len(lines), 8) and (_WRAPPER_LINE.match(lines[i]) or not lines[i].strip()):
        i += 1
    rest = "\n".join(lines[i:])
    return rest[: -len("</output>")].rstrip() if rest.rstrip().endswith("</output>") else rest


def exit_code(text: str) -> int | None:
    """The exit code an agent recorded in a result's text, or None."""
    for rule in _EXIT:
        m = rule.search(text[:400]) or rule.search(text[-400:])
        if m:
            try:
                return int(m.group(1))
            except ValueError:
                return None
    return None


def running_session(text: str) -> int | None:
    """The session id of a process still running (Codex ``exec_command``), or None."""
    m = _RUNNING.search(text[:400])
    return int(m.group(1)) if m else None


def _fold(line: str) -> str:
    return " ".join(line.split())


def runner_counts(text: str) -> dict[str, int]:
    """The test counts a runner printed (``passed``, ``failed``, ``errors``, ``skipped``,
    ``total``); the last summary wins. Empty when no runner summary is seen."""
    out: dict[str, int] = {}
    tail = text[-6000:]
    m_cargo = list(_CARGO.finditer(tail))
    if m_cargo:
        passed = sum(int(m.group(2)) for m in m_cargo)
        failed = sum(int(m.group(3)) for m in m_cargo)
        return {"passed": passed, "failed": failed}
    jest = list(_JEST.finditer(tail))
    if jest:
        for num, word in _COUNTS.findall(jest[-1].group(1)):
            out[_word(word)] = int(num)
        tot = re.search(r"(\d+) total", jest[-1].group(1))
        if tot:
            out["total"] = int(tot.group(1))
        return out
    ran = list(_UNITTEST_RAN.finditer(tail))
    if ran:
        out["total"] = int(ran[-1].group(1))
        after = tail[ran[-1].end() :]
        fm = _UNITTEST_FAILED.search(after)
        if fm:
            for item in fm.group(1).split(", "):
                k, _, v = item.partition("=")
                if v.isdigit():
                    out[_word(k)] = int(v)
        bad = out.get("failed", 0) + out.get("errors", 0)
        out["passed"] = max(0, out["total"] - bad - out.get("skipped", 0))
        return out
    rspec = list(_RSPEC.finditer(tail))
    if rspec:
        total, failures = int(rspec[-1].group(1)), int(rspec[-1].group(2))
        return {"total": total, "failed": failures, "passed": total - failures}
    mocha = _MOCHA.findall(tail)
    if mocha:
        for num, word in mocha:
            out[{"passing": "passed", "failing": "failed", "pending": "skipped"}[word]] = int(num)
        return out
    # pytest and the plain line: the last line that names counts
    lines = [ln for ln in tail.splitlines() if re.search(r"\d+ (?:passed|failed)\b", ln)]
    if lines:
        for num, word in _COUNTS.findall(lines[-1]):
            out[_word(word)] = int(num)
    return out


def _word(word: str) -> str:
    w = word.lower()
    if w in ("error", "errors"):
        return "errors"
    if w in ("failure", "failures"):
        return "failed"
    if w in ("warning", "warnings"):
        return "warnings"
    return w


# a traceback's frame line; its last one names the function that raised
_PY_FRAME = re.compile(r'^\s*File "[^"\n]+", line \d+, in ([\w<>.]+)\s*$', re.M)


def error_line(text: str) -> str | None:
    """The one line that names a failure: a Python traceback's last exception line (with
    the function that raised it, its innermost frame: ``… (raised in get_pixeldata)``), a
    ``FAILED test`` line, a compiler's ``error:`` line, ``npm ERR!`` ... or None."""
    body = text[-20_000:] if len(text) > 20_000 else text
    if "Traceback (most recent call last)" in body:
        tb = body[body.rfind("Traceback (most recent call last)") :]
        excs = [m.group(1) for m in _PY_EXC.finditer(tb)]
        errors = [e for e in excs if "Warning" not in e.split(":", 1)[0]]
        if errors or excs:
            line = _fold((errors or excs)[0])
            frames = _PY_FRAME.findall(tb)
            where = f" (raised in {frames[-1]})" if frames and frames[-1] != "<module>" else ""
            return (line[: 200 - len(where)] + where) if where else line[:200]
    best: tuple[int, str] | None = None
    for rank, rule in enumerate(_ERROR_LINE):
        for m in rule.finditer(body):
            line = _fold(m.group(0))
            if not line or _NOISE_LINE.match(m.group(0)) or len(line) < 4:
                continue
            if best is None or rank < best[0]:
                best = (rank, line)
            break
        if best is not None and best[0] == rank:
            break
    if best is not None:
        return best[1][:200]
    for m2 in _PY_EXC.finditer(body):
        if "Warning" not in m2.group(1).split(":", 1)[0]:
            return _fold(m2.group(1))[:200]  # a warning printed on the way is no failure
    return None


def pass_line(text: str) -> str | None:
    """The line of a result that says it passed (a runner's summary), whitespace folded."""
    hits = [m.start() for rule in _PASS if (m := rule.search(text))]
    if not hits:
        return None
    at = min(hits)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return " ".join(text[start : end if end >= 0 else len(text)].split()) or None


def harness_note(text: str) -> bool:
    """A result the harness wrote instead of the command (cancelled, denied, a sibling
    call's error): it says nothing about how the command goes."""
    return bool(_HARNESS.match(text[:200]))


def _signal(text: str) -> bool:
    """Whether a result says a command failed (a rule of ``_FAIL``)."""
    return any(rule.search(text) for rule in _FAIL)


def _passed_line(text: str) -> bool:
    """Whether a result holds a runner's pass line (a rule of ``_PASS``)."""
    return any(rule.search(text) for rule in _PASS)


def outcome(text: str, is_error: bool = False) -> RunOutcome:
    """How a command went, read from its result text and the harness's error flag."""
    if "\x1b[" in text:
        text = _ANSI.sub("", text)
    code = exit_code(text)
    counts = runner_counts(text)
    failed_tests = counts.get("failed", 0) + counts.get("errors", 0)
    # the failure signal and the pass line are read only where the answer needs them (a
    # long result's every rule is a scan of the whole text)
    signal: bool | None = None
    passed_line: bool | None = None
    if code is not None:
        failed = code != 0 or failed_tests > 0
    elif is_error:
        failed = True
    elif counts:
        failed = failed_tests > 0
    else:
        signal = _signal(text)
        passed_line = _passed_line(text) if signal else None
        failed = signal and not passed_line
    if failed:
        passed = False
    elif code == 0 or counts:
        passed = True
    else:
        if passed_line is None:
            passed_line = _passed_line(text)
        if passed_line:
            passed = True
        elif code is None:
            passed = not (_signal(text) if signal is None else signal)
        else:
            passed = False
    err = None
    if failed:
        err = error_line(body(text))
        if err is None and code not in (None, 0):
            first = next((ln for ln in body(text).splitlines() if ln.strip()), "")
            err = f"exit code {code}" + (
                f": {_fold(first)[:160]}" if first and "exit" not in first.lower() else ""
            )
    return RunOutcome(code, failed, passed, err, counts)
