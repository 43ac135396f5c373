"""Host groups: tags given with `benchbay host add/edit --tag`, and @TAG wherever hosts are named."""
from __future__ import annotations

import json

import pytest

from app.cli import main
from app.cli.common import UsageError, expand_hosts
from app.engine.hosts_map import host_groups
from app.summary.many_hosts import outcome_lines
from remote.hostspec import HostSpec
from storage.records import RunStatus


class _Inventory:
    def __init__(self, *specs: HostSpec) -> None:
        self.specs = list(specs)

    def list_hosts(self) -> list[HostSpec]:
        return self.specs


RACKS = _Inventory(HostSpec("a1", tags=("rack1",)), HostSpec("a2", tags=("rack1", "db")),
                   HostSpec("b1", tags=("Rack2",)), HostSpec("b2", tags=("rack10",)), HostSpec("lonely"))


def test_a_tag_names_every_host_carrying_it_each_host_once_in_the_order_given() -> None:
    assert expand_hosts(RACKS, ["@rack1"]) == ["a1", "a2"]
    assert expand_hosts(RACKS, ["lonely", "@db", "@rack1", "a1"]) == ["lonely", "a2", "a1"]
    assert expand_hosts(RACKS, ["@rack2"]) == ["b1"]          # as the user typed it, whatever the case
    assert expand_hosts(RACKS, ["not-in-inventory"]) == ["not-in-inventory"]   # the command says what to do
    assert host_groups(RACKS.list_hosts()) == {"db": ["a2"], "rack1": ["a1", "a2"], "Rack2": ["b1"],
                                               "rack10": ["b2"]}
    assert list(host_groups(RACKS.list_hosts())) == ["db", "rack1", "Rack2", "rack10"]   # rack2 before rack10


@pytest.mark.parametrize(("given", "said"), [
    (["@rack3"], "no host has the tag 'rack3': tag hosts with `benchbay host edit NAME --tag rack3` (tags in use: "),
    (["@"], "@: invalid tag ''"),
    (["@a b"], "invalid tag 'a b'"),
])
def test_a_tag_nobody_has_is_refused_with_what_to_do(given: list[str], said: str) -> None:
    with pytest.raises(UsageError) as refused:
        expand_hosts(RACKS, given)
    assert said in str(refused.value)


def test_host_add_and_edit_take_tags_and_run_picks_the_group(cli_env, capsys) -> None:
    assert main(["host", "add", "web1", "--address", "192.0.2.1", "--tag", "rack3", "--tag", "@web"]) == 0
    assert main(["host", "add", "web2", "--address", "192.0.2.2", "--tag", "rack3"]) == 0
    assert main(["host", "edit", "web1", "--untag", "WEB", "--tag", "front"]) == 0
    assert main(["host", "edit", "web2", "--tag", "rack3"]) == 0            # already there: once
    capsys.readouterr()
    assert main(["host", "list", "--json"]) == 0
    tags = {h["name"]: h["tags"] for h in json.loads(capsys.readouterr().out)}
    assert tags == {"local": [], "web1": ["rack3", "front"], "web2": ["rack3"]}
    assert main(["host", "list"]) == 0
    assert "rack3,front" in capsys.readouterr().out

    assert main(["host", "edit", "web1", "--tag", "bad tag!"]) == 2
    assert "--tag: invalid tag 'bad tag!'" in capsys.readouterr().err

    # a group nobody is in: refused before anything connects
    assert main(["run", "@rack9", "--test", "idle"]) == 2
    assert "no host has the tag 'rack9'" in capsys.readouterr().err


def test_the_end_of_a_many_hosts_run_says_how_many_ended_how_and_why_each_failure() -> None:
    rows = [{"host": "h1", "status": RunStatus.DONE, "error": "", "run_id": 1},
            {"host": "host-two", "status": RunStatus.FAILED, "error": "command did not finish\nmore", "run_id": 2},
            {"host": "h3", "status": RunStatus.FAILED, "error": "no SSH banner", "run_id": None},
            {"host": "h4", "status": RunStatus.CANCELLED, "error": "", "run_id": 4}]
    assert outcome_lines(rows) == [
        "4 hosts: 1 done, 2 failed, 1 cancelled",
        "  host-two  failed (run 2): command did not finish",
        "  h3        failed (not stored): no SSH banner",
        "  h4        cancelled (run 4): no reason given",
    ]
