"""``python -m theory <command>``; the commands live in :mod:`theory.cli` (``--help`` lists them)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
