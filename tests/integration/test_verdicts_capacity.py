"""Verdicts on servers whose capacity really differs, through the real command line (`benchbay run`, `benchbay
compare --json`) on the capacity test hosts (tests.fixtures.capacity_hosts):

- identical twins, three single runs each, every pairing of a twin-a run with a twin-b run on the CPU and disk
  figures (throughput and p99): no figure names a winner ("ahead" or "behind");
- half a CPU against a whole one: behind in every comparison of repeats, in at least 9 of 10 of single runs;
- the disk throttled to 1000 IOPS against the twins' 3000-IOPS disk, three runs each: behind every time, its factor
  inside the range the runs themselves span.

The verdicts are read from the comparison's "standings" (one per headline figure and row: verdict, factor
against the reference, lo-hi; the other figures' cells carry the same fields). Every host runs its tests as
`--repeat 3` once; a single-run comparison takes one run of a group alone (a lone run of a group is a row of
one run). The same comparisons are also read with the cells' starred best (before the standings, the only
verdict: a sole winner starred, else a tie) and the errors of both are printed as a table.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.catalogue import CATALOGUE
from app.cli import main
from app.compare.noise_floors import floor_for
from tests.fixtures.capacity_hosts import CapacityHosts
from tests.fixtures.store import write_settings

# the runs are made once for the module (18 short runs, one host at a time): the first test's set-up holds them
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

# short runs: the figures of a few seconds each, as a user trying Benchbay out would run them
CPU_ARGS = ["--test", "cpu", "--set", "seconds=3"]
DISK_ARGS = ["--test", "disk", "--set", "tests=randread_4k,syncwrite_4k", "--set", "runtime=3",
             "--set", "warmup=1", "--set", "file_size=64M"]
FIGURES = {"cpu": ("cpu:single", "cpu:multi"),
           "disk": ("disk:randread_4k.iops", "disk:randread_4k.lat_p99", "disk:syncwrite_4k.iops",
                    "disk:syncwrite_4k.lat_p99")}
RUNS = {"cpu": ("twin-a", "twin-b", "half"), "disk": ("twin-a", "twin-b", "iops")}
WAITING = ("`benchbay compare --json` has no \"standings\" yet: these verdict tests run once the comparison "
           "names a verdict per headline figure and server")

TWINS, HALF_SINGLE, HALF_REPEATS, IOPS_REPEATS = (
    "identical twins, single runs", "half vs whole CPU, single runs", "half vs whole CPU, 3 runs each",
    "1000 IOPS vs 3000 IOPS, 3 runs each")


@dataclass
class Judgement:
    """One figure of one comparison, read with the new standings and with the older fields."""

    kind: str
    figure: str
    row: str                         # the row judged: the twin-b, half or iops one
    reference: str                   # the other row (the baseline where one was given)
    old: str                         # the starred best: "win" (the reference), "wrong" (the judged row), "none"
    standing: dict | None            # the judged row's standing; None while the comparison has none
    all_standings: list[dict] = field(default_factory=list)
    factor_range: tuple[float, float] = (0.0, 0.0)   # what the runs span, "times as good", judged / reference


@dataclass
class Measured:
    ids: dict[tuple[str, str], list[int]]             # (host, test) -> the 3 run ids of its group
    values: dict[tuple[str, str], dict[str, list[float]]]
    judgements: list[Judgement]
    has_standings: bool


def _cli(*args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--json"])
    assert code == 0, f"benchbay {' '.join(args)} exited {code}: {err.getvalue()[-2000:]}"
    text = out.getvalue()
    return json.loads(text[text.index("{"):])


def _times_as_good(figure: str, mine: float, theirs: float) -> float:
    higher = CATALOGUE.metric(figure).higher_is_better
    return mine / theirs if higher else theirs / mine


def _span(figure: str, mine: list[float], theirs: list[float]) -> tuple[float, float]:
    ratios = [_times_as_good(figure, a, b) for a in mine for b in theirs]
    return min(ratios), max(ratios)


def _standings(document: dict[str, Any], figure: str) -> list[dict] | None:
    """Every row's standing on `figure`; None while the comparison has no standings. A figure that is not a
    test's headline (single core, p99) has no entry in "standings": its cells carry the same verdict fields."""
    standings = document.get("standings")
    if standings is None:
        return None
    found = [s for s in standings if s.get("figure") == figure]
    if found:
        return found
    return [{"figure": figure, "row": row["label"], "run_ids": row["run_ids"], "verdict": cell["verdict_kind"],
             **{key: cell.get(key) for key in ("factor", "lo", "hi", "against", "settle", "basis")}}
            for row in document["rows"] for cell in [row["cells"].get(figure) or {}] if cell.get("verdict_kind")]


def _judge(kind: str, figures: tuple[str, ...], judged: tuple[str, list[int]], reference: tuple[str, list[int]],
           values: dict[int, dict[str, float]], baseline: bool) -> list[Judgement]:
    """Compare the runs of `judged` with those of `reference` (its first run the baseline when asked)."""
    ids = [*reference[1], *judged[1]]
    extra = ["--baseline", str(reference[1][0])] if baseline else []
    document = _cli("compare", *map(str, ids), *extra)
    rows = {row["label"]: row for row in document["rows"]}
    assert set(rows) == {judged[0], reference[0]}, list(rows)
    out = []
    for figure in figures:
        cells = {label: row["cells"].get(figure) for label, row in rows.items()}
        assert all(cells.values()), f"{kind}: {figure} missing from {ids}"
        starred = [label for label, cell in cells.items() if cell.get("best")]
        old = "win" if starred == [reference[0]] else "wrong" if starred == [judged[0]] else "none"
        mine = _standings(document, figure)
        standing = next((s for s in mine or [] if s.get("row") == judged[0]), None)
        if mine is not None:
            assert standing is not None, f"{kind}: no standing of {judged[0]} on {figure}: {mine}"
        out.append(Judgement(kind, figure, judged[0], reference[0], old, standing, mine or [],
                             _span(figure, [values[i][figure] for i in judged[1]],
                                   [values[i][figure] for i in reference[1]])))
    return out


@pytest.fixture(scope="module")
def measured(capacity_hosts: CapacityHosts, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Measured]:
    root = tmp_path_factory.mktemp("verdicts")
    home, ssh = root / "home", root / "dot-ssh"
    home.mkdir()
    ssh.mkdir(mode=0o700)
    (ssh / "config").write_text("")
    (ssh / "known_hosts").write_text("")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHBAY_HOME", str(home))
        patch.setenv("BENCHBAY_DB", f"sqlite:///{root / 'store.sqlite3'}")
        write_settings(home, ssh_config=str(ssh / "config"), user_known_hosts=str(ssh / "known_hosts"))
        for host in capacity_hosts.hosts.values():
            for args in (host.host_add_args(), host.host_trust_args()):
                with contextlib.redirect_stdout(io.StringIO()):
                    assert main(args) == 0, args

        ids: dict[tuple[str, str], list[int]] = {}
        values: dict[tuple[str, str], dict[str, list[float]]] = {}
        by_run: dict[int, dict[str, float]] = {}
        for test, hosts in RUNS.items():
            for name in hosts:   # one host at a time: the hosts' capacity is theirs alone
                document = _cli("run", name, *(CPU_ARGS if test == "cpu" else DISK_ARGS), "--repeat", "3")
                assert [r["status"] for r in document["runs"]] == ["done"] * 3, document["runs"]
                ids[(name, test)] = [r["run_id"] for r in document["runs"]]
                for run in document["runs"]:
                    stored = {f"{r['test']}:{r['metric']}": r["value"] for r in run["results"]}
                    by_run[run["run_id"]] = {figure: stored[figure] for figure in FIGURES[test]}
                values[(name, test)] = {figure: [by_run[i][figure] for i in ids[(name, test)]]
                                        for figure in FIGURES[test]}

        judgements: list[Judgement] = []
        for test in ("cpu", "disk"):
            for a in ids[("twin-a", test)]:
                for b in ids[("twin-b", test)]:
                    judgements += _judge(TWINS, FIGURES[test], ("twin-b", [b]), ("twin-a", [a]), by_run, False)
        for half in ids[("half", "cpu")]:
            for whole in (*ids[("twin-a", "cpu")], *ids[("twin-b", "cpu")]):
                whole_host = "twin-a" if whole in ids[("twin-a", "cpu")] else "twin-b"
                judgements += _judge(HALF_SINGLE, FIGURES["cpu"], ("half", [half]), (whole_host, [whole]), by_run,
                                     True)
        for twin in ("twin-a", "twin-b"):
            judgements += _judge(HALF_REPEATS, FIGURES["cpu"], ("half", ids[("half", "cpu")]),
                                 (twin, ids[(twin, "cpu")]), by_run, True)
            judgements += _judge(IOPS_REPEATS, FIGURES["disk"], ("iops", ids[("iops", "disk")]),
                                 (twin, ids[(twin, "disk")]), by_run, True)
        has = all(j.standing is not None for j in judgements)
        yield Measured(ids, values, judgements, has)


def _of(measured: Measured, kind: str) -> list[Judgement]:
    found = [j for j in measured.judgements if j.kind == kind]
    assert found, kind
    if not measured.has_standings:
        pytest.skip(WAITING)
    return found


def _describe(j: Judgement) -> str:
    s = j.standing or {}
    return (f"{j.row} vs {j.reference} {j.figure}: {s.get('verdict')} factor {s.get('factor')} "
            f"({s.get('lo')}-{s.get('hi')}), runs span {j.factor_range[0]:.3g}-{j.factor_range[1]:.3g}")


def test_the_hosts_differ_as_they_were_set(measured: Measured) -> None:
    """Before any verdict: the runs show the capacity the cgroups give (else the verdict tests mean nothing)."""
    median = {key: {f: statistics.median(v) for f, v in figures.items()} for key, figures in measured.values.items()}
    for figure in FIGURES["cpu"]:
        for twin in ("twin-a", "twin-b"):
            assert median[("half", "cpu")][figure] < 0.8 * median[(twin, "cpu")][figure], (figure, median)
    for figure in ("disk:randread_4k.iops", "disk:syncwrite_4k.iops"):
        assert median[("iops", "disk")][figure] <= 1100 < median[("twin-a", "disk")][figure], (figure, median)


def test_identical_twins_never_name_a_winner(measured: Measured) -> None:
    twins = _of(measured, TWINS)
    assert len(twins) >= 30
    for figure in (*FIGURES["cpu"], *FIGURES["disk"]):
        assert any(j.figure == figure for j in twins), figure
    named = [_describe(j) for j in twins
             if any(s.get("verdict") in ("ahead", "behind") for s in j.all_standings)]
    assert named == [], f"{len(named)} of {len(twins)} comparisons of identical hosts named a winner"
    for j in twins:   # one of the two is the reference (the leader), the other ties or cannot tell
        assert sorted(s["verdict"] for s in j.all_standings) in (["reference", "tie"], ["cant_tell", "reference"]), \
            _describe(j)


def test_half_a_cpu_is_behind_a_whole_one_in_nine_of_ten_single_runs(measured: Measured) -> None:
    singles = _of(measured, HALF_SINGLE)
    assert len(singles) >= 10
    verdicts = [j.standing["verdict"] for j in singles]
    assert "ahead" not in verdicts, [_describe(j) for j in singles if j.standing["verdict"] == "ahead"]
    assert verdicts.count("behind") >= 0.9 * len(singles), [_describe(j) for j in singles
                                                             if j.standing["verdict"] != "behind"]
    for j in singles:
        if j.standing["verdict"] == "behind":
            assert j.standing["factor"] < 1 and j.standing["against"] == j.reference, _describe(j)


def _inside(factor: float, span: tuple[float, float]) -> bool:
    """Within what the runs span, give or take float rounding (a throttled disk repeats to the last digit)."""
    slack = 1e-9 * max(abs(span[0]), abs(span[1]))
    return span[0] - slack <= factor <= span[1] + slack


def _honest_tie(j: Judgement) -> bool:
    """A tie says the two differ by less than ±z: true of these runs when every pairing of them does (a tie
    claimed while one pairing shows a larger difference, or without a range, is not)."""
    s = j.standing
    if s["verdict"] != "tie" or not s.get("lo") or not s.get("hi"):
        return False
    bound = max(s["hi"], 1.0 / s["lo"])    # 1 + z, as a factor either way
    return _inside(j.factor_range[0], (1.0 / bound, bound)) and _inside(j.factor_range[1], (1.0 / bound, bound))


def test_half_a_cpu_is_behind_a_whole_one_with_repeats(measured: Measured) -> None:
    for j in _of(measured, HALF_REPEATS):
        assert j.standing["verdict"] == "behind", _describe(j)
        assert j.standing["lo"] <= j.standing["factor"] <= j.standing["hi"] < 1, _describe(j)
        assert _inside(j.standing["factor"], j.factor_range), _describe(j)


def test_the_1000_iops_disk_is_behind_the_3000_iops_one_with_repeats(measured: Measured) -> None:
    """Its throughput is behind every time its runs are all behind the other's by more than the figure's noise
    floor (the threshold a difference of repeats must clear: three runs of identical hosts are all apart 1 time
    in 10 by chance), with the factor inside what the runs span; closer than that (a sync write waits on the
    host's writeback: on a busy machine a 3000-IOPS disk's runs fell to 1.6x of the throttled one's) it is
    behind or can't tell, never a tie or ahead; a tail latency (its p99 jumps from run to run, and so does its
    noise floor) may be can't tell, or a tie when every pairing of runs lies within the
    tie's ±z (the throttle need not reach a tail set by writeback), but is never the wrong way round."""
    judged = _of(measured, IOPS_REPEATS)
    throughput = {"disk:randread_4k.iops", "disk:syncwrite_4k.iops"}
    assert {j.figure for j in judged if j.factor_range[1] < 1} >= throughput
    # a throttle of a third: apart beyond the floor at least on the steadier figure, so the verdict is tested
    assert any(j.factor_range[1] < math.exp(-floor_for(j.figure).log_sd) for j in judged if j.figure in throughput)
    for j in judged:
        if j.figure not in throughput or j.factor_range[1] >= 1:
            assert j.standing["verdict"] in ("behind", "cant_tell") or _honest_tie(j), _describe(j)
            continue
        if j.factor_range[1] > math.exp(-floor_for(j.figure).log_sd):
            assert j.standing["verdict"] in ("behind", "cant_tell"), _describe(j)
            continue
        assert j.standing["verdict"] == "behind", _describe(j)
        assert j.standing["against"] == j.reference, _describe(j)
        assert j.standing["lo"] <= j.standing["factor"] <= j.standing["hi"] < 1, _describe(j)
        assert _inside(j.standing["factor"], j.factor_range), _describe(j)


def _wrong(j: Judgement, new: bool) -> bool | None:
    """A false win among twins, or a difference missed (or reversed) between the others."""
    if new:
        if j.standing is None:
            return None
        verdict = j.standing.get("verdict")
        if j.kind == TWINS:
            return any(s.get("verdict") in ("ahead", "behind") for s in j.all_standings)
        return verdict != "behind"
    if j.kind == TWINS:
        return j.old != "none"
    return j.old != "win"


def _part(j: Judgement) -> str:
    """The table's row: the twins split by test and by throughput or tail latency."""
    if j.kind != TWINS:
        return j.kind
    test = j.figure.partition(":")[0]
    return f"{j.kind}: {test}" + (" p99" if "p99" in j.figure else "" if test == "cpu" else " throughput")


def verdict_table(judgements: list[Judgement]) -> list[str]:
    lines = [f"{'comparison':<48}{'n':>4}  {'runs apart':>10}  {'starred best / tie wrong':>26}  "
             f"{'standings wrong':>20}"]
    parts = list(dict.fromkeys(_part(j) for j in judgements))
    for part in (*parts, TWINS):   # then all the twins' comparisons together
        some = [j for j in judgements if _part(j) == part or (part == TWINS and j.kind == TWINS)]
        if part == TWINS:
            part = f"{TWINS}: all"
        old = sum(bool(_wrong(j, False)) for j in some)
        new = [_wrong(j, True) for j in some]
        what = "false wins" if some[0].kind == TWINS else "missed"
        new_text = "-" if any(w is None for w in new) else f"{sum(new)} of {len(some)} {what}"
        apart = "-" if some[0].kind == TWINS else str(sum(j.factor_range[1] < 1 for j in some))
        lines.append(f"{part:<48}{len(some):>4}  {apart:>10}  {f'{old} of {len(some)} {what}':>26}  {new_text:>20}")
    return lines


def test_print_the_error_table(measured: Measured, capsys: pytest.CaptureFixture) -> None:
    """The closing note's table: per comparison, how many the cells' starred best (else a tie) and the standings
    get wrong ("runs apart": in how many every run of one side was behind every run of the other). Also written
    to BENCHBAY_VERDICT_TABLE when that names a file."""
    lines = verdict_table(measured.judgements)
    kinds = {j.kind for j in measured.judgements}
    assert kinds == {TWINS, HALF_SINGLE, HALF_REPEATS, IOPS_REPEATS}
    assert sum(j.kind == TWINS for j in measured.judgements) >= 30
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    target = os.environ.get("BENCHBAY_VERDICT_TABLE")
    if target:
        Path(target).write_text("\n".join(lines) + "\n")


def test_a_tie_passes_only_when_every_pairing_of_runs_lies_within_it() -> None:
    def tie(lo: float, hi: float, span: tuple[float, float]) -> Judgement:
        standing = {"verdict": "tie", "factor": (lo * hi) ** 0.5, "lo": lo, "hi": hi}
        return Judgement(IOPS_REPEATS, "disk:syncwrite_4k.lat_p99", "iops", "twin-a", "none", standing, [standing],
                         span)

    assert _honest_tie(tie(0.86, 1.09, (0.86, 1.09)))          # the runs overlap, all within ±16 %
    assert not _honest_tie(tie(0.86, 1.09, (0.55, 1.09)))      # one pairing 1.8x apart: no tie
    assert not _honest_tie(Judgement(IOPS_REPEATS, "disk:syncwrite_4k.lat_p99", "iops", "twin-a", "none",
                                     {"verdict": "ahead", "lo": 1.1, "hi": 1.2}, [], (1.1, 1.2)))
