"""`benchbay run` with the cpu test on `local`, and the arguments it refuses, as a user types them."""
from __future__ import annotations

import json

import pytest

from app.cli import main


@pytest.mark.parametrize("args, words", [
    (["run", "local", "--test", "cpu", "--set", "seconds=-1"], "seconds"),
    (["run", "local", "--test", "cpu", "--set", "workers=many"], "workers"),
    (["run", "local", "--test", "cpu", "--set", "colour=blue"], "unknown parameter(s) colour"),
    (["run", "local", "--test", "cpu", "--set", "seconds"], "--set needs KEY=VALUE"),
    (["run", "local", "--test", "cpu", "--preset", "full", "--set", "preset=quick"], "disagree"),
    (["run", "local", "--test", "idle", "--preset", "quick"], "the idle test has no presets"),
    (["run", "local", "--test", "mailstorm", "--preset", "full"], "the mailstorm test has no presets"),
    (["run", "local", "--test", "idle", "--set", "preset=quick"], "unknown parameter(s) preset"),
])
def test_bad_arguments_are_one_line_usage_errors(cli_env, capsys, args: list[str], words: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchbay: ") and len(err.strip().splitlines()) == 1 and words in err
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []   # nothing was started or stored


@pytest.mark.parametrize("args", [["--test", "teleport"], ["--test", "cpu", "--preset", "medium"]])
def test_unknown_test_or_preset_is_one_line_and_exit_2(cli_env, capsys, args: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "local", *args])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("benchbay: ") and len(err.strip().splitlines()) == 1 and "invalid choice" in err


def test_run_cpu_json_end_to_end(cli_env, capsys) -> None:
    assert main(["run", "local", "--test", "cpu", "--set", "seconds=0.3", "--json"]) == 0
    out, err = capsys.readouterr()
    [run] = json.loads(out)["runs"]
    assert (run["host"], run["status"], run["error"]) == ("local", "done", "")
    assert isinstance(run["run_id"], int)
    results = {r["metric"]: r for r in run["results"]}
    assert {"single", "multi", "scaling", "single.sha256", "multi.zlib_compress"} <= set(results)
    assert all(set(r) == {"test", "metric", "value", "unit", "metadata", "spread"} for r in run["results"])
    assert results["single"]["spread"]["kind"] == "within run" and results["single.sha256"]["spread"] is None
    assert results["single"]["unit"] == "ops/s" and results["scaling"]["value"] > 0
    assert results["multi"]["metadata"]["zlib"] and results["multi"]["metadata"]["openssl"]
    assert "local: Single core ..." in err and "local: All cores" in err

    # stored: the run list has it, with the preset the parameters defaulted to
    assert main(["runs", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert (listed["id"], listed["status"]) == (run["run_id"], "done")


def test_run_cpu_prints_a_readable_summary(cli_env, capsys) -> None:
    assert main(["run", "local", "--test", "cpu", "--preset", "full", "--set", "seconds=0.3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("local: done (run ")
    assert out[1].split()[:4] == ["phase", "workers", "score", "ops/s"]
    assert out[2].split()[0] == "single" and out[3].split()[0] == "multi"
    assert out[4].startswith("  scaling: ") and out[5].startswith("  versions: interpreter CPython")
