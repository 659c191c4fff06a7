"""Progressive hints: `hints.md` of a kata holds sections separated by lines of `---`.

Each hint says what it helps with, on a line `Helps: ...` under its heading: test names
(`test_hvp*`, a pattern of the test function's name), piece names and words of a failure
(`hessian_vector_product`, `linear`), or `*` for a hint about the whole kata. `pytest --hint`
shows the hint that matches the kata's first failure in this run and that the learner has not
seen yet (a specific match before a `*` one), else the next unseen one in order; pytest's cache
remembers which hints a learner has seen. The kata's first failure carries the seen hint that
matches it best, once per run (a "Hint" section of its report), or none when every seen hint is
about another failure.
"""
import fnmatch
import re
from dataclasses import dataclass

from ..state import HINTS_CACHE_KEY

_HELPS = re.compile(r"^Helps:\s*(.*)$", re.M)


@dataclass(frozen=True)
class Hint:
    number: int  # its place in hints.md, from 1
    text: str  # as shown: the heading and the hint, without the Helps line
    helps: tuple  # the patterns of its Helps line

    def matches(self, test_name, message):
        """'specific' when a pattern names the failing test, a piece or a word of its message,
        'general' for a hint about the whole kata (`*`), else None."""
        function = test_name.split("::")[-1].split("[")[0]
        where = f"{test_name} {message}"
        for pattern in self.helps:
            if pattern == "*":
                continue
            if pattern.startswith("test_") and fnmatch.fnmatchcase(function, pattern):
                return "specific"
            if not pattern.startswith("test_") and pattern in where:
                return "specific"
        return "general" if "*" in self.helps else None


@dataclass(frozen=True)
class Revealed:
    number: int
    total: int
    text: str
    seen: int  # how many of the kata's hints the learner has seen now
    matched: bool  # chosen because it names the first failure


def load_hints(kata):
    """The kata's hints, in order (an empty list when it has none)."""
    if not kata.hints.exists():
        return []
    sections, current = [], []
    for line in kata.hints.read_text(encoding="utf-8").splitlines():
        if line.strip() == "---":
            sections.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    sections.append("\n".join(current).strip())
    hints = []
    for section in (s for s in sections if s):
        found = _HELPS.search(section)
        helps = tuple(p.strip().strip("`") for p in found.group(1).split(",") if p.strip()) if found else ("*",)
        text = re.sub(r"\n*^Helps:.*$\n?", "\n", section, flags=re.M).strip() if found else section
        hints.append(Hint(len(hints) + 1, text, helps))
    return hints


def best_match(hints, test_name, message):
    """The first hint that names this failure, else the first about the whole kata, else None."""
    ranked = [(h.matches(test_name, message), h) for h in hints]
    for wanted in ("specific", "general"):
        found = next((h for rank, h in ranked if rank == wanted), None)
        if found is not None:
            return found
    return None


class HintBook:
    """Which hints of each kata a learner has seen, kept in pytest's cache."""

    def __init__(self, cache):
        self.cache = cache
        stored = dict(cache.get(HINTS_CACHE_KEY, {})) if cache is not None else {}
        # Older caches kept a count: the first N hints, in order.
        self.seen = {slug: list(range(1, v + 1)) if isinstance(v, int) else list(v) for slug, v in stored.items()}

    def _seen(self, kata, hints):
        numbers = {h.number for h in hints}
        return [n for n in self.seen.get(kata.slug, []) if n in numbers]

    def count(self, kata):
        """How many of the kata's hints the learner has seen."""
        return len(self._seen(kata, load_hints(kata)))

    def current(self, kata, test_name="", message=""):
        """The seen hint written for this failure, else a seen one about the whole kata, or
        None: a hint about another failure (the last one seen, say) would send the learner the
        wrong way (the fifth walk: a merge_grads hint above an accumulate_grad error)."""
        hints = load_hints(kata)
        seen = self._seen(kata, hints)
        hint = best_match([h for h in hints if h.number in seen], test_name, message)
        return hint.text if hint else None

    def reveal_next(self, kata, test_name="", message=""):
        """The hint to show now (Revealed), remembered: the unseen hint that
        matches the first failure (test_name, message), else the next unseen in order; when
        every hint was seen, the one that fits best stays shown."""
        hints = load_hints(kata)
        if not hints:
            return None
        seen = self._seen(kata, hints)
        unseen = [h for h in hints if h.number not in seen]
        hint = best_match(unseen, test_name, message) if test_name else None
        if hint is None and unseen:
            hint = unseen[0]
        if hint is None:
            hint = best_match(hints, test_name, message) or hints[-1]
        else:
            seen.append(hint.number)
        self.seen[kata.slug] = seen
        if self.cache is not None:
            self.cache.set(HINTS_CACHE_KEY, self.seen)
        matched = bool(test_name) and hint.matches(test_name, message) == "specific"
        return Revealed(hint.number, len(hints), hint.text, len(seen), matched)
