"""Facts about a host (CPU, memory, disks, test directory, RAID, tools), gathered by the agent."""
from __future__ import annotations

from remote.agent_run import run_agent
from remote.errors import AgentError
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
