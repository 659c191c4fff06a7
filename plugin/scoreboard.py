"""`python -m plugin.scoreboard` still works: the tool moved to plugin/workshop/scoreboard.py and is
now `katas scoreboard` (merge reports into a class table)."""
import sys

from .workshop.scoreboard import main

if __name__ == "__main__":
    sys.exit(main())
