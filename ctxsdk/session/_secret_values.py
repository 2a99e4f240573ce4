"""How a value reads: a stand-in, a credential, or something machine-made.

The finders that know a value by its key (``_secret_labels``) or by where it sits
(``_secret_contexts``) judge it here, the same way.
"""

from __future__ import annotations

import re

from ._secret_shapes import looks_random

__all__ = ["WORDY", "is_placeholder", "machine_made", "secret_looking"]

# Lower-case words joined up: an identifier, a slug or a sentence, not a credential.
WORDY = re.compile(r"[a-z]++(?:[-_ .][a-z]++)*+")
_CODE_REF = re.compile(r"[A-Za-z_$][\w$]*+(?:\.[A-Za-z_$][\w$]*+)*+(?:\(.*|\[.*)?", re.DOTALL)
_PLACEHOLDER_WORDS = frozenset(
    {"string", "str", "password", "passwd", "secret", "token", "test", "example", "sample"}
    | {"dummy", "fake", "changeme", "change-me", "change_me", "none", "null", "nil", "true"}
    | {"false", "undefined", "required", "optional", "hidden", "masked", "redacted", "empty"}
    | {"placeholder", "todo", "tbd", "n/a", "bearer", "basic", "secretstr", "bytes", "int"}
    | {"any", "env", "apikey", "api_key", "api-key", "mypassword", "yourpassword", "value"}
)
_PLACEHOLDER_STARTS = ("<", "${", "$(", "{", "%", "[redacted", "[", "your", "!", "…", "...")
_STAND_IN = re.compile(
    r"(.)\1{5}|your[-_]|[-_]here\b|redacted|example|replace[-_ ]?me|change[-_ ]?me"
    r"|insert[-_ ]|fill[-_ ]?in|^[a-z]++(?:_[a-z]++)++$"  # new_password: a variable's name
)
_REFERENCES = (
    "op://", "vault:", "vault://", "arn:", "ssm:", "sm://", "secretsmanager:", "keyvault:",
    "azurekeyvault:", "gcp-secret:", "secret://", "env:", "file:", "/run/secrets/",
)  # fmt: skip
_TYPE = re.compile(
    r"&(?:'[a-z]+ )?(?:mut )?[a-z][\w:]*+|(?:optional|option|union)\[.*\]|[a-z]+\[.*\]"
    r"|(?:str|string|bytes|secretstr|secret|int|text|char\*|const char\*)(?:[ ]?\|[ ]?none)?[)]?"
)


def is_placeholder(value: str) -> bool:
    """A stand-in, not a credential: ``<your-key>``, ``${TOKEN}``, ``xxxx``, ``changeme``,
    ``None``, a reference (``op://…``), a type (``&str``), a variable's name."""
    v = value.strip().lower()
    if len(v) < 4:
        return True
    if v in _PLACEHOLDER_WORDS or v.startswith(_PLACEHOLDER_STARTS):
        return True
    if "..." in v or "…" in v or _STAND_IN.search(v):
        return True  # a stand-in, or a shortened or masked display (sk-abc...xyz, ghp_xxxx)
    if v.startswith(_REFERENCES):
        return True  # where the secret is kept (op://…, vault:…, arn:aws:secretsmanager:…)
    if _TYPE.fullmatch(v):
        return True  # a type (password: &str, token: Optional[str])
    if len(v) <= 12 and v.endswith(("-", "_")):
        return True  # a bare prefix (sk-ant-), not a key
    if v.startswith("$") and re.fullmatch(r"\$\{?[a-z_][a-z0-9_]*\}?", v):
        return True
    core = v.replace("-", "").replace("_", "")
    return bool(core) and (set(core) <= {"*", "x", ".", "•", "?", "#"} or len(set(core)) == 1)


def secret_looking(value: str) -> bool:
    """An unquoted value that reads as a credential: digits or symbols among letters, or
    six digits or more; not a plain word, words joined up (``short-value``), nor code."""
    if value.isdigit():
        return len(value) >= 6
    if WORDY.fullmatch(value):
        return False
    if len(value) >= 8 and looks_random(value):
        return True  # aBcDeFgHiJkLmN: letters only, but no word
    if not any(ch.isdigit() or not (ch.isalpha() or ch in "_.") for ch in value):
        return False  # a bare word or a dotted name
    m = _CODE_REF.fullmatch(value)
    return not (m and ("(" in value or "[" in value))


def machine_made(value: str) -> bool:
    """A value a weak key must hold to count: random-looking, or letters and digits with a
    symbol or mixed case (``Tr0ub4dor&3``), never words joined up (``vue-todo-list``)."""
    if len(value) >= 16 and looks_random(value):
        return True
    has = (any(c.isdigit() for c in value), any(c.isalpha() for c in value))
    mixed = value.lower() != value and value.upper() != value
    symbol = any(not (c.isalnum() or c in "-_.") for c in value)
    if any(c in "[]{}()\\" for c in value):
        return False  # a pattern or code, not a value
    return len(value) >= 8 and all(has) and (symbol or mixed) and not WORDY.fullmatch(value)
