"""The run dialog's database load form: the agent's parameter names from the fields, per engine; the password
goes to the agent's parameters only, never to the dialog's display."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from app.catalogue import CATALOGUE
from app.catalogue.model import ParamSpec
from widgets.run_dialog import RunDialog

pytestmark = pytest.mark.gui


@dataclass(frozen=True)
class StandIn:
    """The test as the contract describes it, for an agent that does not define it yet."""

    name: str = "dbload"
    menu_label: str = "Database load (PostgreSQL, MySQL, Redis)"
    presets: tuple = ()
    jobs: tuple = ()

    def param(self, name: str) -> ParamSpec:
        defaults = {"clients": "1,2,4,8,16", "step_seconds": 10, "get_ratio": 0.9}
        if name not in defaults and name not in ("target", "user", "value_size", "pipeline"):
            raise KeyError(name)
        return ParamSpec(name, "text", defaults.get(name), 1 if name == "step_seconds" else None,
                         3600 if name == "step_seconds" else None)


@pytest.fixture
def dialog(qtbot):
    checked: list[tuple[str, dict[str, Any]]] = []

    def validate(test: str, params: dict[str, Any]) -> dict:
        checked.append((test, dict(params)))
        return params if test == "dbload" else CATALOGUE.validate(test, params)
    dlg = RunDialog(["local", "db1"], ["db1"], tests=[*CATALOGUE.runnable(), StandIn()], validate=validate)
    qtbot.addWidget(dlg)
    dlg.checked = checked
    return dlg


def test_postgresql_sweep_with_a_password_and_a_p99_limit(dialog) -> None:
    dialog.set_test("dbload")
    form = dialog.dbload_form
    assert form is not None and form.isVisibleTo(dialog)
    assert not dialog.validate() and "ADDR:PORT" in dialog.error_label.text()
    form.target.setText("10.0.0.5:5432")
    form.clients.setText("1, 2, 4, 8")
    form.p99_limit.setValue(200)
    form.password.setText("s3cret")
    form.workload.setCurrentIndex(form.workload.findData("select-only"))
    assert dialog.validate()
    choice = dialog.choice()
    assert choice.test == "dbload" and choice.hosts == ["db1"]
    assert choice.params == {"engine": "postgresql", "target": "10.0.0.5:5432", "tool": "auto",
                             "workload": "select-only", "data": "fits", "clients": "1,2,4,8", "step_seconds": 10,
                             "p99_limit_ms": 200.0, "password": "s3cret"}
    assert form.password.echoMode() == form.password.EchoMode.Password
    assert "s3cret" not in dialog.error_label.text()


def test_redis_offers_the_built_in_generator_and_its_mix(dialog) -> None:
    dialog.set_test("dbload")
    form = dialog.dbload_form
    form.engine.setCurrentIndex(form.engine.findData("redis"))
    assert [form.tool.itemData(i) for i in range(form.tool.count())] == ["auto", "redis-benchmark", "memtier",
                                                                           "builtin"]
    assert form.redis_row.isVisibleTo(form) and "6379" in form.target.placeholderText()
    form.target.setText("127.0.0.1:6379")
    form.tool.setCurrentIndex(form.tool.findData("builtin"))
    form.data.setCurrentIndex(form.data.findData("scale"))
    form.scale.setValue(100000)
    form.rate.setValue(2000)
    params = dialog.choice().params
    assert params["tool"] == "builtin" and params["data"] == "scale=100000" and params["rate"] == 2000
    assert params["get_ratio"] == 0.9 and params["pipeline"] == 1 and "password" not in params


def test_a_pgbench_script_must_be_an_absolute_path(dialog) -> None:
    dialog.set_test("dbload")
    form = dialog.dbload_form
    form.target.setText("db:5432")
    form.workload.setCurrentIndex(form.workload.findData("script"))
    assert form.script.isVisibleTo(form)
    form.script.setText("bench.sql")
    assert not dialog.validate() and "absolute path" in dialog.error_label.text()
    form.script.setText("/srv/bench.sql")
    assert dialog.choice().params["workload"] == "script:/srv/bench.sql"


def test_without_the_test_in_the_agent_the_dialog_has_no_such_form(qtbot) -> None:
    dlg = RunDialog(["local"], ["local"], tests=CATALOGUE.runnable(), validate=CATALOGUE.validate)
    qtbot.addWidget(dlg)
    offered = "dbload" in CATALOGUE.tests
    assert (dlg.test_combo.findData("dbload") >= 0) == offered and (dlg.dbload_form is not None) == offered


def test_pgbench_tries_per_transaction_are_checked_as_the_cli_checks_max_tries(qtbot) -> None:
    dlg = RunDialog(["local", "db1"], ["db1"], tests=CATALOGUE.runnable(), validate=CATALOGUE.validate)
    qtbot.addWidget(dlg)
    dlg.set_test("dbload")
    form = dlg.dbload_form
    spec = CATALOGUE.test("dbload").param("max_tries")
    # the field's limits and default are the agent's, as `--set max_tries=` takes them
    assert (form.max_tries.minimum(), form.max_tries.maximum(), form.max_tries.value()) == (spec.low, spec.high,
                                                                                            spec.default)
    form.target.setText("10.0.0.5:5432")
    assert form.max_tries.isVisibleTo(dlg) and "max_tries" not in dlg.choice().params   # 1: pgbench's own
    form.max_tries.setValue(5)
    assert dlg.validate() and dlg.choice().params["max_tries"] == 5
    form.max_tries.setValue(0)
    assert form.max_tries.text() == "until the step ends"
    assert dlg.validate() and dlg.choice().params["max_tries"] == 0
    # only pgbench retries: the field goes away with PostgreSQL, and the CLI refuses it for the others
    form.engine.setCurrentIndex(form.engine.findData("mysql"))
    form.target.setText("10.0.0.5:3306")
    assert not form.max_tries.isVisibleTo(dlg)
    assert dlg.validate() and "max_tries" not in dlg.choice().params
    with pytest.raises(ValueError, match="max_tries is pgbench's"):
        CATALOGUE.validate("dbload", dict(dlg.choice().params, max_tries=5))
