"""One resolver asked from two hosts: the same Unbound (tests/fixtures/dns_servers.py) from two sshd test hosts,
compared. A line per host and pass, named by the host; the verdicts on p50, p99 and timeouts by the comparison's
rules; the same lines in `compare --json`, the CSV and the PDF."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.compare.dns import dns_comparison
from app.compare.model import load_inputs
from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.dns_query_list import build_query_list
from tests.fixtures.dns_servers import Resolvers
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration
pypdf = pytest.importorskip("pypdf")


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def test_one_resolver_from_two_hosts_is_compared_host_by_host(
        workbench, cli_env, ssh_hosts, dns_resolvers: Resolvers, tmp_path: Path, capsys) -> None:
    names = build_query_list(total=1000, missing=40, slow=4, servfail=4, big=4, lost=2)
    listing = names.write(tmp_path / "queries.txt")
    unbound = dns_resolvers.unbound.spec
    ids, hosts = [], [_add(workbench, host) for host in ssh_hosts]
    for host in hosts:
        request = RunRequest(host, "dns", {"resolvers": unbound, "queries": str(listing), "passes": "cold,warm",
                                           "in_flight": 20, "timeouts": "1,2"}, interval=1.0)
        outcome = execute_run(workbench, request, RunControl())
        assert (outcome.status, outcome.error) == ("done", "")
        ids.append(outcome.run_id)

    inputs = load_inputs(workbench, ids)
    found = dns_comparison(((run.record.id, run.record.host_name, run.results) for run in inputs),
                           {run.record.id: run.record.started_at for run in inputs})
    assert found.passes == ["cold", "warm"]
    # the second host's cold pass came after the first host had filled Unbound's cache: said, not hidden
    notes = {(line.label, line.pass_): line.note for line in found.lines}
    assert notes.pop((hosts[1], "cold")).startswith(f"cold pass after {hosts[0]} (run {ids[0]}) had asked {unbound}")
    assert set(notes.values()) == {""}
    for pass_ in ("cold", "warm"):
        lines = found.of_pass(pass_)
        # named by the host: the resolver is the same on every line
        assert sorted(line.label for line in lines) == sorted(hosts)
        assert {line.resolver for line in lines} == {unbound}
        for line in lines:
            assert line.queries == 1000 and line.counts["answered"] + line.timeouts == 1000
            assert line.counts["nxdomain"] == len(names.missing)
        # the comparison's rules: a leader on each figure, the other line judged against it by name
        for figure in ("p50_ms", "p99_ms", "timeouts"):
            said = [line.verdicts[figure] for line in lines]
            leaders = [line.label for line in lines if line.verdicts[figure] == "leader"]
            assert len(leaders) == 1, (pass_, figure, said)
            other = next(line for line in lines if line.label != leaders[0])
            assert leaders[0] in other.verdicts[figure], (pass_, figure, said)

    # the same lines, the same numbers, in compare --json, the CSV and the PDF
    pdf, table = tmp_path / "hosts.pdf", tmp_path / "hosts.csv"
    assert main(["compare", *map(str, ids), "--json", "--csv", str(table), "--pdf", str(pdf)]) == 0
    document = json.loads(capsys.readouterr().out)
    by_json = {(x["label"], x["pass"]): x for x in document["dns_lines"]}
    dns_csv = table.read_text().partition("\n\n")[2]
    by_csv = {(r["dns line"], r["pass"]): r for r in csv.DictReader(io.StringIO(dns_csv))}
    assert set(by_json) == set(by_csv) == {(line.label, line.pass_) for line in found.lines}
    for line in found.lines:
        key = (line.label, line.pass_)
        assert by_json[key]["values"]["p99_ms"] == float(by_csv[key]["p99_ms"]) == line.latency["p99_ms"]
        assert by_json[key]["verdicts"] == {k: line.verdicts[k] for k in ("p50_ms", "p99_ms", "timeouts")}
        assert by_json[key]["note"] == (by_csv[key]["note"] or None) == (line.note or None)
    text = " ".join(" ".join(page.extract_text().split()) for page in pypdf.PdfReader(str(pdf)).pages)
    for host in hosts:
        assert f"{host}, cold" in text and f"{host}, warm" in text
    assert "Latency distribution of every query" in text
    assert f"Note: {hosts[1]}, cold pass after {hosts[0]}" in text
