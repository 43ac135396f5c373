"""Facts about a host (CPU, memory, disks, test directory, RAID, tools), gathered by the agent."""
from __future__ import annotations

from remote.agent_run import run_agent
from remote.errors import AgentError, RemoteError
from remote.transport import Transport

FACTS_SCHEMA = 1


def gather_facts(transport: Transport, test_dir: str | None = None, timeout: float = 120) -> dict:
    """The host's facts document (see the Facts JSON spec). Without `test_dir`, the agent
    describes the filesystem of its own run directory, where disk tests go by default."""
    args = ["facts"]
    if test_dir:
        args += ["--test-dir", test_dir]
    facts = run_agent(transport, args, timeout=timeout)
    if facts.get("schema") != FACTS_SCHEMA:
        raise AgentError(
            f"{transport.name}: agent sent facts schema {facts.get('schema')!r}, expected {FACTS_SCHEMA}; "
            "the agent and the workbench do not match"
        )
    return facts


def with_clock(facts: dict, transport: Transport) -> dict:
    """The facts with the host's clock offset from this computer (facts["clock"]: offset_s = host minus
    ours, uncertainty_s); this computer itself has none. A clock that cannot be read is one more error."""
    from remote.clock_offset import measure_offset
    from remote.local_transport import LocalTransport

    if isinstance(transport, LocalTransport):
        return facts
    try:
        clock = measure_offset(transport, rounds=4)
    except (RemoteError, ValueError) as exc:
        return {**facts, "errors": [*(facts.get("errors") or []), f"clock: {exc}"]}
    return {**facts, "clock": {"offset_s": round(clock.offset, 6), "uncertainty_s": round(clock.uncertainty, 6)}}
