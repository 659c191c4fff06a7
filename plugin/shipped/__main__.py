"""`python -m plugin.shipped --update | --check` (see regenerate.py)."""
import sys

from .regenerate import main

sys.exit(main())
