"""A strategy's resolve hook on the disputed slots, held to the adjudicator's rules, and the
block labelled with who decided.

A user's rule decides a tie only inside the gates the model adjudicator is held to, and one
more: the ruling must be one of the tied values (an invented value leaves the tie standing);
it may not assert a value that redaction replaced (``[REDACTED:…]``) or one only untrusted
claims support (plugin-injected context, an unlabelled claim): a rule can choose among what
the sessions said, never promote what the trust lattice keeps out. A refused ruling leaves
the slot disputed and is reported (``MergeResult.refused``). Derivation and the trust check
run afterwards as for every strategy.

The renderer writes a settled tie as adjudicated (``tie broken by adjudication``); a tie a
strategy's hook settled is relabelled with the strategy's name, in the slot's line and in the
footer, and the block is re-fitted to its budget when the longer label costs tokens.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InvalidArgument
from ..session import Tokenizer, redact
from ..session.kernel import REDACTION_MARKER, neutralize
from ._beliefs import Resolution, Slot, Trust
from ._order import Span
from ._pack import _trust_of
from ._render import Block, render_slot
from ._strategy import Candidate, Strategy, candidates

__all__ = ["Ruling", "label_block", "rule"]


@dataclass(frozen=True)
class Ruling:
    """What a resolve hook did: the ``slots`` (a settled tie carries a ``resolution``), the
    keys it ``ruled`` and every ruling ``refused`` with why."""

    slots: tuple[Slot, ...]
    ruled: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()


def rule(
    slots: Sequence[Slot], strategy: Strategy, spans: Mapping[str, Span] | None = None
) -> Ruling:
    """Ask ``strategy.resolve`` about each disputed slot (see the module docs)."""
    hook = strategy.resolve
    if hook is None:
        return Ruling(tuple(slots))
    out: list[Slot] = []
    ruled: list[str] = []
    refused: list[tuple[str, str]] = []
    for slot in slots:
        if slot.decision.outcome != "disputed" or slot.resolution is not None:
            out.append(slot)
            continue
        options = candidates(slot, slot.decision.tied, spans)
        try:
            said = hook(options)
        except Exception as exc:
            raise InvalidArgument(
                f"strategy {strategy.name!r}: its resolve hook failed on {slot.key!r}: {exc}"
            ) from exc
        if said is None:
            out.append(slot)
            continue
        got = _ruling(said, options, strategy.name)
        if isinstance(got, str):
            refused.append((slot.key, got))
            out.append(slot)
            continue
        out.append(dataclasses.replace(slot, resolution=got))
        if got.asserts:  # an "unresolvable" ruling leaves the tie open, decided by no one
            ruled.append(slot.key)
    return Ruling(tuple(out), tuple(ruled), tuple(refused))


def _option(said: str, options: Sequence[Candidate]) -> Candidate | None:
    want = said.strip().casefold()
    for o in options:
        if want in (o.value.strip().casefold(), o.shown.strip().casefold()):
            return o
    return None


def _ruling(said: object, options: Sequence[Candidate], name: str) -> Resolution | str:
    """The resolution a hook's answer makes, or why it is refused (a string)."""
    why = f"decided by strategy {name}"
    if isinstance(said, Candidate):
        said = said.value
    if isinstance(said, str):
        said = Resolution("choose", value=said)
    if not isinstance(said, Resolution):
        raise InvalidArgument(
            f"strategy {name!r}: resolve returns a Candidate, a value, a Resolution or None, "
            f"not {type(said).__name__}"
        )
    if said.outcome == "unresolvable":
        return Resolution("unresolvable", rationale=_said_why(why, said.rationale))
    if said.outcome == "choose":
        o = _option(said.value or "", options)
        if o is None:
            return f"{said.value!r} is not one of the tied values; the tie stands"
        chosen: Sequence[Candidate] = (o,)
    else:
        chosen = options
        if said.outcome == "conditional" and not (said.guard or "").strip():
            return "a conditional ruling needs a guard; the tie stands"
    for o in chosen:
        if REDACTION_MARKER.search(o.value) or REDACTION_MARKER.search(o.shown):
            return f"{o.shown!r} was redacted (a credential); a rule cannot assert it"
        if o.trust <= Trust.UNTRUSTED:
            return f"{o.shown!r} has only untrusted support; a rule cannot assert it"
    return Resolution(
        said.outcome,
        value=chosen[0].value if said.outcome == "choose" else None,
        guard=redact(said.guard).text if said.outcome == "conditional" and said.guard else None,
        premises=tuple(redact(p).text for p in said.premises),
        rationale=_said_why(why, said.rationale),
    )


def _said_why(why: str, rationale: str) -> str:
    extra = redact(rationale).text.strip()
    return f"{why}: {extra}" if extra else why


# -- the block -------------------------------------------------------------------------------

_CHOSE = "tie broken by adjudication"
_HELD = " (adjudicated):"


def label_block(
    block: Block,
    ruled: Mapping[str, str],
    trusts: Mapping[str, int],
    tokenizer: Tokenizer,
    rebuild: Callable[[int], Block],
) -> Block:
    """``block`` with every slot in ``ruled`` (key -> strategy name) labelled by its
    strategy instead of "adjudicated", re-packed under a smaller budget while the longer
    labels overflow it (``rebuild(budget)`` packs again)."""
    budget = block.budget
    out = _relabel(block, ruled, trusts)
    tokens = tokenizer.count(out.text) if out.text else 0
    room = budget
    for _ in range(4):  # each round gives back the overflow: a few rounds at most
        if tokens <= budget:
            return dataclasses.replace(out, tokens=tokens, budget=budget)
        room -= tokens - budget
        if room <= 0:
            break
        out = _relabel(rebuild(room), ruled, trusts)
        tokens = tokenizer.count(out.text) if out.text else 0
    empty = rebuild(0)
    return dataclasses.replace(empty, budget=budget)


def _label(name: str) -> str:
    return neutralize(redact(" ".join(name.split())).text)


def _relabel(block: Block, ruled: Mapping[str, str], trusts: Mapping[str, int]) -> Block:
    if not block.text:
        return block
    text = block.text
    # a ruled slot a derivation retracted is still shown with its ruling: relabel it too
    mine = [s for s in block.slots if s.key in ruled and s.resolution and s.resolution.asserts]
    for s in mine:
        line = neutralize(redact(render_slot(s, _trust_of(s, trusts))).text)
        text = text.replace(line, _labelled(line, f"strategy {_label(ruled[s.key])}"), 1)
    adjudicated = sum(s.status == "adjudicated" for s in block.slots)
    counted = [s for s in mine if s.status == "adjudicated"]  # what the footer counts
    if counted:
        by: dict[str, int] = {}
        for s in counted:
            by[ruled[s.key]] = by.get(ruled[s.key], 0) + 1
        parts = [f"{adjudicated - len(counted)} adjudicated"] if adjudicated > len(counted) else []
        parts += [f"{n} decided by strategy {_label(name)}" for name, n in sorted(by.items())]
        head, sep, footer = text.rpartition("\n")
        if footer.startswith("_Notes:"):
            footer = footer.replace(f"{adjudicated} adjudicated", "; ".join(parts), 1)
            text = head + sep + footer
    return dataclasses.replace(block, text=text)


def _labelled(line: str, label: str) -> str:
    """A slot's lines with the renderer's adjudication label, on its first line (the guard of
    a conditional comes before it), replaced by ``label``."""
    first, nl, rest = line.partition("\n")
    if _CHOSE in first:
        before, _, after = first.rpartition(_CHOSE)
        first = f"{before}tie broken by {label}{after}"
    elif first.endswith(_HELD):
        first = first.removesuffix(_HELD) + f" ({label}):"
    return first + nl + rest
