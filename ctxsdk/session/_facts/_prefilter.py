"""A cue table's regex with a cheap test before it: the words any match must hold.

A cue table is one large alternation read at every position of a sentence ("don't",
"never", "must not", …); most sentences hold none of its words, and Python's engine has no
literal scan for such a pattern. ``prefiltered(pattern)`` reads the pattern's syntax tree
once for the literal strings of which every match contains at least one (a run of literal
characters, one per branch of an alternation, a repeat's body when it repeats at least
once) and answers ``search`` / ``match`` / ``fullmatch`` with ``None`` at once when an
ASCII sentence, lowercased, holds none of them; anything else goes to the pattern itself.
The answer is the pattern's own: a match holds one of those strings, in any case, so a
sentence without one has no match. A non-ASCII sentence is always searched (case folding
outside ASCII maps other letters onto ASCII ones); a literal that only a non-ASCII
character matches makes its branch unable to match an ASCII sentence.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Prefiltered", "branch_factors", "literal_scan", "prefiltered", "spaced_branches"]

_p: Any = importlib.import_module("re._parser")  # the stdlib's own parser (3.11+)
_MAX_FACTORS = 64  # more, and the test costs about what the search saves

_LITERAL = _p.LITERAL
_SUBPATTERN = _p.SUBPATTERN
_BRANCH = _p.BRANCH
_REPEATS = (_p.MAX_REPEAT, _p.MIN_REPEAT, _p.POSSESSIVE_REPEAT)
_ATOMIC = _p.ATOMIC_GROUP
_IN = _p.IN
_SPACE_CLASS = [(_p.CATEGORY, _p.CATEGORY_SPACE)]  # ``\s``
_SPACE = frozenset([" "])
_EXACT_MAX = 64  # the most strings an exact set (``_exact``) may hold


def _char(code: int) -> str | bool | None:
    """A literal's lowercase ASCII character; False when only a non-ASCII character matches
    it (in any case); None when unknown (a non-ASCII letter one of whose cases is ASCII)."""
    ch = chr(code)
    if ch.isascii():
        return ch.lower()
    if any(x.isascii() for x in ch.lower() + ch.upper() + ch.casefold()):
        return None
    return False


def _group_needs(
    op: Any, av: Any, needs: Callable[[Any], frozenset[str] | None]
) -> frozenset[str] | None:
    """What a group, alternation, repeat or atomic group needs, from ``needs`` of its
    parts (an alternation: any one of its branches' needs; None when one needs nothing);
    None for any other node."""
    if op is _SUBPATTERN:
        return needs(av[3])
    if op is _BRANCH:
        each = [needs(b) for b in av[1]]
        if all(e is not None for e in each):
            return frozenset().union(*(e for e in each if e is not None))
        return None
    if op in _REPEATS:
        low, _, body = av
        return needs(body) if low >= 1 else None
    if op is _ATOMIC:
        return needs(av)
    return None


def _needs(items: Any) -> frozenset[str] | None:
    """Strings one of which every match of the sequence ``items`` contains (lowercase); an
    empty set when it cannot match ASCII text; None when nothing is known."""
    best: frozenset[str] | None = None
    for need in _all_needs(items):
        if not need:
            return need  # this sequence cannot match ASCII text
        if best is None or _worth(need) > _worth(best):
            best = need
    return best


def _all_needs(items: Any) -> list[frozenset[str]]:
    """Every set of strings the sequence ``items`` is known to need, in order: a match of it
    contains one string of each (lowercase); an empty set means it cannot match ASCII."""
    found: list[frozenset[str]] = []
    run = ""
    for op, av in items:
        if op is _LITERAL:
            got = _char(av)
            if isinstance(got, str):
                run += got
                continue
            if run:
                found.append(frozenset([run]))
            run = ""
            if got is False:
                found.append(frozenset())
            continue
        if run:
            found.append(frozenset([run]))
        run = ""
        need = _group_needs(op, av, _needs)
        if need is not None:
            found.append(need)
    if run:
        found.append(frozenset([run]))
    return found


def _worth(need: frozenset[str]) -> float:
    """How selective a set is: its shortest string's length, then fewer strings."""
    return min(len(x) for x in need) - 0.01 * len(need)


def factors(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The strings one of which every match of ``pattern`` holds (lowercase; an ASCII
    text's matches), None when no such set is known."""
    try:
        need = _needs(list(_p.parse(pattern.pattern, pattern.flags)))
    except Exception:  # a future parser's shape: no test, the pattern alone
        return None
    if need is None:
        return None
    return _shortest(need)


def _shortest(need: frozenset[str]) -> frozenset[str]:
    """``need`` without a string that holds another of it (holding it holds that one)."""
    return frozenset(x for x in need if not any(y != x and y in x for y in need))


def _by_branch(
    branches: Any, all_needs: Callable[[Any], list[frozenset[str]]]
) -> tuple[tuple[frozenset[str], ...], ...] | None:
    """For each branch, the sets of strings a match of it holds one of each (``all_needs``
    of it), most selective first; a branch that cannot match ASCII text is left out, and
    None when one needs nothing."""
    out: list[tuple[frozenset[str], ...]] = []
    for branch in branches:
        sets = all_needs(branch)
        if any(not need for need in sets):
            continue  # this branch cannot match ASCII text
        if not sets:
            return None
        out.append(tuple(sorted((_shortest(n) for n in sets), key=_worth, reverse=True)))
    return tuple(out)


def branch_factors(pattern: re.Pattern[str]) -> tuple[tuple[frozenset[str], ...], ...] | None:
    """For a pattern that is an alternation, each branch's sets of strings: a match of the
    branch holds one string of every set of it (lowercase; an ASCII text's matches), so a
    text that holds one of each set for no branch has no match. A branch that cannot match
    ASCII text is left out; None when a branch is known to need nothing."""
    try:
        top = list(_p.parse(pattern.pattern, pattern.flags))
    except Exception:  # a future parser's shape: no test
        return None
    if len(top) != 1 or top[0][0] is not _BRANCH:
        return None
    return _by_branch(top[0][1][1], _all_needs)


# -- texts whose only whitespace is " " ---------------------------------------------------
# A text whose whitespace is all plain spaces (a sentence after ``" ".join(s.split())`` and
# deletions) matches ``\s`` only with " ": a pattern's ``\s+is\s+`` then needs " is ", a far
# rarer string than "is" (which "this" holds). ``spaced_factors`` reads patterns so, and
# joins a group of literal alternatives ("(?:is|are)") to the literals around it.


def _is_space(op: Any, av: Any) -> bool:
    return (op is _IN and list(av) == _SPACE_CLASS) or (op is _LITERAL and av == 32)


def _exact(items: Any) -> frozenset[str] | None:
    """Every string (lowercase) the sequence ``items`` matches in a spaced ASCII text, when
    they are few and known (literals, spaces, groups and alternations of them); else None."""
    out: frozenset[str] = frozenset([""])
    for op, av in items:
        got: frozenset[str] | None
        if op is _LITERAL or _is_space(op, av):
            ch = " " if _is_space(op, av) else _char(av)
            if not isinstance(ch, str):
                return None  # unknown, or only non-ASCII text matches it: no exact set
            got = frozenset([ch])
        elif op is _SUBPATTERN:
            got = _exact(av[3])
        elif op is _BRANCH:
            each = [_exact(b) for b in av[1]]
            got = None if any(e is None for e in each) else frozenset().union(*each)  # type: ignore[arg-type]
        else:
            return None
        if got is None or len(out) * len(got) > _EXACT_MAX:
            return None
        out = frozenset(x + y for x in out for y in got)
    return out


def _spaced_needs(items: Any) -> frozenset[str] | None:
    """As ``_needs``, for a spaced text (see above)."""
    best: frozenset[str] | None = None
    for need in _all_spaced_needs(items):
        if not need:
            return need
        if best is None or _worth(need) > _worth(best):
            best = need
    return best


def _all_spaced_needs(items: Any) -> list[frozenset[str]]:
    r"""As ``_all_needs``, for a spaced text: ``\s`` is " ", ``\s+`` ends the strings before it
    with " " and starts the next ones with " ", and an exact group (``_exact``) joins the
    strings around it. ``cur`` is every string the run since the last break may be."""
    found: list[frozenset[str]] = []
    cur: frozenset[str] = frozenset([""])

    def flush() -> None:
        nonlocal cur
        if "" not in cur and cur != _SPACE:  # a space alone tells nothing
            found.append(cur)
        cur = frozenset([""])

    for op, av in items:
        if op in _REPEATS and av[0] >= 1 and len(av[2]) == 1 and _is_space(*av[2][0]):
            cur = frozenset(x + " " for x in cur)  # one space at least, then any more
            flush()
            cur = frozenset([" "])
            continue
        exact = _exact([(op, av)])
        if exact is not None and len(cur) * len(exact) <= _EXACT_MAX:
            cur = frozenset(x + y for x in cur for y in exact)
            continue
        flush()
        if op is _LITERAL and _char(av) is False:
            found.append(frozenset())  # only a non-ASCII character matches it
            continue
        need = _group_needs(op, av, _spaced_needs)
        if need is not None:
            found.append(need)
    flush()
    return found


def spaced_branches(pattern: re.Pattern[str]) -> tuple[tuple[frozenset[str], ...], ...] | None:
    """As ``branch_factors``, for a text that is ASCII and whose only whitespace is " " (no
    tab, newline or other space): for each branch of the pattern's top alternation (the
    whole pattern when it is none), the sets of strings a match of it holds one of each
    (lowercase), most selective first. A branch that cannot match such a text is left out;
    None when a branch is known to need nothing."""
    return _spaced_branches(pattern.pattern, pattern.flags)


@functools.lru_cache(maxsize=256)  # a table is read for two scans (``_TEST``, ``TableGate``)
def _spaced_branches(source: str, flags: int) -> tuple[tuple[frozenset[str], ...], ...] | None:
    try:
        top = list(_p.parse(source, flags))
    except Exception:  # a future parser's shape: no test
        return None
    branches = top[0][1][1] if len(top) == 1 and top[0][0] is _BRANCH else [top]
    return _by_branch(branches, _all_spaced_needs)


def literal_scan(strings: set[str] | frozenset[str]) -> Any:
    """``search`` of a regex that finds any of ``strings`` in a text (non-empty literals),
    shaped as their trie: the engine follows one path per position instead of trying each
    string in turn. A string that holds another of them is left out: found with it."""
    root: dict[str, Any] = {}
    for word in sorted(_shortest(frozenset(strings))):
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node.clear()  # an end: the shortest string suffices (none other holds it)
        node[""] = {}

    def rx(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        alts = [re.escape(ch) + rx(sub) for ch, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(rx(root)).search


# the last text tested and its lowered form (None: not ASCII)
_last: tuple[str | None, str | None] = (None, None)


class Prefiltered:
    """``pattern`` with the test of ``factors`` before ``search``, ``match`` and
    ``fullmatch`` (every other attribute is the pattern's own)."""

    __slots__ = ("_any", "_branches", "_factors", "_pattern")

    def __init__(
        self,
        pattern: re.Pattern[str],
        needs: frozenset[str],
        branches: tuple[tuple[frozenset[str], ...], ...] | None = None,
    ) -> None:
        self._pattern = pattern
        self._factors = tuple(sorted(needs, key=len))
        # one scan for all the factors (a literal alternation: cheaper than a test of each);
        # no factor: no ASCII text can match
        self._any = (
            re.compile("|".join(map(re.escape, self._factors))).search if self._factors else None
        )
        # each branch's sets, tested after the factors when given (``branch_factors``)
        self._branches = (
            None
            if branches is None
            else tuple(tuple(tuple(sorted(n, key=len)) for n in sets) for sets in branches)
        )

    def _absent(self, text: str) -> bool:
        global _last
        last = _last  # one sentence is put to several tables in turn: lowered once
        if last[0] is text:
            low = last[1]
        else:
            low = text.lower() if text.isascii() else None
            _last = (text, low)
        if low is None:
            return False
        if self._any is None or self._any(low) is None:
            return True
        if self._branches is None:
            return False
        for sets in self._branches:
            for strings in sets:
                if not any(map(low.__contains__, strings)):
                    break  # this branch cannot match
            else:
                return False  # it may
        return True

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        return None if self._absent(text) else self._pattern.search(text, *args)

    def match(self, text: str, *args: int) -> re.Match[str] | None:
        return None if self._absent(text) else self._pattern.match(text, *args)

    def fullmatch(self, text: str, *args: int) -> re.Match[str] | None:
        return None if self._absent(text) else self._pattern.fullmatch(text, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


def prefiltered(pattern: re.Pattern[str], *, by_branch: bool = False) -> re.Pattern[str]:
    """``pattern`` behind the test of its ``factors`` (see the module docs), or ``pattern``
    itself when none is known or the set is too large to be cheaper than the search. With
    ``by_branch``, a text that holds a factor is tested again by ``branch_factors`` (for an
    alternation of which a few short words, "is", "no", pass most sentences)."""
    needs = factors(pattern)
    if needs is None or len(needs) > _MAX_FACTORS:
        return pattern
    branches = branch_factors(pattern) if by_branch else None
    return Prefiltered(pattern, needs, branches)  # type: ignore[return-value]


# -- one scan for many tables ---------------------------------------------------------------
# A sentence put to many tables in turn (the settings' 30 shapes) is scanned once for the
# strings of all of them (``spaced_branches``: every set of every branch); a table may
# match it only when, for one of its branches, every set has a string in it. Only a spaced
# ASCII text is so read; for any other, every table may match.


def _trie_rx(words: frozenset[str]) -> str:
    """A regex of ``words`` shaped as their trie, the longer word first at each node: at
    a position it matches the longest of them that starts there."""
    root: dict[str, Any] = {}
    for word in sorted(words):
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def rx(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + rx(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        if len(alts) == 1 and "" not in node:
            return alts[0]
        return "(?:" + "|".join(alts) + ("|" if "" in node else "") + ")"

    return rx(root)


class TableGate:
    """The scan shared by ``tables`` (see above): ``read(text)`` is the mask of the tables
    (bit ``bit(table)``) that may match ``text``."""

    def __init__(self, tables: tuple[re.Pattern[str], ...]) -> None:
        self.tables = tables
        self.all = (1 << len(tables)) - 1
        sets: dict[frozenset[str], int] = {}  # each distinct set: its bit in a scan's answer
        needs: list[tuple[int, tuple[int, ...]]] = []  # (table bit, its branches' set bits)
        for i, table in enumerate(tables):
            got = spaced_branches(getattr(table, "_pattern", table))
            if got is None:
                needs.append((1 << i, (0,)))  # nothing known: it may match anything
                continue
            branches = tuple(sum(1 << sets.setdefault(s, len(sets)) for s in set(b)) for b in got)
            needs.append((1 << i, branches))  # no branch (none can match): never
        self._needs = tuple(needs)
        own: dict[str, int] = {}  # a word: the bits of the sets holding it
        for s, b in sets.items():
            for w in s:
                own[w] = own.get(w, 0) | 1 << b
        words = frozenset(own)
        # a word the scan finds: the bits of every set holding it or a word it starts with
        # (the scan gives the longest word at each position; any shorter one there is its
        # prefix)
        self._bits: dict[str, int] = {}
        for w in words:
            found = 0
            for k in range(1, len(w) + 1):
                found |= own.get(w[:k], 0)
            self._bits[w] = found
        self._scan = re.compile(f"(?=({_trie_rx(words)}))").findall if words else None
        self._last: tuple[str, int] = ("", self.all)

    def bit(self, table: re.Pattern[str]) -> int:
        """The bit of ``table`` (one of ``tables``) in ``read``'s mask."""
        return 1 << next(i for i, t in enumerate(self.tables) if t is table)

    def read(self, text: str) -> int:
        """The mask of the tables that may match ``text`` (all of them unless ``text`` is
        ASCII and its only whitespace is " "); the text last read is answered again."""
        last = self._last
        if last[0] is text:
            return last[1]
        may = self.all
        if self._scan is not None and text.isascii() and _OTHER_SPACE.search(text) is None:
            found = 0
            bits = self._bits
            for word in self._scan(text.lower()):
                found |= bits[word]
            may = 0
            for table, branches in self._needs:
                for need in branches:
                    if found & need == need:
                        may |= table
                        break
        self._last = (text, may)
        return may


_OTHER_SPACE = re.compile(r"[^\S ]")  # whitespace other than " "
