"""`python -m lab NAME ...` from the repository's root (lab/cli.py)."""

import sys

from .cli import main

sys.exit(main())
