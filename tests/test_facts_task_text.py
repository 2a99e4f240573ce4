"""What a task says the code should do is no rule of how the agent works (``_facts/_expected``).

An issue wrapped by a harness (mini-SWE-agent's ``<pr_description>``, SWE-agent's "We're
currently solving the following issue …") or a user's own request (OpenHands, Claude Code)
names code, a page or an output and says how it should behave: a ``project`` fact when it
names the code, a ``decision`` of the design in hand else; never an instruction or a
preference. A rule of work beside it (a person's "you should", a plural kind's "functions
should have docstrings", the harness's own rules) stays a rule.

The sentences paraphrase the real sessions' wording: none is a verbatim copy.
"""

from __future__ import annotations

import pytest

from ctxsdk.session import read_facts
from ctxsdk.session._facts._text import text_facts
from ctxsdk.session.kernel import RUN_SCOPE, instruction_kind

MINI = (
    "<pr_description>\nConsider the following PR description:\n{}\n</pr_description>\n\n"
    "<instructions>\n# Task Instructions\nProvide exactly ONE bash command.\n</instructions>"
)
SWE = (
    "We're currently solving the following issue within our repository. Here's the issue "
    "text:\nISSUE:\n{}\n\nINSTRUCTIONS:\nNow, you're going to solve this issue on your own."
)


def _facts(text: str) -> dict[str, str]:
    return {f.text: f.kind for f in text_facts(text, role="user", seq=1, session="s")}


# (template, issue text, the sentence, its kind): mini-SWE-agent and SWE-agent issues
WRAPPED = [
    (
        MINI,
        "parse_headers() should return an empty mapping for an empty header block.",
        "parse_headers() should return an empty mapping for an empty header block.",
        "project",  # the title: what the named function should do
    ),
    (
        MINI,
        "Headers lost\nCalling parse_headers(raw, keys=[]) the function should return an "
        "empty dict, since no keys were asked for.",
        "Calling parse_headers(raw, keys=[]) the function should return an empty dict, "
        "since no keys were asked for.",
        "project",
    ),
    (
        MINI,
        "Digest auth sends nonce count\n'nonce-count' value should be sent without quotes",
        "'nonce-count' value should be sent without quotes",
        "project",
    ),
    (
        MINI,
        "Lists print without brackets\n[1] is printed as 1, but should keep the brackets.",
        "[1] is printed as 1, but should keep the brackets.",
        "project",  # the subject left out: the first clause's
    ),
    (
        MINI,
        "Legend visibility ignored\nthe legend stays visible which should not happen when "
        "show is set to False",
        "the legend stays visible which should not happen when show is set to False",
        "project",  # what the code does now, pointed back at
    ),
    (
        MINI,
        "Workers can be zero in containers\nThe computed worker count should never be 0.",
        "The computed worker count should never be 0.",
        "decision",
    ),
    (
        SWE,
        "Window Center attribute should be optional for the image handler\nThe handler "
        "fails without it.",
        "Window Center attribute should be optional for the image handler",
        "decision",
    ),
    (
        SWE,
        "Offsets dropped\nThis should be changed to return dict(offsets[0]), like the other "
        "modes do.",
        "This should be changed to return dict(offsets[0]), like the other modes do.",
        "project",
    ),
]


@pytest.mark.parametrize(("template", "issue", "sentence", "kind"), WRAPPED)
def test_an_issues_expected_behaviour_is_what_the_task_requires(
    template: str, issue: str, sentence: str, kind: str
) -> None:
    got = _facts(template.format(issue))
    assert got.get(sentence) == kind, got
    assert instruction_kind(sentence) is None  # no rule, no ask of its own


# a user's own words (OpenHands, Claude Code): what is built and how it should behave
PLAIN = [
    "This should be a single-page app with no server.",
    "The cart should persist in sessionStorage.",
    "the main idea is fine, however taskScheduler must not be provider specific.",
    "it should not raise when the input is empty",
    "the result should be sorted by date",
    "the page should show the total",
]


@pytest.mark.parametrize("sentence", PLAIN)
def test_a_users_requirement_of_the_code_is_a_decision(sentence: str) -> None:
    assert _facts(sentence) == {sentence: "decision"}


def test_a_requirement_naming_the_code_is_a_project_fact() -> None:
    said = "format_date() must keep the offset of an aware datetime."
    assert _facts(said) == {said: "project"}


# how the work is done: said of a person, of a kind of thing in general, or of the work
RULES = [
    ("you should always run the linter before committing", "preference"),
    ("we should always use tabs", "preference"),
    ("functions should have docstrings", "instruction"),
    ("tests must pass before you push", "instruction"),
    ("don't ask questions, the function should stay small", "instruction"),
    ("Your replies should be short.", "instruction"),
    ("the code should be formatted with black", "instruction"),
    ("the commit message must start with a verb", "instruction"),
    ("the branch name should start with feat/", "instruction"),
    ("This should be done in a separate PR.", "instruction"),
    ("It should be concise.", "instruction"),
]


@pytest.mark.parametrize(("sentence", "kind"), RULES)
def test_a_rule_of_work_stays_a_rule(sentence: str, kind: str) -> None:
    assert _facts(sentence) == {sentence: kind}


def test_a_person_in_an_issue_proposing_a_fix_stays_an_instruction() -> None:
    said = "A workaround would be to check probs.max() <= 1 in which case we should clip probs."
    got = _facts(MINI.format(f"Probabilities above one\n{said}"))
    assert got.get(said) == "instruction"


def test_the_harness_rules_around_the_issue_stay_run_rules() -> None:
    text = (
        "<pr_description>\nConsider the following PR description:\nparse_headers() should "
        "return an empty mapping for an empty header block.\n</pr_description>\n\n"
        "<instructions>\n## Important Boundaries\n"
        "- DO NOT MODIFY: Tests, configuration files (pyproject.toml, setup.cfg)\n"
        "- You must not ask the user any questions.\n</instructions>"
    )
    event = {
        "seq": 1,
        "type": "user/message",
        "data": {"role": "user", "content": [{"type": "text", "text": text}]},
    }
    facts = read_facts([event], session="s", harness=True)
    rules = [f.text for f in facts if f.kind == "instruction" and f.scope == RUN_SCOPE]
    assert any(r.startswith("DO NOT MODIFY: Tests") for r in rules), facts
    assert any("must not ask" in r for r in rules), facts
    said = [f for f in facts if f.source.role == "user"]
    assert [(f.kind, f.text) for f in said] == [
        ("project", "parse_headers() should return an empty mapping for an empty header block.")
    ]
