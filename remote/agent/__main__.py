"""`python -m remote.agent ...` (development); the zipapp has its own top-level __main__.py."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
