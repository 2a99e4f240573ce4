"""Labelled secrets: the value assigned to a key that names a credential.

``password = "hunter2 with spaces!"``, ``db_token: ab$c…``, ``export GITHUB_TOKEN=…``,
``"client_secret": "…"``, ``--api-key …``, ``X-Auth-Token: …``, ``Authorization: Bearer …``,
``<password>…</password>``, ``数据库密码：…``, ``the password is hunter2``.

How a value is judged:

* The **key** is the identifier (snake, kebab, camel, dotted, quoted or not) that ends right
  before the assignment, cut into words. Its last word decides: ``password`` ``passwd``
  ``pwd`` ``passphrase`` ``secret`` ``token`` ``credential(s)`` ``apikey`` and a ``…key``
  after ``api`` ``secret`` ``private`` ``access`` ``client`` … are *strong*; ``key`` after
  another word, ``auth`` and ``bearer`` are *weak* (the value must look machine-made);
  ``primary_key``, ``max_tokens``, ``token_count``, ``pad_token`` or ``password_hash`` are
  not keys of a secret at all. Chinese labels (``密码`` ``密钥`` ``秘钥`` ``口令`` ``令牌``
  ``私钥``) are strong.
* The **value** is what the quotes hold, or the unquoted word (the rest of the line when a
  ``key:`` line starts with a secret-looking word, as YAML allows). Placeholders are left:
  ``<your-key>``, ``${TOKEN}``, ``$API_KEY``, ``{{ secrets.X }}``, ``xxxx``, ``***``,
  ``changeme``, ``None``, ``""``. An unquoted value that reads as code — a name, a dotted
  attribute, a call or a subscript (``password = getpass()``, ``token = args.token``,
  ``password: str``) — is left, except in a ``KEY=value`` environment line, where a bare
  word is the value itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ._secret_shapes import Span, folded, looks_random
from ._secret_values import WORDY as _WORDY
from ._secret_values import is_cmdlet, is_code
from ._secret_values import is_placeholder as _placeholder
from ._secret_values import machine_made as _machine_made
from ._secret_values import secret_looking as _secret_looking

__all__ = ["find_labelled", "key_strength", "may_label"]

_KIND = "labelled"

# A word that ends a secret's key (matched case-insensitively, then judged by _key_strength).
_WORD = re.compile(
    # the lookahead on the first character lets the scan skip most positions in C
    r"(?=[PpSsſTtAaKkCcBb 密秘口令私])"
    r"(?:(?i:passwords?|passwd|passphrase|pwd|pass|secrets?|tokens?|api[_-]?keys?|keys?"
    r"|credentials?|creds|auth|bearer|pat|psk)"
    # a neutral ending after the word: secret_key_base, password_value, token_b64
    r"(?i:[_-](?:key[_-])?(?:base|value|val|str|string|raw|plain|b64)(?![A-Za-z0-9]))?"
    r"|(?:API|api)?[ ]?(?:密码|密钥|秘钥|口令|令牌|私钥))"
    # Only where a value can follow (an assignment, "is", or a long bare word): most
    # mentions of "key" or "token" in text and code are skipped here, in C.
    r"(?=\\?[\"'`]?\]?[ \t]*+(?::=|=>|==|[=:＝：])"
    r"|[ \t]++(?:is|was|are)[ \t]"
    r"|是|为"
    r"|[ \t]++(?:[\"'`]|\S{6}))"
)
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$@")
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")

_STRONG = frozenset(
    {"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "credential"}
    | {"credentials", "creds", "psk"}
)
_HASHED = frozenset({"hash", "hashed", "sha", "sha1", "sha256", "digest", "fingerprint"})
_NEUTRAL_ENDS = frozenset({"base", "value", "val", "str", "string", "raw", "plain", "b64"})
_KEY_SECRET_BEFORE = frozenset(
    {"api", "secret", "private", "access", "client", "auth", "signing", "encryption", "master"}
    | {"account", "service", "app", "consumer", "license", "deploy", "session", "webhook"}
    | {"admin", "root", "shared", "storage", "subscription", "sas", "hmac", "jwt", "cookie"}
)
_KEY_NOT_SECRET_BEFORE = frozenset(
    {"primary", "foreign", "sort", "cache", "partition", "hash", "group", "dict", "map"}
    | {"index", "unique", "row", "public", "lookup", "idempotency", "object", "cursor"}
    | {"composite", "natural", "surrogate", "cache", "join", "dedup", "routing", "shard"}
    | {"translation", "i18n", "message", "registry", "react", "list", "store", "state"}
    | {"config", "setting", "settings", "env", "field", "column", "table", "query", "param"}
    | {"hot", "short", "shortcut", "keyboard", "press", "on", "the", "a", "any", "this", "no"}
)
_TOKEN_NOT_SECRET_BEFORE = frozenset(
    {"max", "min", "num", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "start"}
    | {"end", "stop", "next", "page", "continuation", "cancellation", "cancel", "sync"}
    | {"resume", "split", "lexer", "parse", "parser", "input", "output", "completion"}
    | {"prompt", "total", "reasoning", "cached", "cache", "design", "color", "theme", "css"}
    | {"the", "a", "each", "every", "one", "this", "that", "no", "new", "image", "text"}
)
_SECRET_PHRASE_BEFORE = _KEY_SECRET_BEFORE | {"refresh", "bearer", "id", "personal", "bot"}

# What may follow a key: an optional closing quote (or `"]`), then an assignment.
_AFTER_KEY = re.compile(
    r"(?P<close>\\?[\"'`]\]?|\])?"
    # a typed declaration first: API_KEY: &str = "…", apiKey: string = "…"
    r"(?:(?P<typed>[ \t]*+:[ \t]++[&\w<>\[\]|.,']{1,40}?(?:[ \t]++[&\w<>\[\]|.,']{1,20}?)?"
    r"[ \t]++=)(?![=>])(?:[ \t]*+\r?\n(?=[ \t]))?[ \t]*+"
    r"|(?P<op>[ \t]*+(?::=|=>|==|[=＝](?:[ \t]*+\r?\n(?=[ \t]))?|[:：])[ \t]*+"
    r"|[ \t]++(?:is|was|are)[ \t]++|(?:是|为)[ \t]*+))"
)
# Where an unquoted value ends: whitespace, or CJK text (after an English label); after a
# Chinese label only CJK punctuation ends it (密码：青山绿水8133@ is a password).
_CJK_STOP = re.compile(r"[\s\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]")
# A code reference with a literal fallback: process.env.X || 'literal', getenv(X) or "literal"
# (the reference's closing brackets and quotes may stand between: getenv('X') or 'literal')
_FALLBACK = re.compile(
    r"[)\]\"'`]{0,4}+[ \t]*+(?:\|\||\?\?|\bor\b)[ \t]*+"
    r"(?P<q>[\"'`])(?P<lit>[^\"'`\n]{4,200}+)(?P=q)"
)
# ... or a default given to the lookup: os.getenv("X", "literal"), ENV.fetch('X', 'literal')
_DEFAULT_ARG = re.compile(
    r"[A-Za-z_$][\w.$]{0,80}?\b(?:getenv|get|fetch|env)\([ \t]*+(?P<q0>[\"'])[^\"'\n]{1,100}+"
    r"(?P=q0)[ \t]*+,[ \t]*+(?P<q>[\"'])(?P<lit>[^\"'\n]{4,200}+)(?P=q)[ \t]*+\)"
)
_FLAG_AFTER = re.compile(r"(?:=|[ \t]++)")
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "「": "」", "『": "』", "‘": "’"}
_VALUE_STOP = re.compile(r"[\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
_TRAILING = ",;.:!?)]}>'\"`="


def _parts(key: str) -> list[str]:
    return [p.lower() for p in _PARTS.findall(key)]


_AS_ASCII = str.maketrans({"ſ": "s", "ı": "i"})


def _as_ascii(name: str) -> str:
    """``name`` with "ſ" and "ı" as the letters the case-blind pattern reads them as, in
    the case of the rest of the name ("DB_PAſSWORD" -> "DB_PASSWORD")."""
    rest = name.replace("ſ", "").replace("ı", "")
    return name.upper() if rest.isupper() else name.translate(_AS_ASCII)


def _key_strength(key: str, word: str, before_word: str) -> int:
    """2 strong, 1 weak (the value must look machine-made), 0 not a secret's key."""
    if not key.isascii():  # the pattern read "ſ" and "ı" as "s" and "i": so does the name
        key, word = _as_ascii(key), _as_ascii(word)
    w = word.lower().replace(" ", "")
    if any("\u4e00" <= ch <= "\u9fff" for ch in w):
        return 2
    parts = _parts(key)
    if not parts:
        return 0
    if _HASHED & set(parts):
        return 0  # password_hash, hashed_secret, token_sha256: a digest, not the secret
    if len(parts) > 1 and parts[-1] in _NEUTRAL_ENDS and _STRONG & set(parts[:-1]):
        return 2  # secret_key_base, password_value, token_b64
    last = parts[-1]
    # A word before the key, across a space, counts only when it names a credential
    # ("API key: …"); "restored from key: …" is prose.
    prev = (
        parts[-2]
        if len(parts) > 1
        else (before_word if before_word in _SECRET_PHRASE_BEFORE else "")
    )
    if last in ("keys", "tokens", "secrets", "passwords"):
        return 0  # a collection or a count (max_tokens, api_keys: [...])
    if last in ("key", "keys"):
        if prev in _KEY_SECRET_BEFORE:
            return 2
        if len(parts) > 1 and key.isupper() and prev not in _KEY_NOT_SECRET_BEFORE:
            return 2  # OPENAI_KEY, AZURE_OPENAI_KEY: an environment variable's key
        return 0 if (not prev or prev in _KEY_NOT_SECRET_BEFORE) else 1
    if last == "token" and prev in _TOKEN_NOT_SECRET_BEFORE:
        return 0
    if last == "pass":
        return 2 if len(parts) > 1 or key.isupper() else 0
    if last == "pat":  # a personal access token: GITHUB_PAT, AZURE_DEVOPS_EXT_PAT
        return 2 if len(parts) > 1 and key.isupper() else 0
    if last in _STRONG:
        return 2
    if any(last.endswith(s) for s in ("password", "passwd", "token", "secret", "apikey")):
        return 2  # accesstoken, dbpassword
    if last in ("auth", "bearer"):
        return 1
    return 0


def _env_line(text: str, key_start: int, key: str, op: str) -> bool:
    """``KEY=value`` at a line's start (after ``export``/``set``/``ENV``): the value is a
    literal even when it is a bare word."""
    if op != "=" or not key.replace("_", "").isupper():
        return False
    line_start = text.rfind("\n", 0, key_start) + 1
    lead = text[line_start:key_start].strip()
    return lead in ("", "export", "set", "ENV", "env", "-e", "--env") or lead.endswith(
        (" -e", "$env:", "export", "setx")
    )


def _indented(text: str, key_start: int) -> bool:
    """The key starts an indented line (YAML nesting), not a sentence."""
    lead = text[text.rfind("\n", 0, key_start) + 1 : key_start]
    return bool(lead) and not lead.strip(" \t-")


def _line_start(text: str, key_start: int) -> bool:
    line_start = text.rfind("\n", 0, key_start) + 1
    lead = text[line_start:key_start].strip(" \t-\"'")
    return lead == ""


def _read_value(text: str, start: int, cjk: bool = False) -> tuple[int, int, bool] | None:
    """(start, end, quoted) of the value that begins at ``start`` (``cjk``: after a Chinese
    label, where CJK characters may be part of the value)."""
    if start >= len(text):
        return None
    escaped = text.startswith('\\"', start) or text.startswith("\\'", start)
    opener = text[start + 1] if escaped else text[start]
    if opener in _QUOTES:
        closer = ("\\" + _QUOTES[opener]) if escaped else _QUOTES[opener]
        body = start + (2 if escaped else 1)
        line_end = text.find("\n", body)
        limit = min(len(text), body + 500, line_end if line_end >= 0 else len(text))
        end = text.find(closer, body, limit)
        if end > body:
            return body, end, True
        if end == body:
            return None  # ""
        start = body  # no closing quote on the line: read it as unquoted
    m = (_CJK_STOP if cjk else _VALUE_STOP).search(text, start, min(len(text), start + 300))
    end = m.start() if m else min(len(text), start + 300)
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return (start, end, False) if end > start else None


def _rest_of_line(text: str, start: int) -> int:
    line_end = text.find("\n", start)
    end = len(text) if line_end < 0 else line_end
    comment = text.find(" #", start, end)
    if comment >= 0:
        end = comment
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    return end


# After an unquoted value, what makes it an expression.
_CODE_NEXT = re.compile(r"[ \t]*+(?:\?[ .]|\|\||&&|\+[ \t]|\*[ \t]|\(|\[|\?\?)")
_PROSE_OPS = frozenset({"is", "was", "are", "是", "为"})
_HUMAN = frozenset({"password", "passwd", "pwd", "passphrase", "pass"})
_CODE_AFTER = re.compile(r"\|\||&&| \? |\(|=>|[,;{]\s*$|[ \t][-+*/%][ \t]")


def _human(key: str, word: str) -> bool:
    """Whether people choose this key's values (a password), not machines (a key, a token)."""
    if any(label in word for label in ("密码", "口令")):
        return True
    parts = _parts(key)
    return bool(parts) and (parts[-1] in _HUMAN or parts[-1].endswith(("password", "passwd")))


def _multiword(text: str, key_start: int, v_end: int) -> bool:
    """Whether a ``key: value`` line goes on past its first word with something other than
    letters (``correct horse battery 9``), and does not read as code."""
    if not _line_start(text, key_start):
        return False
    rest = _rest_of_line(text, v_end)
    tail = text[v_end:rest]
    first = text[text.rfind(" ", 0, v_end) + 1 : v_end]
    return (
        tail[:1] in (" ", "\t")
        and not any(c in first for c in "([{=\"'`")
        and not is_code(first)
        and any(not (c.isalpha() or c in " \t") for c in tail)
        and not _CODE_AFTER.search(tail)
        and not _VALUE_STOP.search(tail.replace(" ", "").replace("\t", ""))
    )


def _value_end(text: str, key_start: int, op: str, v_start: int, v_end: int) -> int:
    """Where an unquoted value ends: its word, or the line's end on a ``key: value`` /
    ``key = value`` line (YAML and INI allow spaces), unless the line reads as code."""
    if op not in (":", "=") or not _line_start(text, key_start):
        return v_end
    rest = _rest_of_line(text, v_end)
    tail = text[v_end:rest]
    if "." in text[v_start:v_end] or _CODE_AFTER.search(tail):
        return v_end
    if _VALUE_STOP.search(tail.replace(" ", "").replace("\t", "")):
        return v_end  # CJK after the value: a sentence, not YAML
    return max(v_end, rest)


_PS_VARIABLE = re.compile(r"\$(?:[A-Za-z]{1,12}+:)?$")  # $password, $env:TOKEN, $script:pw
_PS_ARGUMENT = re.compile(r"[ \t]++-[A-Za-z]|[ \t]*+\|")  # -AsSecureString, a pipe


_SHELL_LEADS = ("", "export", "local", "readonly", "declare", "set", "env")


def _shell_assignment(text: str, key_start: int) -> bool:
    """``NAME=`` at a line's start (after ``export``/``local``/…): a shell assignment."""
    lead = text[text.rfind("\n", 0, key_start) + 1 : key_start].strip()
    return lead in _SHELL_LEADS or lead.endswith(";")


def _cmdlet_run(text: str, key_start: int, v_end: int) -> bool:
    """Whether a cmdlet's name after a key is run (its output the value): the key is a
    PowerShell variable, where a bare word is a command, or a parameter or a pipe follows."""
    if _PS_VARIABLE.search(text, max(0, key_start - 14), key_start):
        return True
    return _PS_ARGUMENT.match(text, v_end) is not None


def _judge(
    text: str, key_start: int, key: str, word: str, op: str, value_at: int, strength: int,
    flag: bool,
) -> Span | None:  # fmt: skip
    cjk = any("\u4e00" <= ch <= "\u9fff" for ch in word + text[value_at : value_at + 1])
    read = _read_value(text, value_at, cjk=cjk)
    if read is None:
        return None
    v_start, v_end, quoted = read
    value = text[v_start:v_end]
    fallback = None
    if not quoted:
        fallback = _FALLBACK.match(text, v_end) or _DEFAULT_ARG.match(text, v_start)
    if fallback is not None:  # the literal is the value, judged as a quoted one
        v_start, v_end, quoted = fallback.start("lit"), fallback.end("lit"), True
        value = fallback.group("lit")
    if _placeholder(value):
        return None
    if not quoted and is_cmdlet(value) and _cmdlet_run(text, key_start, v_end):
        return None  # $password = Read-Host -AsSecureString: what a cmdlet obtains, no literal
    if quoted and text[v_start - 1] == "`" and op == "=" and _shell_assignment(text, key_start):
        return None  # TOKEN=`gh auth token`: the shell runs what backquotes hold
    op = op.strip()
    if not op and not flag:  # "passphrase 3f9a…": no operator, a machine-made value
        # or a quoted literal right after a password (SQL's WITH PASSWORD 'x')
        ok = (len(value) >= 16 and looks_random(value)) or (quoted and _human(key, word))
    elif strength == 1:  # a weak key: the value must be machine-made
        ok = _machine_made(value)
    elif op in _PROSE_OPS:  # "the password is …"
        ok = len(value) >= 6 and (looks_random(value) or _secret_looking(value))
    elif (
        not quoted
        and op in (":", "=")
        and (len(_parts(key)) > 1 or _indented(text, key_start) or op == "=")
        and _multiword(text, key_start, v_end)
    ):
        # YAML "db_token: correct horse battery 9": a compound key's value runs to the line end
        end = _value_end(text, key_start, op, v_start, v_end)
        return v_start, end, _KIND
    elif not _human(key, word) and _WORDY.fullmatch(value):
        ok = False  # apiKey: 'ollama', token = "not-required": a stand-in, not a key
    elif quoted:
        ok = True
    elif _CODE_NEXT.match(text, v_end):
        ok = False  # isLiteLLM ? a : b, base + suffix: an expression, not a value
    elif _secret_looking(value):
        return v_start, _value_end(text, key_start, op, v_start, v_end), _KIND
    else:
        ok = (
            _env_line(text, key_start, key, op)
            and re.fullmatch(r"[A-Za-z0-9_]+", value) is not None
        )
    return (v_start, v_end, _KIND) if ok else None


def _key_bounds(text: str, word_start: int, word_end: int) -> tuple[int, str] | None:
    """The key that ends with the word at ``word_start:word_end``, or None if the key goes
    on past the word (``password_hash``, ``passwordless``, ``tokenizer``)."""
    nxt = text[word_end : word_end + 1]
    if nxt and (nxt.isalnum() or nxt == "_") and not ("\u4e00" <= nxt <= "\u9fff"):
        return None
    start, floor = word_start, max(0, word_start - 80)  # a key is short; bound the walk
    while start > floor and text[start - 1] in _IDENT_CHARS:
        start -= 1
    while start < word_start and text[start] in ".-$@":
        start += 1
    return start, text[start:word_end]


_SEGMENTS = re.compile(r"(?:[A-Za-z0-9_.-]+:){3}$")  # a:b:c: — an identifier's segments


def _a_name_not_a_key(text: str, key_start: int) -> bool:
    """``${PASSWORD:?…}``, ``%TOKEN%``, an ARN's segment (``arn:aws:secretsmanager:…:secret:…``):
    the word names a thing, it is no key."""
    before = text[max(0, key_start - 2) : key_start]
    if before.endswith(("${", "%")):
        return True
    if before.endswith(":"):
        word = text[max(0, key_start - 80) : key_start].rsplit(None, 1)[-1]
        return "arn:" in word or _SEGMENTS.search(word) is not None  # not $env:X, :password
    return False


def _word_before(text: str, key_start: int) -> str:
    m = re.search(r"([A-Za-z]{2,20})[ _-]$", text[max(0, key_start - 22) : key_start])
    return m.group(1).lower() if m else ""


# Every alternative of _WORD starts with one of these (in lower case).
_STEMS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "bearer", "api", "pat", "psk")
_CJK_STEMS = ("密码", "密钥", "秘钥", "口令", "令牌", "私钥")


def _words(text: str, lower: str | None = None) -> Iterator[re.Match[str]]:
    """The matches of ``_WORD``, found by ``str.find`` on the stems (many times faster than
    the regex's own scan) and confirmed by the regex where a stem occurs (``lower``:
    ``text.lower()``, when the caller has it)."""
    if lower is None:
        lower = text.lower()
    if folded(text, lower) is None:
        # a letter whose lower case is longer (positions shift), or one the pattern reads
        # as an ASCII letter that lowering keeps ("paſsword", "apı_key"): scanned whole
        yield from _WORD.finditer(text)
        return
    starts: set[int] = set()
    for stem in _STEMS:
        i = lower.find(stem)
        while i >= 0:
            starts.add(i)
            i = lower.find(stem, i + 1)
    for stem in () if text.isascii() else _CJK_STEMS:
        i = text.find(stem)
        while i >= 0:
            starts.update((i, i - 1, i - 3, i - 4))  # "API密钥", "api 密钥"
            i = text.find(stem, i + 1)
    end = -1
    for i in sorted(starts):
        if i < max(end, 0):
            continue
        m = _WORD.match(text, i)
        if m is not None:
            end = m.end()
            yield m


def may_label(text: str, lower: str) -> bool:
    """False only when ``find_labelled`` finds nothing in ``text`` (``lower``: its lower
    case): no key's stem is in it."""
    if folded(text, lower) is None:
        return True  # a stem the lowered text does not show ("paſsword")
    for stem in _STEMS:
        if stem in lower:
            return True
    return not text.isascii() and any(stem in text for stem in _CJK_STEMS)


def find_labelled(text: str, lower: str | None = None) -> Iterator[Span]:
    """Spans of the values assigned to keys that name a credential (see the module docs;
    ``lower``: ``text.lower()``, when the caller has it)."""
    for m in _words(text, lower):
        bounds = _key_bounds(text, m.start(), m.end())
        if bounds is None:
            continue
        key_start, key = bounds
        if _a_name_not_a_key(text, key_start):
            continue
        flag = text[max(0, key_start - 2) : key_start] in ("--", " -")
        strength = _key_strength(key, m.group(0), _word_before(text, key_start))
        if strength == 0:
            continue
        after = _AFTER_KEY.match(text, m.end())
        if after is None and (flag or strength == 2):
            after = _FLAG_AFTER.match(text, m.end())
        if after is None:
            continue
        op = (
            "="
            if after.groupdict().get("typed")
            else (after.groupdict().get("op") or after.group(0))
        )
        span = _judge(text, key_start, key, m.group(0), op, after.end(), strength, flag)
        if span is not None:
            yield span


def key_strength(name: str) -> int:
    """2 when ``name`` (a tag, an attribute, a cookie) names a credential, 1 when it may."""
    return _key_strength(name, name, "")
