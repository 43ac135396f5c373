"""Passwords live in memory for a session, and in the OS keyring only when the user opts in."""
from __future__ import annotations

import contextlib
import logging

log = logging.getLogger(__name__)
SERVICE = "benchbay"


def keyring_available() -> bool:
    """True when a real OS keyring backend is there (not the fail or plaintext ones)."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return False
    try:
        backend = keyring.get_keyring()
    except Exception:  # a broken backend must not stop the app
        return False
    if isinstance(backend, fail.Keyring):
        return False
    # Backends that write plain text files are refused: a password is never stored in clear.
    return "plaintext" not in type(backend).__module__.lower() and getattr(backend, "priority", 1) > 0


def load_password(host_name: str) -> str | None:
    if not keyring_available():
        return None
    import keyring

    try:
        return keyring.get_password(SERVICE, host_name)
    except Exception as exc:
        log.warning("keyring lookup for %s failed: %s", host_name, exc)
        return None


def save_password(host_name: str, password: str) -> bool:
    """Store in the OS keyring; False when there is none (the password is then kept nowhere)."""
    if not keyring_available():
        return False
    import keyring

    try:
        keyring.set_password(SERVICE, host_name, password)
    except Exception as exc:
        log.warning("keyring store for %s failed: %s", host_name, exc)
        return False
    return True


def forget_password(host_name: str) -> None:
    if not keyring_available():
        return
    import keyring

    with contextlib.suppress(Exception):  # nothing stored is fine
        keyring.delete_password(SERVICE, host_name)
