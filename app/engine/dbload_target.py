"""The database load test's data size from the target's RAM: when the target server is a host in the inventory
(by the target's address or name, or target_host=NAME), its RAM is known from its facts, so data=fits / 2xram
need no target_ram_mb (remote/agent/bench_dbload.py)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from remote.agent import benches

MB = 1024 * 1024


class Inventory(Protocol):
    def list_hosts(self) -> list[Any]: ...
    def latest_facts(self, name: str) -> dict | None: ...


def target_ram_mb(workbench: Inventory, target_host: str) -> int:
    """The RAM (MB) of the inventory host the target names (by address or name); 0 when none is known."""
    for spec in workbench.list_hosts():
        if target_host not in (spec.address, spec.name) or spec.address in ("", "localhost"):
            continue
        memory = (workbench.latest_facts(spec.name) or {}).get("memory") or {}
        total = memory.get("total_bytes") if isinstance(memory, dict) else None
        if isinstance(total, int) and total > 0:
            return total // MB
    return 0


def with_target_ram(workbench: Inventory, request: Any, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The request and its validated parameters with target_ram_mb filled in from the target's facts, where the
    run sizes its data from RAM, gave no RAM, and the target is another machine the inventory knows."""
    if request.test != "dbload" or params.get("data") not in ("fits", "2xram") or params.get("target_ram_mb"):
        return request, params
    agent = benches.load("dbload")   # the agent's own reading of the target, through its one door
    host = str(params.get("target_host") or "") or agent.resolved(params)["host"]   # the server named outright
    if agent.is_loopback(host):   # the agent reads the RAM of the host it runs on
        return request, params
    ram = target_ram_mb(workbench, host)
    if not ram:
        return request, params
    request = replace(request, params={**request.params, "target_ram_mb": ram})
    return request, benches.validate(request.test, request.params)
