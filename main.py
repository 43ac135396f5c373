"""Benchbay: `python main.py` opens the window; `python main.py <command>` is the CLI (`benchbay`)."""
import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
