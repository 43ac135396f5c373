"""Plain description of a host: what the inventory stores and what a transport needs."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

LOCAL_HOST_NAME = "local"

AUTH_AUTO = "auto"          # ssh-agent, then key files from ~/.ssh/config and defaults
AUTH_KEY = "key"            # the key file named in key_path
AUTH_AGENT = "agent"        # ssh-agent only
AUTH_PASSWORD = "password"  # asked each time; stored only in the OS keyring, and only on opt-in
AUTH_METHODS = (AUTH_AUTO, AUTH_KEY, AUTH_AGENT, AUTH_PASSWORD)


@dataclass(frozen=True)
class HostSpec:
    """A host as the user described it; empty fields are filled from ~/.ssh/config."""

    name: str
    address: str = ""
    port: int | None = None
    user: str = ""
    auth: str = AUTH_AUTO
    key_path: str = ""
    jump: str = ""                  # name of another inventory host, or a ProxyJump spec
    keyring: bool = False           # user opted in to keep the password in the OS keyring
    test_dir: str = ""              # default directory for disk tests; "" = the run directory
    run_dir: str = ""               # where run directories go first; "" = $TMPDIR, /tmp ... (remote.run_dir)
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_local(self) -> bool:
        return self.name == LOCAL_HOST_NAME

    def with_changes(self, **changes) -> HostSpec:
        return replace(self, **changes)


LOCAL_HOST = HostSpec(name=LOCAL_HOST_NAME, address="localhost", notes="This computer, no SSH")
