"""One agent call on a host: find python3, upload the agent to a private run directory, run it,
parse its JSON, and always clean up."""
from __future__ import annotations

import json
import logging

from remote.agent_package import build_agent
from remote.errors import AgentError, NoPython
from remote.transport import Transport

log = logging.getLogger(__name__)

MIN_PYTHON = (3, 6)
AGENT_FILE = "agent.pyz"

# One round trip, labelled lines: where python3 is (or that there is none), what it printed as its
# version and its exit status; what it said on stderr comes on stderr. POSIX sh only.
_FIND_PYTHON = (
    "p=$(command -v python3 2>/dev/null) || { echo missing; exit 0; }; "
    "printf 'path %s\\n' \"$p\"; "
    "v=$(\"$p\" -c 'import sys; print(\"%d.%d.%d\" % tuple(sys.version_info[:3]))' </dev/null); s=$?; "
    "printf 'version %s\\nstatus %s\\n' \"$v\" \"$s\""
)


def find_python(transport: Transport) -> str:
    """The path of the host's python3; NoPython, saying which, when it is absent, fails to run or
    is older than 3.6."""
    host = transport.name
    advice = f"install python3 ({MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer) on {host}"
    result = transport.run(_FIND_PYTHON, timeout=30)
    found = dict(line.split(" ", 1) for line in result.text().splitlines() if " " in line)
    if "missing" in result.text().split() and "path" not in found:
        raise NoPython(f"{host}: python3 was not found on the PATH; {advice}")
    path = found.get("path", "").strip()
    if not result.ok or not path:
        reason = result.error_text().splitlines()[-1:] or [f"exit {result.exit_status}"]
        raise NoPython(f"{host}: could not look for python3 ({reason[0]}); {advice}")
    version, status = found.get("version", "").strip(), found.get("status", "").strip()
    try:
        numbers = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        numbers = ()
    if status != "0" or len(numbers) < 2:
        said = [line.strip() for line in result.error_text().splitlines() if line.strip()]
        detail = said[-1][:200] if said else (f"exit {status}, " if status != "0" else "") + "no version printed"
        raise NoPython(f"{host}: {path} is there but does not run ({detail}); {advice} or repair it")
    if numbers < MIN_PYTHON:
        raise NoPython(f"{host}: {path} is Python {version}, too old for the agent; {advice}")
    return path


def run_agent(transport: Transport, args: list[str], timeout: float = 120) -> dict:
    """Run `agent.pyz *args --run-dir DIR` on the host and return its JSON document.

    The run directory is removed afterwards whatever happens (failure, garbage, timeout).
    """
    python = find_python(transport)
    run_dir = transport.make_private_dir()
    try:
        agent_path = f"{run_dir}/{AGENT_FILE}"
        transport.put_bytes(build_agent(), agent_path, mode=0o600)
        # -E -s: the host's PYTHON* variables and user site-packages must not change the agent
        argv = [python, "-E", "-s", agent_path, *args, "--run-dir", run_dir]
        result = transport.run(argv, timeout=timeout)
    finally:
        _remove_quietly(transport, run_dir)
    if not result.ok:
        message = _last_line(result.error_text()) or "no message on stderr"
        raise AgentError(f"{transport.name}: agent failed (exit {result.exit_status}): {message}")
    return _parse_document(transport.name, result.text())


def _parse_document(host: str, text: str) -> dict:
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        preview = " ".join(text.split())[:80] or "(nothing)"
        raise AgentError(f"{host}: agent output was not JSON: {preview}")
    return document


def _remove_quietly(transport: Transport, run_dir: str) -> None:
    """Cleanup must not hide the error that brought us here; a failure is only logged."""
    try:
        transport.remove_dir(run_dir)
    except Exception as exc:
        log.warning("%s: could not remove run directory %s: %s", transport.name, run_dir, exc)


def _last_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
