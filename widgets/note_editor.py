"""A note on the selected run(s): shown, edited, and handed to the owner to store."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from widgets.chart_theme import MUTED
from widgets.run_data import RunRow


class NoteEditor(QWidget):
    """Select one run to read and change its note; with several selected, Save gives them all the same note."""

    save_requested = Signal(list, str)   # run ids, the note

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noteEditor")
        self._runs: list[RunRow] = []
        self._loaded = ""
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: 600;")
        self.text = QPlainTextEdit()
        self.text.setObjectName("runNoteText")
        self.text.setTabChangesFocus(True)
        self.text.textChanged.connect(self._update_state)
        self.save_button = QPushButton("Save note")
        self.save_button.setObjectName("saveNoteButton")
        self.save_button.setToolTip("Store this note with the run (it goes into the PDF and the JSON export)")
        self.save_button.clicked.connect(lambda _checked=False: self.save())
        self.state = QLabel()
        self.state.setStyleSheet(f"color: {MUTED};")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.state, 1)
        bar.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.text, 1)
        layout.addLayout(bar)
        self.set_runs([])

    def set_runs(self, runs: list[RunRow]) -> None:
        """The selected runs; an unsaved edit of the same runs is kept."""
        same = [r.id for r in runs] == [r.id for r in self._runs]
        edited = self.text.toPlainText() != self._loaded
        self._runs = list(runs)
        notes = {r.notes for r in runs}
        self._loaded = notes.pop() if len(notes) == 1 else ""
        if runs and not (same and edited):
            self.text.setPlainText(self._loaded)
        if not runs:
            self.title.setText("Run note")
            self.text.setPlainText("")
            self.text.setPlaceholderText("Select a run to read or write its note.")
        elif len(runs) == 1:
            run = runs[0]
            self.title.setText(f"Note on run #{run.id} — {run.host_name}, {run.test}")
            self.text.setPlaceholderText("What should a reader know about this run? (setup, anomalies, …)")
        else:
            self.title.setText(f"Note on {len(runs)} runs")
            self.text.setPlaceholderText("The runs have different notes; saving gives them all this one."
                                         if len({r.notes for r in runs}) > 1 else "No note yet.")
        self.text.setEnabled(bool(runs))
        self._update_state()

    def run_ids(self) -> list[int]:
        return [r.id for r in self._runs]

    def save(self) -> None:
        if self._runs:
            self.save_requested.emit(self.run_ids(), self.text.toPlainText().strip())

    def saved(self, run_ids: list[int], text: str) -> None:
        """The owner stored the note: it is no longer an unsaved edit."""
        if run_ids == self.run_ids():
            self._loaded = text
            self.state.setText("Saved")
            self.save_button.setEnabled(False)

    def _update_state(self) -> None:
        edited = bool(self._runs) and self.text.toPlainText().strip() != self._loaded
        self.save_button.setEnabled(edited)
        self.state.setText("Unsaved changes" if edited else "")
