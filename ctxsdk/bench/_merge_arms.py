"""The Merge engine's MergeBench arms, held to the same budget as the seed's arms.

- ``ctxsdk``: the whole pipeline with no model (``cx.Merge(sessions)``), the deterministic
  claim extractor reading each branch's session; the block costed with the harness estimate
  (``ceil(chars/4)``), the unit every arm's budget is counted in.
- ``ctxsdk-oracle``: the seed's oracle arm. The alignment call is answered by a stand-in that
  returns the ground-truth slots (each fact with the verbatim sentence that states it as the
  quote), so the alignment's validation, the merge, packing and rendering are ours and only
  the reading is perfect. Adjudication gets no answer, so a true tie stays disputed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..merge import Merge
from ._mergebench import Arm, Scenario, as_sessions

__all__ = ["MERGE_ARMS", "arm_merge", "arm_oracle"]


def _session_id(scenario: Scenario, branch: str) -> str:
    return f"mergebench-{scenario.seed}-{branch}"


def arm_merge(score: str = "egalitarian") -> Arm:
    def arm(scenario: Scenario, budget: int) -> str:
        m = Merge(as_sessions(scenario), tokenizer="estimate", budget=budget, score=score)
        return m.run().text

    return arm


@dataclass(frozen=True)
class _Reply:
    text: str
    truncated: bool = False


class _GroundTruth:
    """Answers the alignment prompt with the scenario's facts; any other call gets ``{}``."""

    def __init__(self, scenario: Scenario) -> None:
        slots: dict[str, list[dict[str, Any]]] = {}
        for f in scenario.facts:
            branch = scenario.branch(f.branch)
            quote = next(m.text for m in branch.messages if f.value in m.text)
            slots.setdefault(f.key, []).append(
                {
                    "source": _session_id(scenario, f.branch),
                    "value": f.value,
                    "evidence": f.evidence,
                    "quote": quote,
                }
            )
        self.reply = json.dumps(
            {
                "slots": [
                    {"key": k, "type": "fact", "opinions": ops} for k, ops in sorted(slots.items())
                ]
            }
        )
        self.calls = 0

    def chat(self, messages: Any, **options: Any) -> _Reply:
        self.calls += 1
        return _Reply(self.reply if self.calls == 1 else "{}")


def arm_oracle(scenario: Scenario, budget: int) -> str:
    llm = _GroundTruth(scenario)
    m = Merge(as_sessions(scenario), llm=llm, tokenizer="estimate", budget=budget)
    return m.run().text


MERGE_ARMS: dict[str, Arm] = {"ctxsdk": arm_merge(), "ctxsdk-oracle": arm_oracle}
