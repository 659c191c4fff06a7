"""`python -m plugin.reset` still works: the tool moved to plugin/workshop/reset.py and is
now `katas reset` (restore a kata's stub, keeping your file)."""
import sys

from .workshop.reset import main

if __name__ == "__main__":
    sys.exit(main())
