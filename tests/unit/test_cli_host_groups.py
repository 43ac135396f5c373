"""@TAG where the command line takes host names: commands that can act on several take the group, those
that watch or change one host say so."""
from __future__ import annotations

import json
import threading
import time

import pytest

from app.cli import main
from app.workbench import FactsOutcome, Workbench
from remote.errors import RemoteError


@pytest.fixture
def rack(cli_env, capsys):
    for name in ("w1", "w2", "w3"):
        tag = ["--tag", "rack3"] if name != "w3" else []
        assert main(["host", "add", name, "--address", "192.0.2.10", *tag]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("argv", [
    ["monitor", "@rack3"],
    ["host", "edit", "@rack3", "--notes", "x"],
    ["host", "remove", "@rack3"],
    ["host", "trust", "@rack3"],
    ["host", "untrust", "@rack3"],
])
def test_single_host_commands_say_they_take_one_host(rack, capsys, argv) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"benchbay: {' '.join(argv[:-1] if argv[0] == 'monitor' else argv[:2])} takes one "
                          "host, not a group (@rack3): ") and len(err.splitlines()) == 1, err


def test_monitor_names_the_command_that_records_a_group(rack, capsys) -> None:
    assert main(["monitor", "@rack3"]) == 2
    assert "`benchbay run @rack3 --test idle`" in capsys.readouterr().err


def test_a_host_name_cannot_look_like_a_group(rack, capsys) -> None:
    assert main(["host", "add", "@rack4", "--address", "192.0.2.11"]) == 2
    assert "--tag rack4" in capsys.readouterr().err


def test_facts_of_a_group_go_on_past_a_failed_host(rack, capsys, monkeypatch) -> None:
    asked = []

    def gather(self, name, password=None, test_dir=None):
        asked.append(name)
        if name == "w2":
            raise RemoteError("192.0.2.10:22 refused the connection")
        return FactsOutcome(run_id=7, host=name, facts={"cpu_model": "Xeon"})

    monkeypatch.setattr(Workbench, "gather_facts", gather)
    assert main(["host", "facts", "@rack3", "w3", "--json"]) == 1
    captured = capsys.readouterr()
    assert sorted(asked) == ["w1", "w2", "w3"]
    assert json.loads(captured.out) == [
        {"host": "w1", "run_id": 7, "facts": {"cpu_model": "Xeon"}},
        {"host": "w2", "error": "192.0.2.10:22 refused the connection"},
        {"host": "w3", "run_id": 7, "facts": {"cpu_model": "Xeon"}},
    ]
    assert captured.err == "benchbay: w2: 192.0.2.10:22 refused the connection\n"
    assert main(["host", "facts", "@rack3"]) == 1
    out = capsys.readouterr().out
    assert "# facts of w1 (stored as run 7)" in out and out.rstrip().endswith("failed: w2")


def test_facts_of_a_group_are_gathered_at_once_and_said_in_order(rack, capsys, monkeypatch) -> None:
    together = threading.Barrier(3, timeout=10)   # one after the other, the first would wait here alone

    def gather(self, name, password=None, test_dir=None):
        together.wait()
        time.sleep({"w1": 0.3, "w2": 0.0, "w3": 0.1}[name])   # finishing in another order than named
        return FactsOutcome(run_id=int(name[1]), host=name, facts={"cpu_model": "Xeon"})

    monkeypatch.setattr(Workbench, "gather_facts", gather)
    assert main(["host", "facts", "w3", "@rack3"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("# facts of")] == [
        "# facts of w3 (stored as run 3)", "# facts of w1 (stored as run 1)", "# facts of w2 (stored as run 2)"]


def test_facts_of_an_unknown_group_name_the_tags_in_use(rack, capsys) -> None:
    assert main(["host", "facts", "@rack9"]) == 2
    assert "(tags in use: rack3)" in capsys.readouterr().err


def test_runs_of_a_group_newest_first(rack, workbench, capsys) -> None:
    made = {host: workbench.store.runs.create(host, "disk", {}) for host in ("w1", "w3", "w2", "local")}
    assert main(["runs", "list", "--host", "@rack3", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [made["w2"], made["w1"]]
    assert main(["runs", "list", "--host", "@rack3", "--host", "w3", "--limit", "2", "--json"]) == 0
    assert [r["host_name"] for r in json.loads(capsys.readouterr().out)] == ["w2", "w3"]
