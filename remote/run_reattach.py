"""Re-attaching to a detached run whose workbench went away: renew its deadline, read it from the start.

The run kept going on the host by itself (see the run directory protocol in DESIGN.md); a new
workbench takes it over with the run directory and deadline it had recorded.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable

from remote.errors import RemoteCommandError, RemoteError
from remote.run_link import Link
from remote.run_scripts import boot_id_in, deadline_command, renew_script
from remote.transport import Transport


class RunVanished(RemoteError):
    """Re-attaching found no run directory on the host: the run passed its deadline or was removed."""


def renew_deadline(link: Link, run_dir: str, deadline: float, margin: float,
                   command_timeout: Callable[[], float], boot_id: str = "") -> tuple[float, str]:
    """Renew the run's deadline at once (the host may be seconds from removing the run); the new one, and
    the host's boot id now.

    `command_timeout` gives the limit of each attempt. Raises RunVanished when the host no longer
    has the run directory, saying so when the host rebooted since (`boot_id`: the one the run began in).
    """
    host = link.host
    script = renew_script(run_dir, deadline_command(run_dir, deadline, margin))
    result = link.retrying(lambda transport: transport.run(script, timeout=command_timeout()))
    words = result.text().split()
    boot = boot_id_in(words)
    if boot_id and boot and boot != boot_id:
        raise RunVanished(rebooted_text(host))
    if "gone" in words:
        raise RunVanished(f"{host}: the run directory {run_dir} is gone (the host removes a run by itself "
                          "once its deadline passes without a workbench)")
    found = [w for w in words if w.startswith("deadline=")]
    if not result.ok or not found:
        raise RemoteCommandError(f"{host}: could not renew the run's deadline: "
                                 f"{result.error_text() or result.text().strip() or 'no output'}")
    return float(found[-1].split("=", 1)[1]), boot


def rebooted_text(host: str) -> str:
    return (f"{host}: the host rebooted during the run (its boot id changed): the run ended with it; what was "
            "read before is kept")


def read_agent_pid(transport: Transport, run_dir: str) -> int | None:
    """The agent's pid as the host recorded it in RUN/agent.pid (None when it is not there yet)."""
    with contextlib.suppress(RemoteError, FileNotFoundError, ValueError):
        return int(transport.get_bytes(f"{run_dir}/agent.pid").decode().strip())
    return None
