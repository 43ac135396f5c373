"""The host editor: typed input becomes a HostSpec (through the window's mapping); invalid input keeps OK disabled."""
from __future__ import annotations

from dataclasses import asdict

import pytest
from PySide6.QtCore import Qt

from app.gui.host_actions import AUTH_CHOICES
from remote.hostspec import AUTH_AGENT, AUTH_AUTO, AUTH_KEY, AUTH_PASSWORD, LOCAL_HOST_NAME, HostSpec
from widgets.host_data import HostFields
from widgets.host_editor import PORT_FROM_CONFIG, HostEditor, validate

pytestmark = pytest.mark.gui


def open_editor(spec: HostSpec | None = None, **kwargs) -> HostEditor:
    """As the window opens it: with app's choices, a HostSpec in as the editor's own record."""
    return HostEditor(spec=HostFields(**asdict(spec)) if spec else None, auth_choices=AUTH_CHOICES,
                      reserved_names={LOCAL_HOST_NAME}, **kwargs)


def entered(dialog: HostEditor) -> HostSpec:
    return HostSpec(**asdict(dialog.fields()))


@pytest.fixture
def editor(qtbot):
    dialog = open_editor(existing_names={"local", "db1"}, ssh_aliases=["cfg-only"], jump_hosts=["local", "db1"])
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def set_auth(editor: HostEditor, auth: str) -> None:
    editor.auth_combo.setCurrentIndex(editor.auth_combo.findData(auth))


def test_new_host_starts_with_ok_disabled_and_a_hint(editor):
    assert not editor.ok_button.isEnabled()
    assert "name" in editor.hint.text().lower()
    assert editor.port_spin.value() == 22


@pytest.mark.parametrize(
    ("name", "address", "hint_part"),
    [
        ("db new", "10.0.0.1", "spaces"),
        ("local", "10.0.0.1", "built-in"),
        ("db1", "10.0.0.1", "already"),
        ("db2", "", "address"),
        ("db2", "10.0.0 .1", "spaces"),
    ],
)
def test_invalid_input_keeps_ok_disabled(qtbot, editor, name, address, hint_part):
    qtbot.keyClicks(editor.name_edit, name)
    qtbot.keyClicks(editor.address_edit, address)
    assert not editor.ok_button.isEnabled()
    assert hint_part in editor.hint.text()


def test_errors_are_red_but_missing_fields_are_only_hinted(qtbot, editor):
    assert editor.hint.property("error") is False
    qtbot.keyClicks(editor.name_edit, "bad name")
    assert editor.hint.property("error") is True
    assert "#c0392b" in editor.hint.styleSheet()


def test_valid_input_gives_a_spec(qtbot, editor):
    qtbot.keyClicks(editor.name_edit, "db-new")
    qtbot.keyClicks(editor.address_edit, "10.1.2.3")
    editor.port_spin.setValue(2222)
    qtbot.keyClicks(editor.user_edit, "admin")
    set_auth(editor, AUTH_AGENT)
    editor.jump_combo.setCurrentText("db1")
    qtbot.keyClicks(editor.test_dir_edit, "/srv/bench")
    qtbot.keyClicks(editor.notes_edit, "rack 4")
    assert editor.ok_button.isEnabled(), editor.hint.text()
    assert entered(editor) == HostSpec(
        name="db-new", address="10.1.2.3", port=2222, user="admin", auth=AUTH_AGENT, jump="db1",
        test_dir="/srv/bench", notes="rack 4",
    )
    with qtbot.waitSignal(editor.accepted):
        qtbot.mouseClick(editor.ok_button, Qt.MouseButton.LeftButton)


def test_ssh_config_alias_needs_no_address_and_takes_its_port_from_the_config(qtbot, editor):
    qtbot.keyClicks(editor.name_edit, "cfg-only")
    assert editor.ok_button.isEnabled(), editor.hint.text()
    assert editor.port_spin.value() == PORT_FROM_CONFIG
    assert editor.port_spin.text() == "from ~/.ssh/config"
    assert entered(editor).port is None
    assert "~/.ssh/config" in editor.hint.text()


def test_key_file_must_exist_when_chosen(qtbot, editor, tmp_path):
    qtbot.keyClicks(editor.name_edit, "db2")
    qtbot.keyClicks(editor.address_edit, "db2.example")
    assert not editor.key_edit.isEnabled() or not editor.key_edit.parentWidget().isEnabled()
    set_auth(editor, AUTH_KEY)
    assert editor.key_edit.parentWidget().isEnabled()
    assert not editor.ok_button.isEnabled()
    qtbot.keyClicks(editor.key_edit, str(tmp_path / "missing"))
    assert not editor.ok_button.isEnabled()
    assert "not found" in editor.hint.text()
    key = tmp_path / "id_test"
    key.write_text("key")
    editor.key_edit.setText(str(key))
    assert editor.ok_button.isEnabled()
    assert entered(editor).key_path == str(key)
    set_auth(editor, AUTH_AUTO)
    assert entered(editor).key_path == ""   # a key path only means something for "Key file"


def test_port_range_is_enforced_by_the_spin_box(editor):
    editor.port_spin.setValue(70000)
    assert editor.port_spin.value() == 65535
    assert validate(HostFields("x", "h", port=0), taken_names=set(), ssh_aliases=set())[1] is True


def test_edit_keeps_its_own_name_and_unknown_fields(qtbot):
    spec = HostSpec(name="db1", address="10.0.0.1", port=None, auth=AUTH_PASSWORD, keyring=True,
                    tags=("customer-a",))
    dialog = open_editor(existing_names={"local", "db1", "db2"}, jump_hosts=["local", "db1", "db2"], spec=spec)
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Edit host db1"
    assert dialog.ok_button.isEnabled(), dialog.hint.text()
    assert entered(dialog) == spec
    assert [dialog.jump_combo.itemText(i) for i in range(dialog.jump_combo.count())] == ["", "db2"]
    dialog.name_edit.setText("db2")
    assert not dialog.ok_button.isEnabled()
    set_auth(dialog, AUTH_AUTO)
    dialog.name_edit.setText("db3")
    assert entered(dialog).keyring is False   # no keyring password for a host that uses keys


@pytest.mark.parametrize("field, text, hint_part", [
    ("address_edit", "root@db2", "Address 'root@db2' holds a user: give the user on its own"),
    ("address_edit", "999.1.1.1", "is not an IPv4 address"),
    ("user_edit", "root;id", "User name 'root;id' contains invalid characters (ssh refuses it too)"),
])
def test_what_connections_refuse_keeps_ok_disabled(qtbot, field: str, text: str, hint_part: str) -> None:
    """The window hands in the rules `host add` uses: the editor refuses what every connection would."""
    from app.engine.hosts_map import connection_problem
    dialog = open_editor(existing_names={"local"}, connection_problem=connection_problem)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.name_edit, "db2")
    qtbot.keyClicks(dialog.address_edit, "10.0.0.2")
    assert dialog.ok_button.isEnabled()
    getattr(dialog, field).clear()
    qtbot.keyClicks(getattr(dialog, field), text)
    assert not dialog.ok_button.isEnabled()
    assert hint_part in dialog.hint.text()
