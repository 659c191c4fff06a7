"""What the parts of the plugin share about a run: the keys under which they keep it.

Every folder of the plugin may import this module, and it imports nothing of the plugin, so
that sharing a key never makes one part import another.

- `KATA_KEY`: the kata a test belongs to, in the test item's stash (set at collection by
  grading/session.py; the guards read it to tell a kata test from any other test);
- pytest's cache keys, which outlive a run (`.pytest_cache/v/...`): the statuses remembered
  from the last grading of each kata, the hints a learner has seen, the speed verdicts
  measured for each version of a learner's file;
- the folder of pytest's cache where each kata's graph page is written (`.pytest_cache/d/...`).
"""
import pytest

KATA_KEY = pytest.StashKey()

STATUS_CACHE_KEY = "autograd_katas/status"
HINTS_CACHE_KEY = "autograd_katas/hints_seen"
SPEED_CACHE_PREFIX = "autograd_katas/speed/"
GRAPH_PAGES_DIR = "autograd_katas_graphs"  # one page per kata: SLUG.html
