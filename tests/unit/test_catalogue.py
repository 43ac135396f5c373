"""The test catalogue agrees with the agent: presets exactly where the agent takes one, in the window and on
the command line; every preset and default validates; every label and compared figure names what the agent runs."""
from __future__ import annotations

import argparse
import re

import pytest

from app.catalogue import CATALOGUE, build_catalogue
from app.catalogue import presentation as shown
from app.catalogue.build import CatalogueError
from app.cli import run as cli_run
from remote.agent import benches
from widgets.run_dialog import RunDialog


class _Reached(Exception):
    """The command went past its argument checks and asked the workbench for something."""


class _NoWorkbench:
    def __getattr__(self, name: str) -> None:
        raise _Reached(name)


def _cli_presets(test: str) -> set[str]:
    """The presets `benchbay run --test TEST --preset P` lets through to the agent."""
    parser = argparse.ArgumentParser()
    cli_run.add_parser(parser.add_subparsers())
    accepted = set()
    for preset in cli_run.PRESETS:
        args = parser.parse_args(["run", "h", "--test", test, "--preset", preset])
        try:
            args.handler(_NoWorkbench(), args)   # a refused preset stops before the workbench is used
        except cli_run.UsageError as exc:
            assert str(exc) == f"the {test} test has no presets"
        except _Reached:   # got past the checks: the preset was accepted
            accepted.add(preset)
    return accepted


def _window_presets(dialog: RunDialog, test: str) -> set[str]:
    if test not in dialog.tests:   # a test the dialog has no form for offers no preset there
        return set()
    dialog.set_test(test)
    if not dialog.preset_combo.isEnabled():
        return set()
    return {dialog.preset_combo.itemData(i) for i in range(dialog.preset_combo.count())}


@pytest.mark.gui
@pytest.mark.parametrize("test", benches.names())
def test_window_and_command_line_offer_the_presets_the_agent_accepts(qtbot, test: str) -> None:
    agent = set(benches.describe(test)["presets"])
    assert bool(agent) == benches.accepts_preset(test)
    dialog = RunDialog(["local"], ["local"], tests=CATALOGUE.runnable(), validate=CATALOGUE.validate)
    qtbot.addWidget(dialog)
    assert _window_presets(dialog, test) == agent
    assert _cli_presets(test) == agent
    assert set(CATALOGUE.test(test).preset_names) == agent


@pytest.mark.parametrize("test", benches.names())
def test_every_preset_validates_and_a_test_without_presets_refuses_one(test: str) -> None:
    kind = CATALOGUE.test(test)
    for preset in kind.presets:
        assert benches.validate(test, {"preset": preset.name})["preset"] == preset.name
        for name in preset.values:
            kind.param(name)   # a preset sets only parameters the agent knows
    if kind.has_presets:   # the quick preset is quicker
        assert kind.expected_seconds({"preset": "quick"}) < kind.expected_seconds({"preset": "full"})
    else:
        with pytest.raises(ValueError, match="unknown parameter"):
            benches.validate(test, {"preset": "quick"})


@pytest.mark.parametrize("test", benches.names())
def test_every_parameter_default_validates(test: str) -> None:
    kind = CATALOGUE.test(test)
    defaults = {p.name: p.default for p in kind.params if p.default is not None and not p.secret}
    checked = benches.validate(test, defaults)
    assert kind.expected_seconds(defaults) > 0
    for param in kind.params:
        if param.low is not None and isinstance(checked.get(param.name), (int, float)):
            assert param.low <= checked[param.name] <= param.high


def test_compared_figures_and_job_labels_name_what_the_agent_reports() -> None:
    for item in CATALOGUE.compared_metrics():
        if item.derived:   # computed from several results (a test the agent may not carry yet: dbload)
            continue
        kind = CATALOGUE.test(item.test)
        patterns = [(re.compile(".+".join(map(re.escape, re.split(r"\{[a-z_]+\}", t))) + "$"), unit)
                    for t, unit in kind.results]
        assert any(p.match(item.metric) and unit == item.unit for p, unit in patterns), item.key
    disk_jobs = {job.job for job in CATALOGUE.test("disk").jobs if not job.series}
    assert set(CATALOGUE.job_labels) == disk_jobs
    assert CATALOGUE.secret_params() == tuple(sorted(benches.SECRET_PARAMS))


def test_a_presentation_that_names_what_the_agent_lacks_is_refused(monkeypatch) -> None:
    monkeypatch.setitem(shown.JOB_LABELS, "randread_8k", "Random read 8 KiB")
    with pytest.raises(CatalogueError, match="randread_8k"):
        build_catalogue()
    monkeypatch.delitem(shown.JOB_LABELS, "randread_8k")
    monkeypatch.setitem(shown.PRESET_SUMMARIES, "idle", {"quick": lambda _values: "short"})
    with pytest.raises(CatalogueError, match="idle"):
        build_catalogue()


def test_a_test_the_agent_does_not_carry_yet_is_left_out_but_still_compared(monkeypatch) -> None:
    monkeypatch.setattr(benches, "BENCHES", {k: v for k, v in benches.BENCHES.items() if k != "dbload"})
    built = build_catalogue()
    assert "dbload" not in built.tests and "dbload" not in [t.name for t in built.runnable()]
    assert "dbload:best.ops_per_s" in {m.key for m in built.compared_metrics()}
    assert built.label("dbload") == "Database load"
    monkeypatch.setattr(shown, "AGENT_OPTIONAL", frozenset())
    with pytest.raises(CatalogueError, match="dbload"):
        build_catalogue()
