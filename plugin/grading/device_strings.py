"""The device strings kata 08's contract names: its tests check each in torch's own words,
and its fuzz test (fuzz/focus.py) holds the engine to torch's words for these alone (any
other string torch refuses must only be refused). One list, read by both."""

# torch reads each of these as a device: the piece must give the same type, index and str
READ = ("cpu", "cuda", "cuda:0", "cuda:1")

# torch refuses each of these: the piece must raise RuntimeError with torch's words
REFUSED = ("gpu", "gpu:1", "cuda:x", "cuda:-1", "cuda:01", "cuda:", "cuda:\u00b2",
           "gpu:x", "cuda:1:2")  # wrong twice: torch reads the form first, then the type

WORDED = frozenset(READ + REFUSED)
