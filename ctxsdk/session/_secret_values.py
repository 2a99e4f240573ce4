"""How a value reads: a stand-in, a credential, or something machine-made.

The finders that know a value by its key (``_secret_labels``) or by where it sits
(``_secret_contexts``) judge it here, the same way.
"""

from __future__ import annotations

import re

from ._secret_shapes import looks_random

__all__ = [
    "WORDY",
    "is_cmdlet",
    "is_code",
    "is_placeholder",
    "machine_made",
    "secret_looking",
]

# Lower-case words joined up: an identifier, a slug or a sentence, not a credential.
WORDY = re.compile(r"[a-z]++(?:[-_ .][a-z]++)*+")
# A name, a dotted or ``::`` path (std::env::var), then maybe a call or a subscript.
_CODE_REF = re.compile(
    r"[A-Za-z_$][\w$]*+(?:(?:\.|::)[A-Za-z_$][\w$]*+)*+(?:\(.*|\[.*)?", re.DOTALL
)
_PLACEHOLDER_WORDS = frozenset(
    {"string", "str", "password", "passwd", "secret", "token", "test", "example", "sample"}
    | {"dummy", "fake", "changeme", "change-me", "change_me", "none", "null", "nil", "true"}
    | {"false", "undefined", "required", "optional", "hidden", "masked", "redacted", "empty"}
    | {"placeholder", "todo", "tbd", "n/a", "bearer", "basic", "secretstr", "bytes", "int"}
    | {"any", "env", "apikey", "api_key", "api-key", "mypassword", "yourpassword", "value"}
)
_PLACEHOLDER_STARTS = ("<", "${", "$(", "{", "%", "your", "…", "...")
# Stand-ins in brackets or a YAML tag: [REDACTED], [YOUR-PASSWORD], (protected), !vault |
_BRACKETED = re.compile(r"\[[\w :./-]*+\]?|\([\w :./-]*+\)?|![A-Za-z]++(?:[ |>].*)?")
# A version (a package.json dependency under a key like "jsonwebtoken"): ^9.0.2, ~1.4, >=2
_VERSION = re.compile(r"[\^~<>=v]{0,3}[0-9]++(?:\.[0-9x*]++)++(?:[-+.][\w.]++)?")
# Keys that are public by design (Stripe's and Mapbox's publishable keys).
_PUBLIC = ("pk_live_", "pk_test_", "pk.eyj")
# A file's path (./service-account.json, /usr/lib/git-core/git-gui--askpass): where a
# credential may be kept, not the credential.
_PATH = re.compile(
    r"(?:\.{0,2}/|~/|[a-z]:\\)[^\s]*+|[\w./-]++\.(?:json|pem|key|p12|pfx|txt|env|ya?ml)"
)
_STAND_IN = re.compile(
    r"(.)\1{5}|your[-_]|[-_]here\b|redacted|example|replace[-_ ]?me|change[-_ ]?me"
    r"|insert[-_ ]|fill[-_ ]?in|^[a-z]++(?:_[a-z]++)++$"  # new_password: a variable's name
    r"|^(?:fake|dummy|test|mock|stub|sample)[-_ ]|[-_ ](?:fake|dummy|placeholder)$"
    r"|not[-_ ]a[-_ ]real|^(?:protected|hidden|sensitive|masked|unset|not set)\b"
)
_REFERENCES = (
    "op://", "vault:", "vault://", "arn:", "ssm:", "sm://", "secretsmanager:", "keyvault:",
    "azurekeyvault:", "gcp-secret:", "secret://", "env:", "file:", "/run/secrets/",
)  # fmt: skip
_TYPE = re.compile(
    r"&(?:'[a-z]+ )?(?:mut )?[a-z][\w:]*+|(?:optional|option|union)\[.*\]|[a-z]+\[.*\]"
    r"|(?:str|string|bytes|secretstr|secret|int|text|char\*|const char\*)(?:[ ]?\|[ ]?none)?[)]?"
)


_VARIABLE = re.compile(r"\$\{?(?:env:)?[a-z_][a-z0-9_]*\}?")
# PowerShell's approved verbs (``Get-Verb``): ``Verb-Noun`` names a cmdlet, and a cmdlet
# after an assignment is run, its output the value (``$pw = Read-Host -AsSecureString``).
_PS_VERBS = (
    "Add Approve Assert Backup Block Build Checkpoint Clear Close Compare Complete Compress "
    "Confirm Connect Convert ConvertFrom ConvertTo Copy Debug Deny Deploy Disable Disconnect "
    "Dismount Edit Enable Enter Exit Expand Export Find Format Get Grant Group Hide Import "
    "Initialize Install Invoke Join Limit Lock Measure Merge Mount Move New Open Optimize Out "
    "Ping Pop Protect Publish Push Read Receive Redo Register Remove Rename Repair Request "
    "Reset Resize Resolve Restart Restore Resume Revoke Save Search Select Send Set Show Skip "
    "Split Start Step Stop Submit Suspend Switch Sync Test Trace Unblock Undo Uninstall "
    "Unlock Unprotect Unpublish Unregister Update Use Wait Watch Write"
).split()
_CMDLET = re.compile(
    r"(?i:" + "|".join(sorted(_PS_VERBS, key=len, reverse=True)) + r")-[A-Za-z][A-Za-z0-9]++"
)


def is_cmdlet(value: str) -> bool:
    """A PowerShell cmdlet's name (``Read-Host``, ``Get-Credential``, ``Get-AzKeyVaultSecret``):
    an approved verb, a hyphen, a noun. Whether it is run, not written, is the caller's to
    judge (after ``$var =``, or before a ``-Parameter``)."""
    return _CMDLET.fullmatch(value) is not None


def is_placeholder(value: str) -> bool:
    """A stand-in, not a credential: ``<your-key>``, ``${TOKEN}``, ``xxxx``, ``changeme``,
    ``None``, a reference (``op://…``), a type (``&str``), a variable's name."""
    v = value.strip().lower()
    if len(v) < 4:
        return True
    if v in _PLACEHOLDER_WORDS or v.startswith(_PLACEHOLDER_STARTS):
        return True
    if _BRACKETED.fullmatch(v) or _VERSION.fullmatch(v):
        return True
    if "..." in v or "…" in v or _STAND_IN.search(v):
        return True  # a stand-in, or a shortened or masked display (sk-abc...xyz, ghp_xxxx)
    if v.startswith(_REFERENCES) or _PATH.fullmatch(v):
        return True  # where the secret is kept (op://…, vault:…, arn:…, a file's path)
    if v.startswith(_PUBLIC):
        return True  # a publishable key
    if _TYPE.fullmatch(v):
        return True  # a type (password: &str, token: Optional[str])
    if len(v) <= 12 and v.endswith(("-", "_")):
        return True  # a bare prefix (sk-ant-), not a key
    if v.startswith("$") and _VARIABLE.fullmatch(v):
        return True  # $TOKEN, ${TOKEN}, PowerShell's $env:TOKEN / ${env:TOKEN}
    core = v.replace("-", "").replace("_", "")
    return bool(core) and (set(core) <= {"*", "x", ".", "•", "?", "#"} or len(set(core)) == 1)


def secret_looking(value: str) -> bool:
    """An unquoted value that reads as a credential: digits or symbols among letters, or
    six digits or more; not a plain word, words joined up (``short-value``), nor code."""
    if value.isdigit():
        return len(value) >= 6
    if WORDY.fullmatch(value) or _code(value) or value[:1] in "[{(":
        return False  # words, code, or a list, an object or a call's arguments
    if len(value) >= 12 and looks_random(value):
        return True  # aBcDeFgHiJkLmN: letters only, but no word
    return any(ch.isdigit() or not (ch.isalpha() or ch in "_.") for ch in value)


# Where code reads a credential from, as the first name of a dotted path.
_CODE_ROOTS = frozenset(
    {"req", "res", "request", "response", "self", "this", "os", "process", "config", "cfg"}
    | {"settings", "env", "args", "opts", "options", "params", "ctx", "window", "document"}
    | {"props", "state", "secrets", "vault", "credentials", "creds", "auth", "user", "app"}
)
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*+(?:\??\.[A-Za-z_$][\w$]*+)++")


def _code(value: str) -> bool:
    """A call, a subscript, or a dotted path that starts at a known root or goes on as code
    (``os.getenv("X"``, ``req.headers.authorization?.replace(…``, ``config["token"]``)."""
    m = _CODE_REF.fullmatch(value)
    if m and ("(" in value or "[" in value):
        return True
    dotted = _DOTTED.match(value)
    if dotted is None:
        return False
    root = value.split(".", 1)[0].rstrip("?")
    after = value[dotted.end() : dotted.end() + 1]
    return root in _CODE_ROOTS or "?." in value or (after != "" and after in "([?")


def machine_made(value: str) -> bool:
    """A value a weak key must hold to count: random-looking, or letters and digits with a
    symbol or mixed case (``Tr0ub4dor&3``), never words joined up (``vue-todo-list``)."""
    if any(c in "[]{}()\\" for c in value) or _code(value) or "=" in value.rstrip("="):
        return False  # a pattern, code or a key=value pair, not a value
    if len(value) >= 16 and looks_random(value):
        return True
    has = (any(c.isdigit() for c in value), any(c.isalpha() for c in value))
    mixed = value.lower() != value and value.upper() != value
    symbol = any(not (c.isalnum() or c in "-_.") for c in value)
    return len(value) >= 8 and all(has) and (symbol or mixed) and not WORDY.fullmatch(value)


is_code = _code
