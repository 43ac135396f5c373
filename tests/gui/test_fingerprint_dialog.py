"""The dialogs that guard a connection: unknown host key, password."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QDialog

from widgets.fingerprint_dialog import EXPLANATION, FingerprintDialog, address_and_port
from widgets.password_dialog import PasswordDialog

pytestmark = pytest.mark.gui
FP = "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"


@pytest.fixture
def dialog(qtbot):
    shown = FingerprintDialog("db-new", "[10.1.2.3]:2222", "ssh-ed25519", FP)
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    return shown


def test_shows_host_key_type_and_fingerprint(dialog):
    assert dialog.fingerprint_label.text() == FP
    assert dialog.fingerprint_label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    metrics = QFontMetrics(dialog.fingerprint_label.font())
    assert metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("WWWW")   # monospace
    assert dialog.fingerprint_label.font().pointSizeF() > dialog.font().pointSizeF()
    assert "db-new" in dialog.host_label.text() and "10.1.2.3:2222" in dialog.host_label.text()
    assert dialog.key_type_label.text() == "ssh-ed25519"
    texts = " ".join(label.text() for label in dialog.findChildren(type(dialog.fingerprint_label)))
    assert EXPLANATION in texts
    assert dialog.isModal()


def test_reject_is_the_default_and_enter_rejects(qtbot, dialog):
    assert dialog.reject_button.text() == "Reject"
    assert dialog.reject_button.isDefault()
    assert not dialog.accept_button.isDefault()
    assert dialog.accept_button.text() == "Accept and connect"
    with qtbot.waitSignal(dialog.finished) as finished:
        qtbot.keyClick(dialog, Qt.Key.Key_Return)
    assert finished.args == [QDialog.DialogCode.Rejected.value]


def test_accept_button_accepts(qtbot, dialog):
    with qtbot.waitSignal(dialog.accepted):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)


@pytest.mark.parametrize(
    ("host_id", "expected"),
    [("[10.0.0.5]:2222", "10.0.0.5:2222"), ("db1.example", "db1.example:22"), ("[::1]:2200", "::1:2200")],
)
def test_address_and_port(host_id, expected):
    assert address_and_port(host_id) == expected


def test_password_dialog_offers_the_keyring_only_when_there_is_one(qtbot):
    without = PasswordDialog("db1", "admin@db1 asks for a password", keyring_available=False)
    with_keyring = PasswordDialog("db1", keyring_available=True)
    for shown in (without, with_keyring):
        qtbot.addWidget(shown)
        shown.show()
    assert not without.remember_box.isVisible()
    assert with_keyring.remember_box.isVisible()
    assert with_keyring.remember_box.text() == "Remember in the system keyring"
    ok = without.buttons.buttons()[0] if without.buttons.buttons()[0].text() == "Connect" else None
    assert ok is not None and not ok.isEnabled()
    qtbot.keyClicks(without.password_edit, "s3cret")
    assert ok.isEnabled()
    assert without.password() == "s3cret" and without.remember() is False
    with_keyring.remember_box.setChecked(True)
    assert with_keyring.remember()
