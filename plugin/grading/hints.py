"""Progressive hints: `hints.md` of a kata holds sections separated by lines of `---`.

`pytest --hint` shows the next one (the kata chosen with --kata, else the first kata not
done), one more per call; pytest's cache remembers how many a learner has seen. A failing
test of a kata carries the hint the learner is at, as a "Hint" section of its report.
"""
from ..state import HINTS_CACHE_KEY


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
    return [s for s in sections if s]


class HintBook:
    """How many hints of each kata a learner has seen, kept in pytest's cache."""

    def __init__(self, cache):
        self.cache = cache
        self.seen = dict(cache.get(HINTS_CACHE_KEY, {})) if cache is not None else {}

    def count(self, kata):
        """How many of the kata's hints the learner has seen."""
        return min(self.seen.get(kata.slug, 0), len(load_hints(kata)))

    def current(self, kata):
        """The hint the learner is at (the last one shown), or None."""
        hints = load_hints(kata)
        count = min(self.seen.get(kata.slug, 0), len(hints))
        return hints[count - 1] if count else None

    def reveal_next(self, kata):
        """(number, total, text) of the next hint, remembered; the last one stays shown."""
        hints = load_hints(kata)
        if not hints:
            return None
        count = min(self.seen.get(kata.slug, 0) + 1, len(hints))
        self.seen[kata.slug] = count
        if self.cache is not None:
            self.cache.set(HINTS_CACHE_KEY, self.seen)
        return count, len(hints), hints[count - 1]
