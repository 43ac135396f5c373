"""JSON exchange of whole runs between stores: one import point for the CLI, the GUI and the comparison."""
from __future__ import annotations

from storage.run_export import (
    DOCUMENT_FORMAT,
    DOCUMENT_VERSION,
    comparison_run_ids,
    export_comparison,
    export_runs,
    write_runs,
)
from storage.run_import import ImportReport, InvalidRunDocument, import_file, import_runs, parse_document

__all__ = [
    "DOCUMENT_FORMAT",
    "DOCUMENT_VERSION",
    "ImportReport",
    "InvalidRunDocument",
    "comparison_run_ids",
    "export_comparison",
    "export_runs",
    "import_file",
    "import_runs",
    "parse_document",
    "write_runs",
]
