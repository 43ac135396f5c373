"""The errors app/ raises, and which errors of any layer are the user's to fix (one line, no traceback)."""
from __future__ import annotations

from remote.errors import RemoteError
from storage.errors import StoreError


class AppError(Exception):
    """A request the workbench refuses: str(error) is the one line the user reads."""


# What the CLI prints as one line and the window shows in a message: never a traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (AppError, RemoteError, StoreError)


def is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, USER_ERRORS)
