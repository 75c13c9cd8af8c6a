"""``python -m failure_kinds``: the same command as the ``failure-kinds`` console script."""

import sys

from failure_kinds.cli import main

if __name__ == "__main__":
    sys.exit(main())
