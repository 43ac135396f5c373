"""Secrets of one run (the restore test's password), which never touch the host's disk.

spec.json only says that secrets are coming ("secrets": "secrets.fifo"). The workbench creates
RUN/secrets.fifo (mode 0600, inside the 0700 run directory) and, in the same SSH command that
starts the agent, writes one JSON line into it from the channel's stdin; so the password is in
no file, no command line and no environment a `ps` shows. The agent reads that line once and
removes the fifo; the test hands the password to its children in their environment only.
"""
import json
import os
import select
import stat
import time
from typing import Callable, Dict

from .benches import SECRET_PARAMS

SECRETS_FIFO = "secrets.fifo"
READ_TIMEOUT = 30.0     # seconds the workbench has to write the secrets after the agent started
MAX_BYTES = 64 * 1024
POLL = 0.2              # seconds between looks at a stop request while waiting


def check_spec_params(params: Dict[str, object]) -> None:
    """A secret in spec.json would be a password on disk: refused, whoever wrote it."""
    found = [key for key in SECRET_PARAMS if params.get(key)]
    if found:
        raise ValueError("spec.json must not hold {}: secrets come through {}".format(", ".join(found),
                                                                                      SECRETS_FIFO))


def read_secrets(run_dir: str, stopping: Callable[[], bool], timeout: float = READ_TIMEOUT) -> Dict[str, str]:
    """The secrets the workbench wrote into RUN/secrets.fifo; ValueError when they do not come."""
    path = os.path.join(run_dir, SECRETS_FIFO)
    info = os.lstat(path)
    if not stat.S_ISFIFO(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ValueError("{} is not a private fifo of this user".format(SECRETS_FIFO))
    # O_RDWR: the open does not wait for the writer, and its close is no end of file for us
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    try:
        data = _read_line(fd, stopping, timeout)
    finally:
        os.close(fd)
        os.unlink(path)   # only now: the writer has opened it, so it cannot create a plain file instead
    try:
        secrets = json.loads(data.decode("utf-8"))
    except ValueError:
        raise ValueError("the secrets sent to {} are not a JSON object".format(SECRETS_FIFO)) from None
    if not isinstance(secrets, dict) or not all(k in SECRET_PARAMS and isinstance(v, str)
                                                for k, v in secrets.items()):
        raise ValueError("the secrets sent to {} must be text values of {}".format(SECRETS_FIFO,
                                                                                   ", ".join(SECRET_PARAMS)))
    return secrets


def _read_line(fd: int, stopping: Callable[[], bool], timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        if stopping():
            raise ValueError("stopped while waiting for the secrets")
        left = deadline - time.monotonic()
        if left <= 0:
            raise ValueError("the workbench sent no secrets within {:g} s".format(timeout))
        ready, _, _ = select.select([fd], [], [], min(POLL, left))
        if ready:
            try:
                data += os.read(fd, 4096)
            except BlockingIOError:
                continue
            if len(data) > MAX_BYTES:
                raise ValueError("more than {} bytes of secrets".format(MAX_BYTES))
    return data.split(b"\n", 1)[0]
