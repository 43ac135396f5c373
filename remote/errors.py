"""Errors that reach the user. Each carries one line that says what happened and what to do."""
from __future__ import annotations


class RemoteError(Exception):
    """Base of remote/'s errors: str(error) is the one-line reason shown to the user."""


class ConnectError(RemoteError):
    """The host could not be reached or logged in to."""


class DnsError(ConnectError):
    pass


class ConnectionRefused(ConnectError):
    pass


class ConnectTimeout(ConnectError):
    pass


class AuthError(ConnectError):
    pass


class PasswordRequired(AuthError):
    """The host wants a password and none was given: the caller should ask for one."""


class HostKeyError(ConnectError):
    pass


class UnknownHostKey(HostKeyError):
    """The host's key is not known yet: show the fingerprint and let the user decide."""

    def __init__(self, host: str, key_type: str, fingerprint: str, key_blob: bytes, known_as: str):
        self.host = host
        self.key_type = key_type
        self.fingerprint = fingerprint
        self.key_blob = key_blob
        self.known_as = known_as
        super().__init__(
            f"{host}: unknown host key {key_type} {fingerprint}; "
            "check it and accept it (GUI, or `benchbay host trust`) before connecting"
        )


class HostKeyChanged(HostKeyError):
    """The host presented a key different from the one trusted: possible attack, refused."""

    def __init__(self, host: str, key_type: str, fingerprint: str, expected_fingerprint: str):
        self.host = host
        self.key_type = key_type
        self.fingerprint = fingerprint
        self.expected_fingerprint = expected_fingerprint
        super().__init__(
            f"{host}: HOST KEY CHANGED — refused. It now offers {key_type} {fingerprint}, "
            f"trusted was {expected_fingerprint}. If the server was really reinstalled, "
            "remove the old key (`benchbay host untrust`) and trust the new one"
        )


class RemoteCommandError(RemoteError):
    pass


class CommandTimeout(RemoteCommandError):
    pass


class NoPython(RemoteCommandError):
    pass


class AgentError(RemoteCommandError):
    """The agent failed or printed something that is not what it should."""
