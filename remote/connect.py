"""Open a Transport to a host: DNS, TCP, host key check, authentication, jump hosts.

Every failure becomes one of the remote.errors classes with a one-line reason; the whole
connection set-up (DNS, TCP, SSH banner and key exchange) is bounded by `timeout`.
"""
from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass

import paramiko

from remote.command_timeouts import scaled_connect_timeout
from remote.errors import (
    AuthError,
    ConnectError,
    ConnectionRefused,
    ConnectTimeout,
    HostKeyError,
    PasswordRequired,
    RemoteError,
)
from remote.hostkeys import KnownHosts, VerifyHostKeyPolicy, fetch_host_key, host_key_id, prefer_key_types
from remote.hostspec import AUTH_AGENT, AUTH_AUTO, AUTH_KEY, AUTH_PASSWORD, HostSpec
from remote.ssh_transport import SSHTransport
from remote.sshconfig import ResolvedHost, SSHConfigFile, parse_jump
from remote.tcp import Deadline, describe_handshake_error, hostport, open_tcp
from remote.transport import Transport

# paramiko logs handshake failures with tracebacks at ERROR; without a handler Python would
# print them on stderr. Applications that configure logging still receive them.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

_MAX_JUMP_DEPTH = 8
COMPRESS = True   # zlib on the SSH stream; benchmarks/telemetry_link_bytes.py weighs it


@dataclass
class _Hop:
    spec: HostSpec
    resolved: ResolvedHost
    label: str            # how messages name this host
    jump_for: str = ""    # the host this one is a jump host for ("" for the target)


def _jump_chain(
    hop: _Hop, config: SSHConfigFile, resolve_jump: Callable[[str], HostSpec | None] | None, depth: int = 0,
) -> list[_Hop]:
    """The hops to go through before `hop`, outermost first (ProxyJump a,b: a, then b)."""
    if not hop.spec.jump and hop.resolved.proxy_command:
        # ssh would go through the command; connecting straight to HostName could reach another machine.
        raise ConnectError(f"{hop.label}: the ssh config sets a ProxyCommand, which Benchbay cannot run "
                           "(use ProxyJump, or a jump host in Benchbay)")
    text = hop.spec.jump or hop.resolved.proxy_jump or ""
    elements = [e.strip() for e in text.split(",") if e.strip() and e.strip().lower() != "none"]
    if not elements:
        return []
    if depth >= _MAX_JUMP_DEPTH:
        raise ConnectError(f"{hop.label}: jump hosts form a loop or a chain longer than {_MAX_JUMP_DEPTH}")
    chain: list[_Hop] = []
    for index, element in enumerate(elements):
        spec = resolve_jump(element) if resolve_jump is not None else None
        spec = spec or parse_jump(element)
        if spec.is_local:
            raise ConnectError(f"{hop.label}: the local host cannot be a jump host")
        jump = _Hop(spec, config.resolve(spec), spec.name, jump_for=hop.label)
        if index == 0:  # as with ssh -J, only the first jump host's own ProxyJump applies
            chain.extend(_jump_chain(jump, config, resolve_jump, depth + 1))
        chain.append(jump)
    return chain


def connect(
    spec: HostSpec,
    *,
    known_hosts: KnownHosts,
    ssh_config: SSHConfigFile | None = None,
    timeout: float = 10,
    password: str | None = None,
    resolve_jump: Callable[[str], HostSpec | None] | None = None,
) -> Transport:
    """A logged-in Transport to `spec`, or a remote.errors exception saying why not.

    `ssh_config=None` means no ssh config at all (pass SSHConfigFile() for ~/.ssh/config).
    `password` is used for the target only; jump hosts need keys or ssh-agent.
    While this process drives many runs, `timeout` is stretched (remote.command_timeouts): the
    handshake then waits for our own CPU, not for the host.
    """
    timeout = scaled_connect_timeout(timeout)
    if spec.is_local:
        from remote.local_transport import LocalTransport  # not needed for SSH hosts

        return LocalTransport()
    target, jumps, sock, deadline = _through_jumps(spec, known_hosts, ssh_config, timeout, resolve_jump)
    try:
        client = _login(target, sock, known_hosts, deadline, password)
    except BaseException:
        _close_all(jumps)
        raise
    return SSHTransport(client, spec.name, jump_clients=jumps)


def scan_host_key(
    spec: HostSpec,
    *,
    known_hosts: KnownHosts,
    ssh_config: SSHConfigFile | None = None,
    timeout: float = 10,
    resolve_jump: Callable[[str], HostSpec | None] | None = None,
) -> tuple[str, paramiko.PKey]:
    """(known_hosts id, key) the host offers, without logging in to it: for the fingerprint dialog.

    Resolves the ssh config and goes through jump hosts like connect() (which must be trusted
    and accept a key). The key type asked for first is one already trusted, as connect() does.
    """
    target, jumps, sock, deadline = _through_jumps(spec, known_hosts, ssh_config, timeout, resolve_jump)
    try:
        address, port = target.resolved.address, target.resolved.port
        host_id = host_key_id(address, port)
        preferred = known_hosts.preferred_key_types(host_id)
        return host_id, fetch_host_key(address, port, deadline.left(), sock=sock, preferred_types=preferred)
    finally:
        _close_all(jumps)


def _through_jumps(
    spec: HostSpec,
    known_hosts: KnownHosts,
    ssh_config: SSHConfigFile | None,
    timeout: float,
    resolve_jump: Callable[[str], HostSpec | None] | None,
) -> tuple[_Hop, list[paramiko.SSHClient], paramiko.Channel | None, Deadline]:
    """Log in to the jump hosts of `spec`; returns its hop, their clients and a channel to it."""
    config = ssh_config if ssh_config is not None else SSHConfigFile(os.devnull)
    target = _Hop(spec, config.resolve(spec), spec.name)
    hops = _jump_chain(target, config, resolve_jump) + [target]
    deadline = Deadline(timeout)
    clients: list[paramiko.SSHClient] = []
    sock: paramiko.Channel | None = None
    try:
        for index, hop in enumerate(hops[:-1]):
            clients.append(_login(hop, sock, known_hosts, deadline, None))
            sock = _forward(clients[-1], hop, hops[index + 1], deadline)
    except BaseException:
        _close_all(clients)
        raise
    return target, clients, sock, deadline


def _close_all(clients: list[paramiko.SSHClient]) -> None:
    for client in reversed(clients):
        client.close()


def _jump_error(hop: _Hop, error: RemoteError) -> RemoteError:
    """Say that a failure happened on a jump host (host key errors already name the host)."""
    if not hop.jump_for or isinstance(error, HostKeyError):
        return error
    kind = AuthError if isinstance(error, PasswordRequired) else type(error)
    return kind(f"jump host {hop.label} (for {hop.jump_for}): {error}")


def _forward(
    via: paramiko.SSHClient, via_hop: _Hop, hop: _Hop, deadline: Deadline,
) -> paramiko.Channel:
    """A direct-tcpip channel from the previous hop to this one (the target's name resolves there)."""
    address, port = hop.resolved.address, hop.resolved.port
    where = hostport(address, port)
    transport = via.get_transport()
    if transport is None:
        raise ConnectError(f"jump host {via_hop.label}: the connection closed")
    try:
        return transport.open_channel("direct-tcpip", (address, port), ("127.0.0.1", 0), timeout=deadline.left())
    except paramiko.ChannelException as exc:
        reason = (exc.text or "").strip() or f"code {exc.code}"
        if "refused" in reason.lower():
            raise ConnectionRefused(
                f"{where} refused the connection (seen from jump host {via_hop.label}) — is sshd running there?"
            ) from None
        raise ConnectError(f"jump host {via_hop.label} could not reach {where}: {reason}") from None
    except (paramiko.SSHException, OSError, EOFError) as exc:
        if "Timeout" in str(exc):
            raise ConnectTimeout(
                f"jump host {via_hop.label} got no answer from {where} within {deadline.timeout:g} s"
            ) from None
        raise ConnectError(f"jump host {via_hop.label} could not reach {where}: {exc or 'connection lost'}") from None


class _NeedPassword:
    """Stands in for paramiko's auth step: the host key is checked first, then we ask for a password."""

    def __init__(self, message: str):
        self.message = message

    def authenticate(self, transport: paramiko.Transport) -> None:
        raise PasswordRequired(self.message)


def _load_key(path: str, password: str | None) -> paramiko.PKey:
    shown = os.path.expanduser(path)
    try:
        with open(shown, "rb"):
            pass
    except OSError as exc:
        raise AuthError(f"cannot read key file {shown}: {exc.strerror or exc}") from None
    try:
        # paramiko 5: from_path wants the passphrase as bytes and reports an encrypted key as TypeError.
        return paramiko.PKey.from_path(shown, password=password.encode() if password is not None else None)
    except Exception as exc:  # whatever cryptography raised: the older loaders below say it better
        first = exc
    encrypted = False
    for key_class in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return key_class.from_private_key_file(shown, password=password)
        except paramiko.PasswordRequiredException:
            encrypted = True
        except Exception:  # wrong class for this file: try the next one
            continue
    if encrypted:
        raise AuthError(
            f"key file {shown} is encrypted: add it to ssh-agent (ssh-add {shown}) and use agent authentication"
        )
    why = "wrong passphrase, or " if password is not None else ""
    raise AuthError(f"cannot use key file {shown}: {why}not a private key Benchbay can read ({first})")


def key_file_problem(path: str) -> str:
    """Why every connection would refuse the key file at path; "" when it is a private key Benchbay
    reads (an encrypted one too: its passphrase is asked for, or ssh-agent holds it)."""
    try:
        _load_key(path, None)
    except AuthError as exc:
        return "" if " is encrypted" in str(exc) else str(exc)
    return ""


def _auth_options(hop: _Hop, password: str | None) -> tuple[dict, str]:
    """paramiko connect() arguments for the host's auth method, and how messages name that method."""
    spec, resolved = hop.spec, hop.resolved
    who = f"{resolved.user}@{hop.label}"
    if spec.auth == AUTH_KEY:
        path = spec.key_path or (resolved.key_files[0] if resolved.key_files else "")
        if not path:
            raise AuthError(f"{who}: key authentication is chosen but no key file is set")
        key = _load_key(path, password)
        return dict(pkey=key, allow_agent=False, look_for_keys=False), f"key {os.path.expanduser(path)}"
    if spec.auth == AUTH_AGENT:
        method = "ssh-agent" if os.environ.get("SSH_AUTH_SOCK") else "ssh-agent, but SSH_AUTH_SOCK is not set"
        return dict(allow_agent=True, look_for_keys=False), method
    if spec.auth == AUTH_PASSWORD:
        if password is None:
            return dict(auth_strategy=_NeedPassword(f"{who}: a password is needed")), "password"
        return dict(password=password, allow_agent=False, look_for_keys=False), "password"
    if spec.auth == AUTH_AUTO:
        files = [f for f in resolved.key_files if os.path.isfile(f)]  # ssh skips missing ones too
        method = "ssh-agent and key files" + (", password" if password is not None else "")
        return dict(key_filename=files, allow_agent=True, look_for_keys=True, password=password), method
    raise AuthError(f"{who}: unknown authentication method {spec.auth!r}")


def _password_allowed(transport: paramiko.Transport | None, user: str) -> bool:
    """Whether the server would take a password (asked after the keys failed)."""
    if transport is None or not transport.is_active():
        return False
    try:
        transport.auth_none(user)
    except paramiko.BadAuthenticationType as exc:
        return "password" in exc.allowed_types
    except (paramiko.SSHException, OSError, EOFError):
        return False
    return False


def _login(
    hop: _Hop,
    sock: socket.socket | paramiko.Channel | None,
    known_hosts: KnownHosts,
    deadline: Deadline,
    password: str | None,
) -> paramiko.SSHClient:
    resolved = hop.resolved
    host_id = host_key_id(resolved.address, resolved.port)
    label = f"{hop.label} (jump host for {hop.jump_for})" if hop.jump_for else hop.label
    who = f"{resolved.user}@{hop.label}"
    preferred = known_hosts.preferred_key_types(host_id)

    def make_transport(sock_: object, disabled_algorithms: dict | None = None) -> paramiko.Transport:
        transport = paramiko.Transport(sock_, disabled_algorithms=disabled_algorithms)
        prefer_key_types(transport, preferred)  # so a host trusted for ed25519 isn't asked for RSA
        return transport

    policy = _RecordingPolicy(known_hosts, host_id, label)
    method = hop.spec.auth
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(policy)  # host key tables stay empty: the policy sees every key
    try:
        auth_kwargs, method = _auth_options(hop, password)
        if sock is None:
            sock = open_tcp(resolved.address, resolved.port, deadline.left())
        client.connect(
            resolved.address, port=resolved.port, username=resolved.user, sock=sock,
            timeout=deadline.left(), banner_timeout=deadline.left(),
            auth_timeout=deadline.timeout, channel_timeout=deadline.timeout,
            # compressed: telemetry ticks are /proc text, each much like the one before, so a monitor's
            # host sends about a fifth of the bytes (benchmarks/telemetry_link_bytes.py): a slow link
            # carries them
            compress=COMPRESS, transport_factory=make_transport, **auth_kwargs,
        )
        return client
    except RemoteError as error:
        client.close()
        raise _jump_error(hop, error) from None
    except (paramiko.SSHException, OSError, EOFError) as exc:
        transport = client.get_transport()
        if not policy.passed:
            error = describe_handshake_error(exc, transport, resolved.address, resolved.port, deadline.timeout)
        elif password is None and hop.spec.auth in (AUTH_AUTO, AUTH_PASSWORD) and _password_allowed(
            transport, resolved.user
        ):
            error = PasswordRequired(f"{who}: no key was accepted; a password is needed")
        elif isinstance(exc, paramiko.AuthenticationException) and "timeout" in str(exc).lower():
            error = AuthError(f"{who}: no answer to authentication within {deadline.timeout:g} s")
        else:
            error = AuthError(f"{who}: authentication failed ({method}) — check the user name and key/password")
        client.close()
        raise _jump_error(hop, error) from None


class _RecordingPolicy(VerifyHostKeyPolicy):
    """Remembers that the host key check passed, so later failures are known to be about auth."""

    passed = False

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        super().missing_host_key(client, hostname, key)
        self.passed = True
