"""A line shows a key as the sessions wrote it (``ctxsdk.merge._written``); slots stay keyed
by the kernel's normal form."""

from __future__ import annotations

from ctxsdk.merge._beliefs import Trust, build_slots
from ctxsdk.merge._claims import Claim
from ctxsdk.merge._render import render_slot
from ctxsdk.merge._written import normal_key, written_key


def test_a_camel_case_key_is_shown_as_written() -> None:
    assert written_key("conversation id", ["conversationId is the same as sessionId."]) == (
        "conversationId"
    )


def test_the_most_common_spelling_wins_and_a_qualifier_is_kept() -> None:
    texts = ["set MAX_RETRIES to 5", "max_retries=5 in config.py", "MAX_RETRIES stays 5"]
    assert written_key("max retries", texts) == "MAX_RETRIES"
    assert written_key("max retries (api)", texts) == "MAX_RETRIES (api)"


def test_plain_words_and_absent_spellings_keep_the_key() -> None:
    assert written_key("storage", ["**Storage**: `~/.codemie/x.json`"]) == "storage"
    assert written_key("test command", ["tests: 16 passed (npm test)"]) == "test command"
    # words that only normalise alike across punctuation are no spelling of the key
    assert written_key("history path", ["history, path"]) == "history path"


def test_normal_key_splits_camel_case_and_separators() -> None:
    assert normal_key("historyPath") == "history path"
    assert normal_key("HTTPServer-port") == "http server port"


def test_the_block_line_shows_the_written_key_while_the_slot_keeps_the_normal_one() -> None:
    said = "conversationId is the same as sessionId."
    c = Claim("conversation id", "sessionid", 4, said, "a", 3, kind="fact", shown="sessionId")
    (slot,) = build_slots([c])
    assert slot.key == "conversation id"
    assert render_slot(slot, Trust.EXTERNAL).startswith("- `conversationId` = **sessionId**")
