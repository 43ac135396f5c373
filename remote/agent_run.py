"""One agent call on a host: find python3, upload the agent to a private run directory, run it,
parse its JSON, and always clean up."""
from __future__ import annotations

import json
import logging

from remote.agent_package import build_agent
from remote.errors import AgentError, NoPython
from remote.run_scripts import AGENT_FLAGS
from remote.transport import CommandResult, Transport

log = logging.getLogger(__name__)

MIN_PYTHON = (3, 6)
AGENT_FILE = "agent.pyz"

# One round trip, labelled lines: where python3 is (or that there is none), what it printed as its
# version and its exit status; what it said on stderr comes on stderr. POSIX sh only.
# python3 on the PATH may be a wrapper (pyenv's shim is a bash script that costs ~90 ms per start):
# the interpreter it runs (sys.executable) is named too when it runs by itself, and the agent starts that.
FIND_PYTHON = (
    "p=$(command -v python3 2>/dev/null) || { echo missing; exit 0; }; "
    "printf 'path %s\\n' \"$p\"; "
    "v=$(\"$p\" -c 'import sys; print(\"%d.%d.%d %s\" % (tuple(sys.version_info[:3]) + (sys.executable,)))' "
    "</dev/null); s=$?; "
    "printf 'version %s\\nstatus %s\\n' \"${v%% *}\" \"$s\"; "
    "e=${v#* }; if [ \"$e\" != \"$v\" ] && [ \"$e\" != \"$p\" ] && [ -x \"$e\" ] "
    "&& \"$e\" -c '' </dev/null >/dev/null 2>&1; then printf 'executable %s\\n' \"$e\"; fi"
)


LOOKUP_SEPARATOR = "@@benchbay-python-lookup@@"


def with_python_lookup(script: str) -> str:
    """`script` (in a subshell of its own), then FIND_PYTHON, as one command: a run's start then costs one
    round trip less, and one login shell less on a host whose start-up files are slow."""
    return f"(\n{script}\n); echo {LOOKUP_SEPARATOR}; ( {FIND_PYTHON} )"


def split_python_lookup(host: str, result: CommandResult) -> tuple[str, str]:
    """What `script` printed, and find_python's answer (NoPython as find_python raises it)."""
    before, separator, after = result.text().partition(LOOKUP_SEPARATOR + "\n")
    if not separator:   # the shell never got to the lookup: say why as find_python would
        return before, python_from(host, CommandResult(result.exit_status or 1, b"", result.stderr))
    return before, python_from(host, CommandResult(result.exit_status, after.encode(), result.stderr))


def find_python(transport: Transport) -> str:
    """The path of the host's python3 (the interpreter itself when python3 is a wrapper that runs it);
    NoPython, saying which, when it is absent, fails to run or is older than 3.6."""
    return python_from(transport.name, transport.run(FIND_PYTHON, timeout=30))


def python_from(host: str, result: CommandResult) -> str:
    """find_python's answer from what FIND_PYTHON printed (also as the last part of a longer command)."""
    advice = f"install python3 ({MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer) on {host}"
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
    executable = found.get("executable", "").strip()
    return executable if executable.startswith("/") else path


def run_agent(transport: Transport, args: list[str], timeout: float = 120) -> dict:
    """Run `agent.pyz *args --run-dir DIR` on the host and return its JSON document.

    The run directory is removed afterwards whatever happens (failure, garbage, timeout).
    """
    python = find_python(transport)
    run_dir = transport.make_private_dir()
    try:
        agent_path = f"{run_dir}/{AGENT_FILE}"
        transport.put_bytes(build_agent(), agent_path, mode=0o600)
        argv = [python, *AGENT_FLAGS, agent_path, *args, "--run-dir", run_dir]
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
