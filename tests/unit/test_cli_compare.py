"""`benchbay compare`: the table, JSON, CSV and PDF a user asks for, and one-line errors."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from app.cli import main
from tests.fixtures.comparison_runs import store_two_servers


@pytest.fixture
def runs(cli_env, qapp):
    from app.workbench import Workbench

    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        return store_two_servers(bench.store)
    finally:
        bench.close()


def test_table_summary_and_caveats(runs, capsys) -> None:
    assert main(["compare", "1", "2", "--baseline", "1"]) == 0
    out = capsys.readouterr().out
    assert "old-server (baseline)" in out and "*17,000 — ahead of old-server by 3.4" in out
    assert "old-server (baseline) has 5,000 IOPS; new-server: ahead of old-server by 3.4" in out
    assert "new-server: Cached I/O (no O_DIRECT)" in out
    # the legend says what the ranges are, and where a noise floor stood in for repeats
    assert "not a standard deviation" in out
    assert "Judged with the figure's noise floor" in out and "new-server, Random read 4 KiB" in out


def test_json_csv_and_pdf_in_one_go(runs, capsys, tmp_path: Path) -> None:
    pdf, table = tmp_path / "f.pdf", tmp_path / "g.csv"
    assert main(["compare", "1", "2", "--baseline", "1", "--pdf", str(pdf), "--csv", str(table), "--json",
                 "--page-size", "Letter", "--title", "Renewal"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["baseline"] == "old-server"
    new = document["rows"][1]
    cell = new["cells"]["disk:randread_4k.iops"]
    assert (cell["value"], cell["ratio_text"], cell["best"]) == (17_000.0, "3.4x", True)
    assert "cached" in new["cells"]["disk:randread_1m.mbps"]["caveats"]
    assert any("may be absorbing them" in line for line in document["caveats"])
    assert "new-server: ahead of old-server by 3.4" in document["summary"]
    standing = next(s for s in document["standings"] if s["figure"] == "disk:randread_4k.iops" and
                    s["row"] == "new-server")
    assert (standing["verdict"], standing["against"], standing["basis"]) == ("ahead", "old-server", "noise_floor")
    assert standing["factor"] == pytest.approx(3.4) and standing["lo"] < 3.4 < standing["hi"]
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert [r["server"] for r in rows] == ["old-server", "new-server"]
    assert float(rows[1]["Random read 4 KiB (IOPS)"]) == 17_000.0
    assert float(rows[1]["Random read 4 KiB factor lo"]) == standing["lo"]
    assert pdf.read_bytes().startswith(b"%PDF")
    assert "PDF: " in captured.err and "pages)" in captured.err


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["compare", "1", "99"], 1, "no run with id 99"),
    (["compare", "1", "2", "--baseline", "5"], 2, "baseline run 5 is not one of the compared runs"),
    (["compare", "1", "2", "--pdf", "/nonexistent-dir/f.pdf"], 1, "cannot write /nonexistent-dir/f.pdf"),
    (["compare", "1", "2", "--csv", "/nonexistent-dir/g.csv"], 1, "cannot write /nonexistent-dir/g.csv"),
    (["compare", "1", "2", "--pdf", "f.pdf", "--logo", "/nonexistent-dir/logo.png"], 1, "no logo file"),
])
def test_errors_are_one_line(runs, capsys, argv: list[str], code: int, message: str) -> None:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_usage_errors_exit_2(runs) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["compare", "1", "--page-size", "A5"])
    assert exited.value.code == 2


def test_a_pdf_from_the_command_line_leaves_the_process_a_widgets_application(cli_env, tmp_path: Path) -> None:
    """`benchbay compare --pdf` in a process with no Qt application: it makes one that windows (and pytest-qt)
    can use too, not a bare QGuiApplication that nothing could replace."""
    import subprocess
    import sys

    from app.workbench import Workbench

    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        store_two_servers(bench.store)
    finally:
        bench.close()
    pdf = tmp_path / "c.pdf"
    code = ("import sys\n"
            "from app.cli import main\n"
            f"assert main(['compare', '1', '2', '--pdf', {str(pdf)!r}]) == 0\n"
            "from PySide6.QtCore import QCoreApplication\n"
            "from PySide6.QtWidgets import QWidget\n"
            "print(type(QCoreApplication.instance()).__name__)\n"
            "QWidget()   # a window after the PDF: only a QApplication allows it\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "QApplication"
    assert pdf.read_bytes().startswith(b"%PDF")
