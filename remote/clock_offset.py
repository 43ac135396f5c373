"""How far a host's clock is from ours, measured over SSH the way NTP does it.

One exchange: we note our clock (t_send), the host answers with its clock (t_host), we note ours again
(t_recv). The host read its clock somewhere between the two, so

    offset      = t_host - (t_send + t_recv) / 2      (host clock minus ours)
    uncertainty = (t_recv - t_send) / 2               (the true offset is within offset ± uncertainty)

Several exchanges; the one with the smallest round trip is kept (its bound is the tightest). On SSH
one channel runs a shell loop that prints the host's clock for every line we send, so a round trip
costs one `date`, not a new channel and a new shell; where the connection runs its commands in one
shell already (remote.command_shell) or on the local host, each exchange is one command of it.
"""
from __future__ import annotations

import select
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from remote.errors import RemoteCommandError
from remote.login_shell import MarkerFilter, new_marker, wrap_command
from remote.transport import Transport

ROUNDS = 8
CLOCK_COMMAND = "date +%s.%N"
ECHO_LOOP = "while IFS= read -r line; do date +%s.%N; done"
READ_TIMEOUT = 10.0


@dataclass(frozen=True)
class ClockSample:
    t_send: float    # our clock when the question left
    t_host: float    # the host's clock in its answer
    t_recv: float    # our clock when the answer came

    @property
    def rtt(self) -> float:
        return self.t_recv - self.t_send

    @property
    def offset(self) -> float:
        return self.t_host - (self.t_send + self.t_recv) / 2.0


@dataclass(frozen=True)
class ClockOffset:
    host: str
    offset: float        # seconds: host clock minus ours
    uncertainty: float   # seconds: half the round trip of the kept exchange
    rtt: float
    rounds: int

    def to_host(self, ours: float) -> float:
        """An instant on our clock as the host's clock reads it."""
        return ours + self.offset

    def to_ours(self, host_time: float) -> float:
        return host_time - self.offset


def best_offset(host: str, samples: Sequence[ClockSample]) -> ClockOffset:
    """The exchange with the smallest round trip; ValueError without a usable one."""
    usable = [s for s in samples if s.rtt >= 0]
    if not usable:
        raise ValueError(f"{host}: no usable clock exchange (our clock went backwards during each)")
    best = min(usable, key=lambda s: s.rtt)
    return ClockOffset(host, best.offset, best.rtt / 2.0, best.rtt, len(samples))


def parse_clock(text: str, host: str) -> float:
    value = text.strip()
    try:
        seconds = float(value)
    except ValueError:
        raise RemoteCommandError(f"{host}: `date +%s.%N` answered {value[:60]!r}, not seconds with nanoseconds: "
                                 "the host needs GNU or busybox date with %N") from None
    if "." not in value:
        raise RemoteCommandError(f"{host}: `date +%s.%N` gave whole seconds only ({value}): its clock cannot be "
                                 "measured finely enough")
    return seconds


def measure_offset(transport: Transport, rounds: int = ROUNDS, clock: Callable[[], float] = time.time) -> ClockOffset:
    """The host's clock offset from ours (best of `rounds` exchanges)."""
    client = getattr(transport, "client", None)
    get_transport = getattr(client, "get_transport", None)
    if getattr(transport, "one_shell", False):
        # a channel of its own would start the login shell again (slow start-up files): one more command
        # instead, the first of which may also wait for the connection's shell to start
        samples = _over_commands(transport, rounds + 1, clock)[1:]
    elif get_transport is not None and get_transport() is not None:
        samples = _over_channel(transport, get_transport(), rounds, clock)
    else:
        samples = _over_commands(transport, rounds, clock)
    return best_offset(transport.name, samples)


def _over_commands(transport: Transport, rounds: int, clock: Callable[[], float]) -> list[ClockSample]:
    samples = []
    for _ in range(rounds):
        t_send = clock()
        result = transport.run(CLOCK_COMMAND, timeout=READ_TIMEOUT)
        t_recv = clock()
        if not result.ok:
            raise RemoteCommandError(f"{transport.name}: cannot read its clock: {result.error_text() or 'date failed'}")
        samples.append(ClockSample(t_send, parse_clock(result.text(), transport.name), t_recv))
    return samples


def _over_channel(transport: Transport, ssh: object, rounds: int, clock: Callable[[], float]) -> list[ClockSample]:
    marker = new_marker()
    channel = ssh.open_session(timeout=READ_TIMEOUT)   # type: ignore[attr-defined]
    try:
        channel.exec_command(wrap_command(ECHO_LOOP, marker))
        reader = _LineReader(channel, MarkerFilter(marker), transport.name)
        samples = []
        for _ in range(rounds + 1):
            t_send = clock()
            channel.sendall(b"x\n")
            line = reader.line()
            t_recv = clock()
            samples.append(ClockSample(t_send, parse_clock(line, transport.name), t_recv))
        channel.shutdown_write()
        return samples[1:]   # the first also waited for the shell to start
    finally:
        channel.close()


class _LineReader:
    def __init__(self, channel: object, marker: MarkerFilter, host: str) -> None:
        self._channel, self._marker, self._host = channel, marker, host
        self._buffer = b""

    def line(self) -> str:
        deadline = time.monotonic() + READ_TIMEOUT
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RemoteCommandError(f"{self._host}: no answer to a clock reading within {READ_TIMEOUT:g} s")
            select.select([self._channel], [], [], min(left, 0.5))
            channel = self._channel
            if channel.recv_ready():   # type: ignore[attr-defined]
                self._buffer += self._marker.feed(channel.recv(4096))   # type: ignore[attr-defined]
            elif channel.exit_status_ready() or channel.closed:   # type: ignore[attr-defined]
                raise RemoteCommandError(f"{self._host}: the clock reader ended early")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("ascii", "replace")


WARN_BEYOND = 2.0   # seconds: a host clock further off than this is said, at run start and in the facts


def offset_words(offset: float) -> str:
    """ "5.0 h ahead of", "3.2 s behind" ... this computer's clock."""
    size = abs(offset)
    amount = f"{size / 3600:.1f} h" if size >= 3600 else f"{size / 60:.1f} min" if size >= 120 else f"{size:.1f} s"
    return f"{amount} {'ahead of' if offset > 0 else 'behind'}"


def clock_warning(host: str, offset: float) -> str:
    return (f"{host}'s clock is {offset_words(offset)} this computer's: its times are stored on this computer's "
            "clock (the host's own kept beside them); set the host's clock right (NTP) to read its logs alike")
