"""`python -m plugin.watch` still works: the tool moved to plugin/workshop/watch.py and is
now `katas watch` (grade again on every save)."""
import sys

from .workshop.watch import main

if __name__ == "__main__":
    sys.exit(main())
