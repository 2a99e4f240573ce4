"""Redaction in the base layer (the BeliefMerge seed's ``redact.js`` families).

Every credential-shaped fixture is ASSEMBLED AT RUNTIME from pieces, so no literal token
shape is committed (GitHub push protection trips on them otherwise). Keep it that way.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsdk.errors import InvalidArgument
from ctxsdk.session import Redaction, redact, withheld
from ctxsdk.session.kernel import REDACTION_KINDS, REDACTION_MARKER, redact_message, withheld_notice
from ctxsdk.testing import LogBuilder

ALNUM = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z"
HEX = "0123456789abcdef"
UPPER = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
B64URL = ALNUM + "-_"


def _run(n: int, alphabet: str = ALNUM, shift: int = 0) -> str:
    """``n`` characters cycling through ``alphabet``: deterministic, not a real token."""
    return "".join(alphabet[(i * 7 + shift) % len(alphabet)] for i in range(n))


def _j(*parts: str) -> str:
    return "".join(parts)


# kind -> a token of that kind, built from pieces.
TOKENS: dict[str, str] = {
    "openai": _j("s", "k-", _run(40, B64URL)),
    "openai-proj": _j("s", "k-", "pr", "oj-", _run(48, B64URL, 3)),
    "anthropic": _j("s", "k-", "an", "t-", "api03-", _run(60, B64URL, 1)),
    "google": _j("AI", "za", _run(35, B64URL, 2)),
    "github": _j("gh", "p_", _run(36)),
    "github-oauth": _j("gh", "o_", _run(36, shift=4)),
    "github-pat": _j("git", "hub_", "pat_", _run(22), "_", _run(59, shift=5)),
    "huggingface": _j("h", "f_", _run(34)),
    "aws-access-key": _j("AK", "IA", _run(16, UPPER)),
    "slack": _j("xo", "xb-", _run(12, "0123456789"), "-", _run(24)),
    "stripe": _j("s", "k_", "li", "ve_", _run(24)),
    "stripe-test": _j("r", "k_", "te", "st_", _run(24, shift=6)),
    "npm": _j("np", "m_", _run(36)),
    "jwt": _j(
        "ey", "J", _run(20, B64URL), ".", "ey", "J", _run(30, B64URL, 1), ".", _run(43, B64URL, 2)
    ),
    "dotted-key": _j(_run(32, HEX), ".", _run(16)),
}


def _kind(name: str) -> str:
    return {
        "openai-proj": "openai",
        "github-oauth": "github",
        "stripe-test": "stripe",
    }.get(name, name)


def _pem(label: str = "RSA") -> str:
    body = "\n".join(_run(64, ALNUM + "+/", i) for i in range(5))
    dashes = "-" * 5
    return _j(
        dashes, "BEGIN ", label, " PRIV", "ATE KEY", dashes, "\n", body, "\n",
        dashes, "END ", label, " PRIV", "ATE KEY", dashes,
    )  # fmt: skip


# --- must catch ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_every_provider_family_is_caught(name: str) -> None:
    kind = _kind(name)
    r = redact(f"the key is {TOKENS[name]} for prod")
    assert r.text == f"the key is [REDACTED:{kind}] for prod"
    assert dict(r.counts) == {kind: 1}
    assert r and r.withheld == 1


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_a_token_alone_in_quotes_or_json_is_caught(name: str) -> None:
    kind = _kind(name)
    for text, want in (
        (TOKENS[name], f"[REDACTED:{kind}]"),
        (f'"{TOKENS[name]}"', f'"[REDACTED:{kind}]"'),
        (json.dumps({"token": TOKENS[name]}), json.dumps({"token": f"[REDACTED:{kind}]"})),
        (f"(see {TOKENS[name]}).", f"(see [REDACTED:{kind}])."),
    ):
        assert redact(text).text == want


def test_anthropic_wins_over_openai() -> None:
    r = redact(TOKENS["anthropic"])
    assert r.text == "[REDACTED:anthropic]" and dict(r.counts) == {"anthropic": 1}


def test_every_kind_is_listed() -> None:
    assert {_kind(n) for n in TOKENS} | {"private-key", "labelled", "connection-string"} <= set(
        REDACTION_KINDS
    )
    assert len(set(REDACTION_KINDS)) == len(REDACTION_KINDS)


def test_too_short_or_wrong_length_is_left() -> None:
    for text in (
        _j("s", "k-", _run(19, B64URL)),  # openai needs 20
        _j("gh", "p_", _run(29)),  # github needs 30
        _j("AK", "IA", _run(15, UPPER)),  # aws needs exactly 16
        _j("AK", "IA", _run(17, UPPER)),
        _j("s", "k_", "demo_", _run(24)),  # stripe needs live_/test_/prod_
        _j("x", "ox", "q-", _run(24)),  # slack letters are b a p r s
        _j(_run(32, HEX), ".", _run(15)),  # dotted key needs 16 after the dot
        _j("my", "s", "k-", _run(30, B64URL)),  # not at a word start
    ):
        r = redact(text)
        assert r.text == text and not r, text


def test_several_in_one_text_are_counted_by_kind() -> None:
    text = " ".join([TOKENS["openai"], TOKENS["github"], TOKENS["openai-proj"], _pem()])
    r = redact(text)
    assert r.text == (
        "[REDACTED:openai] [REDACTED:github] [REDACTED:openai] [REDACTED:private-key]"
    )
    assert dict(r.counts) == {"private-key": 1, "openai": 2, "github": 1}
    assert list(r.counts) == [k for k in REDACTION_KINDS if k in r.counts]
    assert r.withheld == 4 and r.notice == "4 credentials withheld"


# --- PEM -----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["RSA", "EC", "OPENSSH", "ENCRYPTED", "DSA"])
def test_a_pem_private_key_block_is_replaced_whole(label: str) -> None:
    r = redact(f"key:\n{_pem(label)}\nthen more")
    assert r.text == "key:\n[REDACTED:private-key]\nthen more"
    assert dict(r.counts) == {"private-key": 1}


def test_pem_blocks_are_not_greedy() -> None:
    r = redact(f"{_pem()}\nkeep this line\n{_pem('EC')}")
    assert r.text == "[REDACTED:private-key]\nkeep this line\n[REDACTED:private-key]"
    assert r.counts["private-key"] == 2


def test_a_cut_pem_key_is_replaced_and_a_public_key_or_bare_header_left() -> None:
    dashes = "-" * 5
    head = _j(dashes, "BEGIN RSA PRIV", "ATE KEY", dashes)
    cut = _j(head, "\nMIIE", _run(40), "\n", _run(64))
    assert redact(f"head -c 120 key.pem\n{cut}").text == (
        "head -c 120 key.pem\n[REDACTED:private-key]"
    )
    public = _j(dashes, "BEGIN PUBLIC KEY", dashes, "\nMIIB\n", dashes, "END PUBLIC KEY", dashes)
    for text in (public, f"{head}\nMIIE", f"grep -l '{head}' *.pem"):
        assert redact(text).text == text


# --- labelled ------------------------------------------------------------------------------

VALUE = _run(24, ALNUM + "-_./+", 3)


@pytest.mark.parametrize(
    "label",
    [
        "api_key=",
        "API Key: ",
        "api-key = ",
        "apikey:",
        "OPENAI_API_KEY=",
        "access_token: ",
        "Access Token = ",
        "auth-token:",
        "secret_key=",
        "client_secret: ",
        "password=",
        "db_password: ",
        "PASSWD=",
        "bearer: ",
        "api_key＝",
        "API密钥：",
        "api密钥: ",
        "密钥：",
        "我的密码=",
        "'password': '",
        'export API_KEY=\\"',
    ],
)
def test_a_labelled_value_is_replaced_and_the_label_kept(label: str) -> None:
    r = redact(f"{label}{VALUE}")
    assert r.text == f"{label}[REDACTED:labelled]"
    assert dict(r.counts) == {"labelled": 1}


def test_cn_label_with_full_width_colon_and_json_api_key() -> None:
    cn = redact(_j("请用这个 API密钥：", VALUE, " 调用"))
    assert cn.text == "请用这个 API密钥：[REDACTED:labelled] 调用"
    js = redact(json.dumps({"api_key": VALUE, "model": "deepseek-v4-flash"}))
    assert json.loads(js.text) == {"api_key": "[REDACTED:labelled]", "model": "deepseek-v4-flash"}
    assert js.withheld == 1


def test_a_provider_token_under_a_label_keeps_its_provider_kind() -> None:
    r = redact(f"api_key={TOKENS['openai']}")
    assert r.text == "api_key=[REDACTED:openai]" and dict(r.counts) == {"openai": 1}


@pytest.mark.parametrize(
    "value",
    [
        "<your-api-key-goes-here>",
        "{{OPENAI_API_KEY_FROM_VAULT}}",
        "${OPENAI_API_KEY_FROM_ENV}",
        "...redacted-by-the-user-here",
        "xxxxxxxxxxxxxxxxxxxxxxxx",
        "XXXXXXXXXXXXXXXXXXXX",
        "aaaaaaaaaaaaaaaaaaaaaaaa",
        "placeholder_value_for_docs",
        "REDACTED_BY_OPS_TEAM_2026",
        "your_api_key_goes_here_123",
        "YourSecretPasswordHere123",
        "short-value",  # under 16
    ],
)
def test_labelled_placeholders_are_left(value: str) -> None:
    for label in ("api_key=", "password: ", "API密钥：", '"client_secret": "'):
        text = f"{label}{value}"
        r = redact(text)
        assert r.text == text and r.withheld == 0, text


# --- must keep -----------------------------------------------------------------------------

MUST_KEEP = [
    "The token budget is 1200.",
    "The token expired yesterday.",
    "Use a secret management service.",
    "Rotate the password every 90 days; the password policy is in the wiki.",
    "The API key was revoked, see the access token docs.",
    "commit 4f9e2c1d8b7a6e5f4d3c2b1a0f9e8d7c6b5a4f3e fixed it",
    "See arXiv 2402.17753 and arXiv:2310.06825v2.",
    "/home/u/proj/src/ctxsdk/session/_redact.py:120",
    "C:\\Users\\u\\AppData\\Local\\dsh\\sessions\\f975843c.jsonl",
    "error EPERM_ACCESS_DENIED_2026 from the sandbox",
    "md5 d41d8cd98f00b204e9800998ecf8427e of the file",
    "d41d8cd98f00b204e9800998ecf8427e.jsonl",
    "id 550e8400-e29b-41d4-a716-446655440000 and 3e25dc34-87e0-503a-893d-bee3a56ca0dd",
    "call_00_QdJT8ZnfbBCmtrPVcwHxjNnw",
    "sha256:9f2c1e PARSE-7741 v0.3.1 node 20 and 22",
    "The task-queue is sk-learn-compatible and risk-aware.",
    "AKIA is a prefix of AWS keys; AKIAEXAMPLE is not one.",
    "Header: Authorization: Bearer <token>",
    "password: required",
    "[REDACTED:openai] [REDACTED:labelled] api_key=[REDACTED:labelled]",
    "",
]


@pytest.mark.parametrize("text", MUST_KEEP)
def test_must_keep(text: str) -> None:
    r = redact(text)
    assert r.text == text
    assert dict(r.counts) == {} and r.withheld == 0 and not r and r.notice == ""


# --- the result ----------------------------------------------------------------------------


def test_redaction_is_a_frozen_value() -> None:
    r = redact(f"a {TOKENS['npm']} b")
    assert isinstance(r, Redaction) and str(r) == "a [REDACTED:npm] b"
    assert r == redact(f"a {TOKENS['npm']} b") and hash(r) == hash(redact(f"a {TOKENS['npm']} b"))
    assert repr(r) == "Redaction(withheld=1, npm=1)"
    with pytest.raises(AttributeError):
        r.text = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        r.counts["npm"] = 2  # type: ignore[index]
    assert Redaction("plain").withheld == 0 and not Redaction("plain")


def test_withheld_notice() -> None:
    assert withheld_notice(0) == ""
    assert withheld_notice(1) == "1 credential withheld"
    assert withheld_notice(3) == "3 credentials withheld"
    assert redact(TOKENS["jwt"]).notice == "1 credential withheld"


def test_a_non_str_is_refused_clearly() -> None:
    with pytest.raises(InvalidArgument, match="takes a str"):
        redact(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="message mapping"):
        redact_message("text")  # type: ignore[arg-type]


# --- messages ------------------------------------------------------------------------------


def _events() -> list[dict[str, Any]]:
    b = LogBuilder(session_id="redact")
    b.turn(f"deploy with API密钥：{VALUE} please").assistant(
        text=f"Using {TOKENS['github']} now.",
        reasoning=f"The user gave password={VALUE}; also {TOKENS['anthropic']}.",
        tool_calls=[("bash", {"command": f"curl -H 'x-api-key: {TOKENS['openai']}' example.org"})],
    ).tool_results([f"AWS_ACCESS_KEY_ID={TOKENS['aws-access-key']}\n{_pem()}\nok"])
    return [copy.deepcopy(e) for e in b.events]


def _message(events: list[dict[str, Any]], type_: str) -> dict[str, Any]:
    for e in events:
        if e["type"] == type_:
            data: dict[str, Any] = e["data"]
            return data.get("message", data)  # type: ignore[no-any-return]
    raise AssertionError(type_)


def test_redact_message_on_a_real_assistant_message() -> None:
    msg = _message(_events(), "assistant/message")
    before = copy.deepcopy(msg)
    out, counts = redact_message(msg)
    assert msg == before  # the input is untouched
    assert counts == Counter({"anthropic": 1, "openai": 1, "github": 1, "labelled": 1})
    blocks = {b["type"]: b for b in out["content"]}
    assert blocks["text"]["text"] == "Using [REDACTED:github] now."
    assert blocks["reasoning"]["text"] == (
        "The user gave password=[REDACTED:labelled]; also [REDACTED:anthropic]."
    )
    call = blocks["tool-call"]
    assert json.loads(call["arguments"]) == {
        "command": "curl -H 'x-api-key: [REDACTED:openai]' example.org"
    }
    assert call["id"] == before["content"][2]["id"] and call["name"] == "bash"
    assert {k: v for k, v in out.items() if k != "content"} == {
        k: v for k, v in before.items() if k != "content"
    }
    again, none = redact_message(out)
    assert again == out and none == Counter()


def test_redact_message_on_a_tool_result_and_a_user_prompt() -> None:
    events = _events()
    result = _message(events, "tool/result")
    before = copy.deepcopy(result)
    out, counts = redact_message(result)
    assert result == before
    assert counts == Counter({"aws-access-key": 1, "private-key": 1})
    inner = out["content"][0]
    assert (
        inner["type"] == "tool-result" and inner["toolCallId"] == before["content"][0]["toolCallId"]
    )
    assert inner["content"][0]["text"] == (
        "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]\n[REDACTED:private-key]\nok"
    )
    prompt = _message(events, "user/message")
    out, counts = redact_message(prompt)
    assert out["content"][0]["text"] == "deploy with API密钥：[REDACTED:labelled] please"
    assert counts == Counter({"labelled": 1})


def test_redact_message_leaves_other_blocks_and_shapes_alone() -> None:
    msg = {
        "role": "user",
        "id": "m-1",
        "content": [
            {"type": "image", "attachment": {"attachmentId": TOKENS["npm"]}},
            {"type": "tool-call", "id": "c", "name": "f", "arguments": {"k": [TOKENS["npm"], 3]}},
            "a bare string " + TOKENS["huggingface"],
        ],
    }
    before = copy.deepcopy(msg)
    out, counts = redact_message(msg)
    assert msg == before
    assert out["content"][0] == before["content"][0]  # not text: ids are not scanned
    assert out["content"][1]["arguments"] == {"k": ["[REDACTED:npm]", 3]}
    assert out["content"][2] == "a bare string [REDACTED:huggingface]"
    assert counts == Counter({"npm": 1, "huggingface": 1})
    s_out, s_counts = redact_message({"role": "user", "content": f"hi {TOKENS['slack']}"})
    assert s_out == {"role": "user", "content": "hi [REDACTED:slack]"} and s_counts["slack"] == 1
    assert redact_message({"role": "user"}) == ({"role": "user"}, Counter())


# --- idempotent, linear, never raises ------------------------------------------------------

CORPUS = " \n".join([*TOKENS.values(), _pem(), f"api_key={VALUE}", f"密码：{VALUE}", *MUST_KEEP])


def test_idempotent() -> None:
    first = redact(CORPUS)
    assert first.withheld == len(TOKENS) + 3
    second = redact(first.text)
    assert second.text == first.text and second.withheld == 0 and dict(second.counts) == {}


MB = 1 << 20


@pytest.mark.parametrize(
    ("unit", "kind", "count"),
    [
        ("a", None, 0),
        ("sk-", None, 0),  # one run of the body class, and not a random one
        ("xoxb-", "slack", 1),
        ("AKIA", None, 0),
        ("eyJ", None, 0),
        ("eyJa.", None, 0),
        ("0123456789abcdef", None, 0),
        ("password:", "labelled", -1),  # a value of its own shape: redacted, in linear time
        ("password= ", None, 0),
        ("api_key ", None, 0),
        ("-----BEGIN RSA PRIV" + "ATE KEY-----", None, 0),  # many BEGINs, no END
        ("-----BEGIN ", None, 0),
        ("密码：", None, 0),
        ('\\"', None, 0),
    ],
)
def test_a_hostile_megabyte_completes(unit: str, kind: str | None, count: int) -> None:
    text = unit * (MB // len(unit))
    r = redact(text)
    if kind is None:
        assert r.text == text and r.withheld == 0
    elif count < 0:
        assert set(r.counts) == {kind} and redact(r.text).text == r.text
    else:
        assert dict(r.counts) == {kind: count}


def test_a_megabyte_of_real_tokens_is_counted_exactly() -> None:
    piece = f"{TOKENS['github']} {TOKENS['dotted-key']} password={VALUE}\n"
    n = MB // len(piece)
    r = redact(piece * n)
    assert dict(r.counts) == {"github": n, "dotted-key": n, "labelled": n}
    assert r.text == "[REDACTED:github] [REDACTED:dotted-key] password=[REDACTED:labelled]\n" * n


def test_a_megabyte_of_pem_headers_then_one_end_is_one_block() -> None:
    dashes = "-" * 5
    begin = _j(dashes, "BEGIN RSA PRIV", "ATE KEY", dashes, "\n")
    end = _j(dashes, "END RSA PRIV", "ATE KEY", dashes)
    r = redact(begin * (MB // len(begin)) + end + " tail")
    # headers with no key material stay; the block that ends is one key
    assert r.text.endswith("\n[REDACTED:private-key] tail") and r.withheld == 1


_ANY_CHAR = st.characters(exclude_categories=())  # surrogates included


def _corpus_texts() -> list[str]:
    from ctxsdk.bench._redact_corpus import corpus

    return [c.text for c in corpus()]


_SMALL = ["api_key=", "API密钥：", VALUE, '"', "'", " ", "-", "_", ".", "password: ", "\n"]
_JOINS = ["=", ":", "@", "://", "-----END RSA PRIV" + "ATE KEY-----"]
_PIECES = st.sampled_from([*TOKENS.values(), _pem(), *_SMALL, *_JOINS, *_corpus_texts()])
_TEXTS = st.lists(st.one_of(st.text(_ANY_CHAR, max_size=40), _PIECES), max_size=12).map("".join)


@settings(max_examples=600, deadline=None)
@given(_TEXTS)
def test_never_raises_and_is_idempotent(text: str) -> None:
    r = redact(text)
    assert isinstance(r.text, str) and r.withheld >= 0
    assert set(r.counts) <= set(REDACTION_KINDS) and all(n > 0 for n in r.counts.values())
    again = redact(r.text)
    assert again.text == r.text and again.withheld == 0
    assert (r.withheld == 0) == (r.text == text)


@settings(max_examples=100, deadline=None)
@given(st.text(_ANY_CHAR))
def test_arbitrary_text_never_raises(text: str) -> None:
    assert isinstance(redact(text).text, str)


# --- the corpus: the targets, as tests ---------------------------------------------


def test_the_corpus_meets_the_targets_per_family() -> None:
    from ctxsdk.bench._redact import _ours, score
    from ctxsdk.bench._redact_corpus import corpus

    cases = corpus()
    m = score(cases, _ours(cases))
    assert m["recall_provider_and_private_key"] >= 0.95
    assert m["recall_labelled"] >= 0.90
    assert m["recall_connection_string"] >= 0.90 and m["recall_jwt"] >= 0.90
    assert m["false_positive_rate"] <= 0.02
    assert m["identifiers_redacted"] == 0


@pytest.mark.parametrize(
    "text",
    [
        'password = "hunter2 with spaces!"',
        "db_token: ab$cD9!kq2Lm",
        "password: hunter2",
        "数据库密码：Tr0ub4dor&3",
        "postgres://app:S3cr3t!x@db.internal:5432/app",
        "Server=db;User Id=sa;Password=My$ecret!;",
    ],
)
def test_labelled_values_with_spaces_and_symbols_are_withheld(text: str) -> None:
    r = redact(text)
    assert r.withheld == 1 and "[REDACTED:" in r.text
    for secret in ("hunter2", "ab$cD9", "Tr0ub4dor", "S3cr3t", "My$ecret"):
        assert secret not in r.text


@pytest.mark.parametrize(
    "text",
    [
        "header X-Auth-Token must be set",
        "the tokenizer is cl100k_base",
        "token budget: 4000",
        "max_tokens = 4096",
        "apiKey: 'proxy-handled',",
        "password = os.environ['DB_PASSWORD']",
        _j("aws_access_key_id = AK", "IA", "IOSFODNN7EXAMPLE"),
        _j("GITHUB_TOKEN=gh", "p_", "x" * 36),
        "hf_loadPretrainedTokenizerFromDiskCache(path)",
    ],
)
def test_ordinary_words_placeholders_and_identifiers_are_kept(text: str) -> None:
    assert redact(text).text == text


# --- a random key that happens to spell a stand-in word --------------------------------------


@pytest.mark.parametrize(
    "token",
    [
        "gh" + "p_S0cX4JDTzyouRU8kAZ61Ur9xwFlnCyrPptnt",  # "you" + "R..." inside the body
        "gh" + "p_UR8CThE97gcYOUROKjIxkOHQeTeOJumDHHwq",
        "gh" + "p_T5namyoUrfrNHeMfoc5DrNW5nWF1mQ5tLR0s",
    ],
)
def test_a_random_key_holding_the_letters_of_your_is_withheld(token: str) -> None:
    r = redact(f"deploy with {token} to staging")
    assert r.text == "deploy with [REDACTED:github] to staging"


@pytest.mark.parametrize(
    "text", ["gh" + "p_yourPersonalAccessTokenGoesHere0000", "xo" + "xb-your-slack-bot-token-1234"]
)
def test_a_key_shape_whose_body_starts_with_your_is_a_stand_in(text: str) -> None:
    assert redact(text).text == text


def test_withheld_reads_back_what_each_marker_stands_for() -> None:
    key = "sk-" + "proj-" + "Zq8" * 16  # assembled at runtime
    text = f"use {key} for staging, and ghp_{'a1B2' * 9} for the repo"
    got = withheld(text)
    assert key in got and len(got) == 2 and all(v in text for v in got)
    assert REDACTION_MARKER.findall(redact(text).text)  # the markers it aligned on
    assert withheld("nothing secret here") == []


@pytest.mark.parametrize(
    "key",
    ["paſsword", "ſecret", "apı_key", "DB_PAſSWORD", "ſecret_key_base", "client_ſecret"],
)
def test_a_key_spelled_with_letters_that_read_as_ascii_is_withheld(key: str) -> None:
    # "ſ" and "ı" read as "s" and "i" to a case-blind pattern but stay as they are when
    # lowered: a stem search of the lowered text missed them, so the value was kept.
    value = "Xk9mQ2vL7pR4zT"
    for text in (f"{key}: {value}", f'{key} = "{value}"', f"export {key}={value}"):
        got = redact(text)
        assert value not in got.text, text
        assert got.withheld >= 1
    assert redact(f"the {key} field is described below").withheld == 0
