"""Files shipped with Benchbay: icon, stylesheet, report template, demo data."""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def resource_path(name: str) -> Path:
    """The path of a file in this package (installed packages are plain directories)."""
    return Path(str(files(__name__) / name))


def resource_text(name: str) -> str:
    """A text resource such as the stylesheet; "" when it is missing, so the app still starts."""
    try:
        return (files(__name__) / name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return ""
