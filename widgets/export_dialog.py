"""Ask what the PDF report says on its title page and where it goes."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from PySide6.QtCore import QDate, Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from widgets.chart_theme import MUTED

PAGE_SIZES = ("A4", "Letter")
LOGO_FILTER = "Images (*.png *.jpg *.jpeg *.svg *.bmp)"
LOGO_PREVIEW_PX = 48


@dataclass(frozen=True)
class ExportChoice:
    title: str
    customer: str
    author: str
    date: date
    logo_path: str | None
    page_size: str
    output: str


class ExportDialog(QDialog):
    """Title, customer or project, author, date, optional logo, page size and the output file."""

    def __init__(self, title: str = "", customer: str = "", author: str = "", output: str = "",
                 page_size: str = "A4", logo_path: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle("Export PDF report")
        self.title_edit = QLineEdit(title or "Server comparison")
        self.customer_edit = QLineEdit(customer)
        self.customer_edit.setPlaceholderText("Customer or project (optional)")
        self.author_edit = QLineEdit(author)
        self.author_edit.setPlaceholderText("Who made the report (optional)")
        self.date_edit = QDateEdit(QDate.currentDate())
        self.date_edit.setCalendarPopup(True)
        self.date_edit.setDisplayFormat("yyyy-MM-dd")
        self.logo_edit = QLineEdit(logo_path or "")
        self.logo_edit.setPlaceholderText("No logo")
        self.logo_button = QPushButton("Choose…")
        self.logo_button.clicked.connect(lambda _checked=False: self._choose_logo())
        self.logo_preview = QLabel()
        self.logo_preview.setFixedHeight(LOGO_PREVIEW_PX)
        self.logo_preview.setStyleSheet(f"color: {MUTED};")
        self.page_combo = QComboBox()
        self.page_combo.addItems(PAGE_SIZES)
        self.page_combo.setCurrentIndex(max(0, self.page_combo.findText(page_size)))
        self.output_edit = QLineEdit(output)
        self.output_edit.setPlaceholderText("report.pdf")
        self.output_button = QPushButton("Choose…")
        self.output_button.clicked.connect(lambda _checked=False: self._choose_output())
        self.problem = QLabel()
        self.problem.setStyleSheet("color: #c0392b;")
        self.problem.setWordWrap(True)

        logo_row = QHBoxLayout()
        logo_row.addWidget(self.logo_edit, 1)
        logo_row.addWidget(self.logo_button)
        output_row = QHBoxLayout()
        output_row.addWidget(self.output_edit, 1)
        output_row.addWidget(self.output_button)
        form = QFormLayout()
        form.addRow("Title", self.title_edit)
        form.addRow("Customer / project", self.customer_edit)
        form.addRow("Author", self.author_edit)
        form.addRow("Date", self.date_edit)
        form.addRow("Logo", logo_row)
        form.addRow("", self.logo_preview)
        self.form = form
        form.addRow("Page size", self.page_combo)
        form.addRow("Save as", output_row)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Export")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        for edit in (self.title_edit, self.logo_edit, self.output_edit):
            edit.textChanged.connect(lambda _t: self._check())
        self.resize(560, self.sizeHint().height())
        self._check()

    def choice(self) -> ExportChoice:
        logo = self.logo_edit.text().strip()
        output = self.output_edit.text().strip()
        if output and not output.lower().endswith(".pdf"):
            output += ".pdf"
        return ExportChoice(self.title_edit.text().strip(), self.customer_edit.text().strip(),
                            self.author_edit.text().strip(), self.date_edit.date().toPython(),
                            str(Path(logo).expanduser()) if logo else None, self.page_combo.currentText(),
                            str(Path(output).expanduser()) if output else "")

    def problems(self) -> list[str]:
        choice = self.choice()
        out = []
        if not choice.title:
            out.append("The report needs a title.")
        if choice.logo_path and not Path(choice.logo_path).is_file():
            out.append(f"No logo file at {choice.logo_path}.")
        if not choice.output:
            out.append("Choose where to save the PDF.")
        elif not Path(choice.output).parent.is_dir():
            out.append(f"No folder {Path(choice.output).parent}.")
        return out

    def accept(self) -> None:
        if not self.problems():
            super().accept()

    def _check(self) -> None:
        problems = self.problems()
        self.problem.setText(" ".join(problems[:1]) if self.output_edit.text().strip() else "")
        self.ok_button.setEnabled(not problems)
        self._preview_logo()

    def _preview_logo(self) -> None:
        path = self.logo_edit.text().strip()
        self.form.setRowVisible(self.logo_preview, bool(path))   # no empty gap without a logo
        if not path:
            self.logo_preview.setPixmap(QPixmap())
            self.logo_preview.setText("")
            return
        pixmap = QPixmap(str(Path(path).expanduser())) if Path(path).expanduser().is_file() else QPixmap()
        if pixmap.isNull():
            self.logo_preview.setPixmap(QPixmap())
            self.logo_preview.setText(f"{Path(path).name} — cannot be read as an image")
            return
        # scaled in device pixels: sharp at 200 % too, not a 1x preview blown up
        ratio = self.devicePixelRatioF()
        preview = pixmap.scaledToHeight(round(LOGO_PREVIEW_PX * ratio), Qt.TransformationMode.SmoothTransformation)
        preview.setDevicePixelRatio(ratio)
        self.logo_preview.setPixmap(preview)
        self.logo_preview.setToolTip(Path(path).name)

    def _choose_logo(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a logo", self.logo_edit.text() or str(Path.home()),
                                              LOGO_FILTER)
        if path:
            self.logo_edit.setText(path)

    def _choose_output(self) -> None:
        start = self.output_edit.text() or str(Path.home() / "report.pdf")
        path, _ = QFileDialog.getSaveFileName(self, "Save the PDF report", start, "PDF (*.pdf)")
        if path:
            self.output_edit.setText(path)
