"""Add or edit an SSH host. Checks the input as it is typed; returns HostFields, touches nothing else."""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from widgets.host_data import AuthChoice, HostFields
from widgets.price_group import PriceFields, PriceGroup

PORT_FROM_CONFIG = 0   # the spin box's blank value: take the port from ~/.ssh/config (or 22)


_TAG_SEPARATORS = re.compile(r"[\s,]+")


def parse_tags(text: str) -> tuple[str, ...]:
    """Tags as typed (comma or space separated, a leading @ allowed); each once, case as first given."""
    tags: dict[str, str] = {}
    for part in _TAG_SEPARATORS.split(text):
        tag = part.removeprefix("@")
        if tag:
            tags.setdefault(tag.lower(), tag)
    return tuple(tags.values())


def _choice(choices: Sequence[AuthChoice], value: str) -> AuthChoice:
    return next((c for c in choices if c.value == value), AuthChoice(value, value))


def validate(spec: HostFields, *, taken_names: Collection[str], ssh_aliases: Collection[str],
             reserved_names: Collection[str] = (), auth_choices: Sequence[AuthChoice] = (),
             tag_problem: Callable[[str], str] | None = None,
             connection_problem: Callable[[str, str, str], str] | None = None) -> tuple[str, bool]:
    """The first problem with the host as ("message", is_error); ("", False) when it is fine.

    is_error False means "not filled in yet": shown as a hint, not in red. reserved_names: the
    built-in hosts' names; auth_choices: says which authentication needs a key file; tag_problem: why a
    tag is not allowed ("" when it is), the same rule the command line applies; connection_problem: why
    every connection would refuse the address, user or key file (address, user, key path), likewise.
    """
    name = spec.name
    if not name:
        return "Enter a name for the host.", False
    if any(ch.isspace() for ch in name):
        return "The name cannot contain spaces.", True
    if name in reserved_names:
        return f"“{name}” is the built-in host for this computer; choose another name.", True
    if name in taken_names:
        return f"There is already a host named “{name}”.", True
    if not spec.address and name not in ssh_aliases:
        return "Enter the address (or use a name from ~/.ssh/config).", False
    if any(ch.isspace() for ch in spec.address):
        return "The address cannot contain spaces.", True
    if spec.port is not None and not 1 <= spec.port <= 65535:
        return "The port must be between 1 and 65535.", True
    if _choice(auth_choices, spec.auth).needs_key:
        if not spec.key_path:
            return "Choose the key file.", False
        if not Path(spec.key_path).expanduser().is_file():
            return f"Key file not found: {spec.key_path}", True
    problem = connection_problem(spec.address, spec.user, spec.key_path) if connection_problem else ""
    if problem:
        return problem[:1].upper() + problem[1:] + ".", True
    if spec.jump and spec.jump == name:
        return "A host cannot be its own jump host.", True
    run_dir = spec.run_dir
    if run_dir and not (run_dir.startswith("/") or run_dir == "~" or run_dir.startswith("~/")):
        return "The run directory must be an absolute path on the host (or ~/...).", True
    for tag in spec.tags if tag_problem else ():
        problem = tag_problem(tag)
        if problem:
            return f"Tags: {problem}.", True
    return "", False


class HostEditor(QDialog):
    """`fields()` is the host as entered; OK stays disabled while the input is not valid.

    app hands in the authentication choices and the built-in hosts' names (which the user cannot take).
    """

    def __init__(
        self,
        existing_names: set[str] | list[str] = (),
        ssh_aliases: list[str] = (),
        jump_hosts: list[str] = (),
        spec: HostFields | None = None,
        parent: QWidget | None = None,
        *,
        auth_choices: Sequence[AuthChoice],
        reserved_names: Collection[str],
        price: PriceFields | None = None,
        tag_problem: Callable[[str], str] | None = None,
        connection_problem: Callable[[str, str, str], str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("hostEditor")
        self._original = spec
        self._choices = tuple(auth_choices)
        self._reserved = frozenset(reserved_names)
        self._tag_problem = tag_problem
        self._connection_problem = connection_problem
        self._aliases = set(ssh_aliases)
        self._taken = set(existing_names) - ({spec.name} if spec else set())
        self.setWindowTitle(f"Edit host {spec.name}" if spec else "Add host")
        self.setMinimumWidth(480)

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. db-new  (a ~/.ssh/config alias works too)")
        self.address_edit = QLineEdit()
        self.address_edit.setPlaceholderText("host name or IP address")
        self.port_spin = QSpinBox()
        self.port_spin.setRange(PORT_FROM_CONFIG, 65535)
        self.port_spin.setSpecialValueText("from ~/.ssh/config")
        self.port_spin.setValue(22)
        self.port_spin.setFixedWidth(170)
        self.user_edit = QLineEdit()
        self.user_edit.setPlaceholderText("from ~/.ssh/config, else your user name")

        self.auth_combo = QComboBox()
        for choice in self._choices:
            self.auth_combo.addItem(choice.label, choice.value)
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("~/.ssh/id_ed25519")
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse_key)
        key_row = QHBoxLayout()
        key_row.setContentsMargins(0, 0, 0, 0)
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(self.browse_button)
        key_holder = QWidget()
        key_holder.setLayout(key_row)

        self.jump_combo = QComboBox()
        self.jump_combo.setEditable(True)
        self.jump_combo.addItem("")
        for name in jump_hosts:
            if name not in self._reserved and (spec is None or name != spec.name):
                self.jump_combo.addItem(name)
        self.jump_combo.lineEdit().setPlaceholderText("none — or another host, or user@host:port")

        self.test_dir_edit = QLineEdit()
        self.test_dir_edit.setPlaceholderText("where tests write files; blank = the run directory")
        self.test_dir_edit.setToolTip("The directory the disk, mail storm and restore tests write in on this host, "
                                      "unless a run names its own")
        self.run_dir_edit = QLineEdit()
        self.run_dir_edit.setObjectName("runDirEdit")
        self.run_dir_edit.setPlaceholderText("blank = $TMPDIR, else /tmp, else /var/tmp")
        self.run_dir_edit.setToolTip("Where Benchbay puts the agent and its files first on this host; when it "
                                     "is full, the next of $TMPDIR, /tmp, /var/tmp is used and the run says so.")
        self.tags_edit = QLineEdit()
        self.tags_edit.setObjectName("tagsEdit")
        self.tags_edit.setPlaceholderText("groups, e.g. rack3, front  (comma or space separated)")
        self.tags_edit.setToolTip("A tag puts the host in a group: the group bar above the host list selects "
                                  "every host of a group in one click, and `benchbay run @rack3` runs them all.")
        self.notes_edit = QPlainTextEdit()
        self.notes_edit.setPlaceholderText("rack, customer, anything worth remembering")
        self.notes_edit.setFixedHeight(64)
        self.notes_edit.setTabChangesFocus(True)

        form = QFormLayout()
        form.setHorizontalSpacing(14)
        form.addRow("Name:", self.name_edit)
        form.addRow("Address:", self.address_edit)
        form.addRow("Port:", self.port_spin)
        form.addRow("User:", self.user_edit)
        form.addRow("Authentication:", self.auth_combo)
        form.addRow("Key file:", key_holder)
        form.addRow("Jump host:", self.jump_combo)
        form.addRow("Test directory:", self.test_dir_edit)
        form.addRow("Run directory:", self.run_dir_edit)
        form.addRow("Tags:", self.tags_edit)
        form.addRow("Notes:", self.notes_edit)
        self._key_label = form.labelForField(key_holder)
        self._key_holder = key_holder

        self.hint = QLabel()
        self.hint.setObjectName("validationHint")
        self.hint.setWordWrap(True)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Save" if spec else "Add host")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        self.price_group = PriceGroup()
        self.price_group.set_value(price)
        self.price_group.changed.connect(self._revalidate)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.price_group)
        layout.addWidget(self.hint)
        layout.addWidget(self.buttons)

        if spec is not None:
            self._load(spec)
        self._port_touched = spec is not None
        self.name_edit.textChanged.connect(self._name_changed)  # before _revalidate: it may change the port
        for edit in (self.name_edit, self.address_edit, self.user_edit, self.key_edit, self.test_dir_edit,
                     self.run_dir_edit, self.tags_edit):
            edit.textChanged.connect(self._revalidate)
        self.port_spin.valueChanged.connect(self._port_changed)
        self.auth_combo.currentIndexChanged.connect(self._revalidate)
        self.jump_combo.editTextChanged.connect(self._revalidate)
        self._revalidate()

    # -- public ----------------------------------------------------------------------------------

    def fields(self) -> HostFields:
        port = self.port_spin.value()
        base = self._original or HostFields(name="")
        auth = self.auth_combo.currentData()
        choice = _choice(self._choices, auth)
        return base.with_changes(
            name=self.name_edit.text().strip(),
            address=self.address_edit.text().strip(),
            port=None if port == PORT_FROM_CONFIG else port,
            user=self.user_edit.text().strip(),
            auth=auth,
            key_path=self.key_edit.text().strip() if choice.needs_key else "",
            jump=self.jump_combo.currentText().strip(),
            test_dir=self.test_dir_edit.text().strip(),
            run_dir=self.run_dir_edit.text().strip(),
            notes=self.notes_edit.toPlainText().strip(),
            tags=parse_tags(self.tags_edit.text()),
            # a password kept in the keyring makes no sense once the host uses keys
            keyring=base.keyring and choice.asks_password,
        )

    def problem(self) -> str:
        return self._validate()[0]

    def price(self) -> PriceFields | None:
        """The price as entered; None: no price (a saved one is then forgotten)."""
        return self.price_group.value()

    def _validate(self) -> tuple[str, bool]:
        if self.price_group.problem():
            return self.price_group.problem(), True
        return validate(self.fields(), taken_names=self._taken, ssh_aliases=self._aliases,
                        reserved_names=self._reserved, auth_choices=self._choices,
                        tag_problem=self._tag_problem, connection_problem=self._connection_problem)

    # -- internals -------------------------------------------------------------------------------

    def _load(self, spec: HostFields) -> None:
        self.name_edit.setText(spec.name)
        self.address_edit.setText(spec.address)
        self.port_spin.setValue(spec.port if spec.port is not None else PORT_FROM_CONFIG)
        self.user_edit.setText(spec.user)
        index = self.auth_combo.findData(spec.auth)
        self.auth_combo.setCurrentIndex(max(index, 0))
        self.key_edit.setText(spec.key_path)
        self.jump_combo.setEditText(spec.jump)
        self.test_dir_edit.setText(spec.test_dir)
        self.run_dir_edit.setText(spec.run_dir)
        self.notes_edit.setPlainText(spec.notes)
        self.tags_edit.setText(", ".join(spec.tags))

    def _name_changed(self, text: str) -> None:
        # An alias from ~/.ssh/config carries its own port: do not override it with 22
        if not self._port_touched:
            self.port_spin.blockSignals(True)
            self.port_spin.setValue(PORT_FROM_CONFIG if text.strip() in self._aliases else 22)
            self.port_spin.blockSignals(False)

    def _port_changed(self) -> None:
        self._port_touched = True
        self._revalidate()

    def _revalidate(self) -> None:
        key_auth = _choice(self._choices, self.auth_combo.currentData()).needs_key
        self._key_holder.setEnabled(key_auth)
        if self._key_label is not None:
            self._key_label.setEnabled(key_auth)
        alias = self.name_edit.text().strip() in self._aliases
        self.address_edit.setPlaceholderText("from ~/.ssh/config" if alias else "host name or IP address")
        message, is_error = self._validate()
        self.ok_button.setEnabled(not message)
        self.hint.setText(message or ("Address, port and user come from ~/.ssh/config where left blank."
                                      if alias else ""))
        self.hint.setProperty("error", is_error)
        self.hint.setStyleSheet("color: #c0392b;" if is_error else "color: palette(placeholder-text);")

    def _browse_key(self) -> None:
        start = self.key_edit.text().strip() or str(Path.home() / ".ssh")
        path, _ = QFileDialog.getOpenFileName(self, "Choose the private key", str(Path(start).expanduser()))
        if path:
            self.key_edit.setText(path)
