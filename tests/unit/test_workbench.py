"""The orchestration layer the window and the command line share."""
from __future__ import annotations

import keyring
import pytest
from keyring.backend import KeyringBackend

from app.errors import AppError
from remote.hostspec import AUTH_PASSWORD, HostSpec
from storage.errors import DuplicateHost, NotFound, StoreError


class MemoryKeyring(KeyringBackend):
    """Stands in for the desktop's keyring (Secret Service, KWallet) without a session bus."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.items.get((service, username))

    def set_password(self, service, username, password):
        self.items[(service, username)] = password

    def delete_password(self, service, username):
        self.items.pop((service, username), None)


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


def test_local_is_always_first_and_cannot_be_removed(workbench) -> None:
    workbench.add_host(HostSpec(name="db1", address="192.0.2.5"))
    assert [h.name for h in workbench.list_hosts()] == ["local", "db1"]
    with pytest.raises(NotFound):
        workbench.remove_host("local")


def test_ssh_config_alias_is_usable_without_adding_it(workbench, bench_paths) -> None:
    bench_paths["ssh_config"].write_text("Host web7\n    HostName 192.0.2.7\n    Port 2207\n")
    assert workbench.ssh_config_aliases() == ["web7"]
    assert workbench.get_host("web7") == HostSpec(name="web7")
    with pytest.raises(NotFound, match="benchbay host add"):
        workbench.get_host("web8")


def test_local_has_no_host_key(workbench) -> None:
    with pytest.raises(AppError, match="this computer"):
        workbench.host_key("local")


def test_password_kept_only_in_memory_unless_opted_in(workbench, memory_keyring, bench_paths) -> None:
    workbench.add_host(HostSpec(name="db1", address="192.0.2.5", auth=AUTH_PASSWORD))
    assert workbench.needs_password("db1")
    assert workbench.remember_password("db1", "s3cret")
    # opting in marks the host, so the next session finds the password in the keyring
    assert workbench.get_host("db1").keyring is True
    assert memory_keyring.items == {("benchbay", "db1"): "s3cret"}
    assert not workbench.needs_password("db1")
    db_bytes = bench_paths["db"].read_bytes()
    assert b"s3cret" not in db_bytes
    assert not any(b"s3cret" in p.read_bytes() for p in bench_paths["home"].rglob("*") if p.is_file())
    workbench.remove_host("db1")
    assert memory_keyring.items == {}


def test_plain_text_keyring_is_refused(workbench, monkeypatch) -> None:
    from app.engine import passwords

    class PlaintextKeyring(MemoryKeyring):
        pass

    PlaintextKeyring.__module__ = "keyrings.alt.file.plaintext"
    previous = keyring.get_keyring()
    keyring.set_keyring(PlaintextKeyring())
    try:
        assert not passwords.keyring_available()
        workbench.add_host(HostSpec(name="db2", address="192.0.2.6", auth=AUTH_PASSWORD))
        assert workbench.remember_password("db2", "pw") is False
        assert workbench.get_host("db2").keyring is False
    finally:
        keyring.set_keyring(previous)


def test_unknown_authentication_method_is_refused_before_anything_is_stored(workbench) -> None:
    with pytest.raises(AppError, match=r"^host web: unknown authentication method 'telnet'$"):
        workbench.add_host(HostSpec(name="web", address="192.0.2.5", auth="telnet"))
    assert [h.name for h in workbench.list_hosts()] == ["local"]
    workbench.add_host(HostSpec(name="web", address="192.0.2.5"))
    with pytest.raises(AppError, match="unknown authentication method 'telnet'"):
        workbench.update_host("web", HostSpec(name="web", address="192.0.2.5", auth="telnet"))
    assert workbench.get_host("web").auth == "auto"


def test_a_host_wrong_in_name_and_method_is_refused_for_its_name(workbench) -> None:
    with pytest.raises(StoreError, match="invalid host name 'web/1'"):
        workbench.add_host(HostSpec(name="web/1", auth="telnet"))
    with pytest.raises(DuplicateHost, match="built-in"):
        workbench.add_host(HostSpec(name="local", auth="telnet"))
