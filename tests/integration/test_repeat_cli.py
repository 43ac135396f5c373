"""`benchbay run --repeat` on `local` and on an SSH test host: the runs form a group in the store, a comparison
shows the group as one row with its median and spread, and three separate runs of one machine tie."""
from __future__ import annotations

import csv
import io
import json
import threading

import pytest
from pypdf import PdfReader

from app.cli import main
from app.engine.orchestrator import RunOutcome, RunRequest, execute_run
from tests.fixtures.sshd import ssh_keygen_fingerprint

pytestmark = pytest.mark.integration

SHORT_CPU = ["--test", "cpu", "--set", "seconds=1", "--set", "workers=1", "--interval", "0.5"]


def _json_out(capsys) -> dict:
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):])


def _run(capsys, *args: str) -> dict:
    assert main(["run", *args, "--json"]) == 0, capsys.readouterr().err
    return _json_out(capsys)


def _check_group(document: dict, host: str, count: int) -> list[int]:
    runs = document["runs"]
    assert [(r["host"], r["status"], r["repeat_index"]) for r in runs] == [(host, "done", i)
                                                                           for i in range(1, count + 1)]
    groups = {r["repeat_group"] for r in runs}
    assert len(groups) == 1 and len(groups.pop()) == 32
    assert [g["host"] for g in document["repeats"]] == [host]
    return [r["run_id"] for r in runs]


def test_repeat_three_times_on_local_then_compare_the_group(cli_env, capsys) -> None:
    document = _run(capsys, "local", *SHORT_CPU, "--repeat", "3")
    ids = _check_group(document, "local", 3)
    assert document["repeats"][0]["reason"] == "3 runs as asked"

    assert main(["compare", *map(str, ids), "--json"]) == 0
    comparison = _json_out(capsys)
    assert [row["label"] for row in comparison["rows"]] == ["local"]
    cell = comparison["rows"][0]["cells"]["cpu:multi"]
    assert cell["repeats"] == 3 and cell["note"] == "median of 3 runs"
    assert cell["spread"]["kind"] == "across runs" and cell["spread"]["n"] == 3
    values = sorted(next(r["value"] for r in run["results"] if r["metric"] == "multi") for run in document["runs"])
    assert cell["value"] == values[1]   # the median


def test_until_stable_on_local_stops_within_its_bounds(cli_env, capsys) -> None:
    # a generous target: three runs of one machine reach it, so the test stays short
    document = _run(capsys, "local", *SHORT_CPU, "--repeat", "until-stable", "--rse", "40", "--max-repeats", "4")
    ids = _check_group(document, "local", len(document["runs"]))
    group = document["repeats"][0]
    assert 3 <= len(ids) <= 4
    if group["stable"]:
        assert group["rse_percent"] < 40 and group["reason"].startswith(f"stable after {len(ids)} runs")
    else:
        assert len(ids) == 4 and group["reason"].startswith("not stable after 4 runs")


def test_repeat_and_until_stable_on_an_ssh_test_host(cli_env, ssh_host, capsys) -> None:
    assert main(["host", "add", ssh_host.name, "--address", ssh_host.address, "--port", str(ssh_host.port),
                 "--user", ssh_host.user, "--key", str(ssh_host.client_key_path)]) == 0
    assert main(["host", "trust", ssh_host.name, "--fingerprint",
                 ssh_keygen_fingerprint(ssh_host.host_key_path)]) == 0
    capsys.readouterr()
    _check_group(_run(capsys, ssh_host.name, *SHORT_CPU, "--repeat", "2"), ssh_host.name, 2)

    # until stable, in plain text: the progress names each run, the summary says how the repeats went
    assert main(["run", ssh_host.name, *SHORT_CPU, "--repeat", "until-stable", "--rse", "40",
                 "--max-repeats", "3"]) == 0
    captured = capsys.readouterr()
    assert f"{ssh_host.name}: 3 runs (#3, #4, #5): " in captured.out
    assert "stable after 3 runs" in captured.out or "not stable after 3 runs" in captured.out
    assert "run 1, until stable" in captured.err and "run 3 done" in captured.err


def test_repeat_usage_errors(cli_env, capsys) -> None:
    for args, said in ((["--repeat", "0"], "1-100"), (["--repeat", "often"], "until-stable"),
                       (["--repeat", "3", "--rse", "5"], "go with --repeat until-stable"),
                       (["--repeat", "until-stable", "--max-repeats", "1"], "most runs")):
        assert main(["run", "local", *SHORT_CPU, *args]) == 2
        assert said in capsys.readouterr().err
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []   # nothing ran


def test_three_runs_of_one_machine_compared_as_three_servers_name_no_winner(cli_env, workbench, capsys) -> None:
    """The issue's case: three "servers" that are one machine, tested at the same time, must not read as wins."""
    # one worker in both phases: three runs on this machine then compete alike whichever phase each is in
    request = RunRequest("local", "cpu", {"seconds": 2.0, "workers": 1}, interval=0.5)
    outcomes: list[RunOutcome] = []
    threads = [threading.Thread(target=lambda: outcomes.append(execute_run(workbench, request))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(o.status for o in outcomes) == ["done"] * 3
    ids = sorted(o.run_id for o in outcomes)
    assert main(["compare", *map(str, ids), "--json"]) == 0
    comparison = _json_out(capsys)
    assert len(comparison["rows"]) == 3
    for row in comparison["rows"]:
        for key in ("cpu:single", "cpu:multi"):
            cell = row["cells"][key]
            figures = [(r["cells"][key]["value"], r["cells"][key].get("verdict")) for r in comparison["rows"]]
            assert not cell["best"] and cell["verdict_kind"] in ("reference", "tie", "cant_tell"), (key, figures)
    # single runs: the CPU figure's noise floor stands in for the run-to-run variation, and says so
    assert {s["verdict"] for s in comparison["standings"]} <= {"reference", "tie", "cant_tell"}
    assert {s["basis"] for s in comparison["standings"]} == {"noise_floor"}
    assert comparison["winners"] and all("ahead of" not in line and "x of " not in line
                                         for line in comparison["winners"])

    table = io.StringIO()
    assert main(["compare", *map(str, ids)]) == 0
    out = capsys.readouterr().out
    table.write(out)
    assert "*" not in out.split("\n\n")[0] and "ahead of" not in out and "x of " not in out
    assert "A server is named ahead (or behind) only when" in out

    path = cli_env["home"] / "three.csv"
    assert main(["compare", *map(str, ids), "--csv", str(path)]) == 0
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert {row["CPU all cores verdict"] for row in rows} <= {"reference", "tie", "cant_tell"}
    assert {row["best in"] for row in rows} == {""}

    # the PDF a customer keeps says the same: no winner in its headline lines nor in its tables
    pdf = cli_env["home"] / "three.pdf"
    assert main(["compare", *map(str, ids), "--pdf", str(pdf)]) == 0
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(str(pdf)).pages)
    assert "ahead of" not in text and "x of " not in text
    outcome = text.split("CPU all cores: local", 1)[1].partition("Summary")[0]
    assert outcome.count("local run ") >= 2 and ("can't tell yet vs" in outcome or "tie with" in outcome)
