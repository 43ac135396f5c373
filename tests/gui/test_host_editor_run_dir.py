"""The host editor's run directory: loaded, typed, saved; a relative path keeps OK disabled."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from remote.hostspec import HostSpec
from tests.gui.test_host_editor import entered, open_editor

pytestmark = pytest.mark.gui


def test_run_dir_is_loaded_edited_and_checked(qtbot) -> None:
    spec = HostSpec(name="db2", address="192.0.2.7", run_dir="/srv/bench")
    dialog = open_editor(spec=spec, existing_names={"local", "db2"}, ssh_aliases=[], jump_hosts=["local"])
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.run_dir_edit.text() == "/srv/bench" and dialog.ok_button.isEnabled()

    dialog.run_dir_edit.clear()
    qtbot.keyClicks(dialog.run_dir_edit, "bench")
    assert not dialog.ok_button.isEnabled() and "absolute path" in dialog.hint.text()

    dialog.run_dir_edit.clear()
    qtbot.keyClicks(dialog.run_dir_edit, "~/bench runs")
    assert dialog.ok_button.isEnabled()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert entered(dialog).run_dir == "~/bench runs"
