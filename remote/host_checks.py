"""What a host's address and login user may be: the rules every connection applies, shared so that
`host add` and the host editor refuse at once what a later connection would refuse."""
from __future__ import annotations

import ipaddress

# ssh.c valid_hostname / valid_ruser (CVE-2023-51385): names that reach `Match exec` as %h, %n or %r
# must not carry shell syntax; ssh refuses them before it reads the config.
_SHELL_IN_HOST = "'`\"$\\;&<>|(){}"
_SHELL_IN_USER = "'`\";&<>|(){}"
MAX_NAME = 253   # RFC 1035: the longest name a resolver looks up
MAX_LABEL = 63


def ssh_host_problem(host: str) -> str:
    """Why ssh refuses `host` as a host name; "" when it takes it."""
    if host.startswith("-") or any(c in _SHELL_IN_HOST or c.isspace() or not c.isprintable() for c in host):
        return f"host name {host!r} contains invalid characters (ssh refuses it too)"
    return ""


def ssh_user_problem(user: str) -> str:
    """Why ssh refuses `user` as a login name; "" when it takes it."""
    bad = user.startswith("-") or user.endswith("\\") or any(c in _SHELL_IN_USER for c in user)
    if bad or any(c.isspace() and user[i + 1:i + 2] == "-" for i, c in enumerate(user)):
        return f"user name {user!r} contains invalid characters (ssh refuses it too)"
    if any(not c.isprintable() for c in user):
        return f"user name {user!r} contains control characters"
    return ""


def address_problem(address: str) -> str:
    """Why `address` can never be connected to (ssh's rules, then what the resolver refuses); "" when it
    may be. Whether the name resolves is not asked here: that needs the network the host is on."""
    problem = ssh_host_problem(address)
    if problem:
        return problem
    if "@" in address:
        return f"address {address!r} holds a user: give the user on its own (User, --user) and the address alone"
    if address.startswith("[") or address.endswith("]"):
        return f"address {address!r}: write an IPv6 address without brackets"
    if ":" in address:
        try:
            ipaddress.IPv6Address(address)
            return ""
        except ValueError:
            pass
        if address.count(":") == 1 and address.rpartition(":")[2].isdigit():
            return f"address {address!r} holds a port: give the port on its own (Port, --port) and the address alone"
        return f"address {address!r} is not an IPv6 address"
    labels = address.rstrip(".").split(".")
    if all(label.isdigit() for label in labels) and len(labels) == 4:
        try:
            ipaddress.IPv4Address(address.rstrip("."))
        except ValueError:
            return f"address {address!r} is not an IPv4 address (each part is 0-255)"
        return ""
    try:
        encoded = address.encode("idna")   # what the resolver is handed: a name it cannot encode never resolves
    except UnicodeError:
        return f"address {address!r} is not a host name (an empty or over-long part between dots)"
    if len(encoded) > MAX_NAME or any(len(label) > MAX_LABEL for label in encoded.split(b".")):
        return f"address {address!r} is not a host name (too long)"
    return ""
