"""Errors the store raises; each message is one line the user can act on."""
from __future__ import annotations


class StoreError(Exception):
    """The database cannot be opened, migrated or written."""


class DuplicateHost(StoreError):
    """A host with that name exists already (or the name is reserved for the built-in host)."""


class NotFound(StoreError):
    """The host or run asked for does not exist."""
