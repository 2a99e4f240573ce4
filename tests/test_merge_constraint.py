"""What of an opening request is a constraint, kept, and what is the task
(``ctxsdk.merge._constraint``), on opening requests of real agent logs."""

from __future__ import annotations

import pytest

from ctxsdk.merge._constraint import is_constraint


@pytest.mark.parametrize(
    "text",
    [
        "this should be a client-only app with no backend",  # OpenHands
        "The list should persist in localStorage.",
        "Don't commit changes until the final step.",
        "Only use the standard library.",
    ],
)
def test_requirements_and_prohibitions_are_constraints(text: str) -> None:
    assert is_constraint("instruction", text)


@pytest.mark.parametrize(
    "text",
    [
        "there is a need to make sure that sync logic will work as expected",  # Claude Code
        "check if there's a conn_case.ex or live_view test helper anywhere in the project",
        "model_to_dict() should return an empty dict for an empty list of fields",  # an issue
        "(1,) is rendered as (1), but should keep the trailing comma",
        "the subplot remains visible which should not happen if the value is set to false",
        "'qop-options' directive should be quoted with double quotes",
        'the ctf challenge is a cryptography problem named "katy", worth 10 points',
    ],
)
def test_the_work_asked_and_an_issues_expected_behaviour_are_the_task(text: str) -> None:
    assert not is_constraint("instruction", text)


def test_a_preference_or_decision_of_how_is_a_constraint_and_a_project_fact_is_not() -> None:
    said = "instead of using /dev/null in the tests, use the prompt_toolkit input mocking"
    assert is_constraint("decision", said)
    assert is_constraint("preference", "performance is crucial")
    assert not is_constraint("project", "gemini has different storage for user prompts")
