"""The arithmetic of a shared-storage sweep: totals per second, how closely the clients started, the knee.

Pure functions over plain figures (no SSH, no store), so the rules can be checked by hand:

- per second: every client counts its requests in the seconds from the step's planned start on its own
  clock; the workbench gave each client that instant converted by its clock offset, so second i of
  every client is the same second on the common clock and the total is the plain sum;
- start spread: each client's first request, moved to our clock (host time minus offset); the spread is
  latest minus earliest, known to within the sum of the two largest offset uncertainties;
- knee: steps ordered by streams (clients x threads); the knee is the first step whose total is less
  than (1 + threshold) x the best total of the steps it adds clients or threads to (no more clients,
  no more threads, fewer streams): adding clients or threads no longer raised the total by the threshold.
  1 client x 4 threads is not compared with 3 clients x 1 thread: neither adds to the other.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

KNEE_THRESHOLD = 0.10


CLIENT_BUSY = 0.6   # share of a client's CPUs busy (whole host, or the test alone): the client may set the pace
NEAR_CEILING = 0.5  # a client's op/s over its engine's own ceiling there: half of each request's time is the engine's


@dataclass(frozen=True)
class ClientStep:
    """One client's figures of one step, as its agent reported them (host clock)."""

    host: str
    ops_per_second: tuple[float, ...]
    bs: int
    began_first: float | None      # host clock
    planned: float                 # host clock
    offset: float                  # host clock minus ours
    uncertainty: float
    cpu_busy: float | None = None  # share of the host's CPUs the test kept busy during the step (0-1)
    engine_ceiling: float | None = None   # op/s its engine reaches there with as many threads, storage left out


@dataclass(frozen=True)
class StepTotal:
    name: str
    clients: int
    threads: int
    per_client_ops: Mapping[str, tuple[float, ...]]   # host -> op/s in each second
    total_ops: tuple[float, ...]                      # op/s in each second, summed over clients
    total_mbps: tuple[float, ...]
    ops: float                                        # mean total op/s over the step
    mbps: float
    start_spread: float | None                        # seconds, after offset correction
    spread_uncertainty: float
    late: float | None                                # the latest client's first request after the plan, s
    busiest: tuple[str, float] | None = None          # the client whose CPUs the test kept busiest, and how busy
    nearest_ceiling: tuple[str, float, float] | None = None   # (client, its op/s / its engine's ceiling, ceiling)

    @property
    def streams(self) -> int:
        return self.clients * self.threads


@dataclass(frozen=True)
class Knee:
    step: str | None          # None: no knee within the sweep
    text: str


def sum_per_second(series: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """Second i of the total = the sum of second i of every client (a client with fewer seconds adds 0)."""
    length = max((len(s) for s in series), default=0)
    return tuple(sum(float(s[i]) for s in series if i < len(s)) for i in range(length))


def start_spread(clients: Sequence[ClientStep]) -> tuple[float | None, float, float | None]:
    """(spread of the first requests on our clock, its uncertainty, lateness of the last one after the plan)."""
    began = [(c.began_first - c.offset, c.planned - c.offset) for c in clients if c.began_first is not None]
    if not began:
        return None, 0.0, None
    starts = [b for b, _ in began]
    worst = sorted((c.uncertainty for c in clients if c.began_first is not None), reverse=True)
    uncertainty = sum(worst[:2]) if len(worst) > 1 else 0.0
    late = max(b - p for b, p in began)
    return max(starts) - min(starts), uncertainty, late


def step_total(name: str, clients: int, threads: int, members: Sequence[ClientStep]) -> StepTotal:
    per_client = {c.host: tuple(float(v) for v in c.ops_per_second) for c in members}
    total = sum_per_second(list(per_client.values()))
    mb_series = [[float(v) * c.bs / 1e6 for v in c.ops_per_second] for c in members]
    total_mb = sum_per_second(mb_series)
    spread, uncertainty, late = start_spread(members)
    mean = sum(total) / len(total) if total else 0.0
    mean_mb = sum(total_mb) / len(total_mb) if total_mb else 0.0
    busy = [(c.host, c.cpu_busy) for c in members if c.cpu_busy is not None]
    busiest = max(busy, key=lambda pair: pair[1]) if busy else None
    near = [(c.host, (sum(c.ops_per_second) / len(c.ops_per_second)) / c.engine_ceiling, c.engine_ceiling)
            for c in members if c.engine_ceiling and c.ops_per_second]
    nearest = max(near, key=lambda item: item[1]) if near else None
    return StepTotal(name, clients, threads, per_client, total, total_mb, mean, mean_mb, spread, uncertainty, late,
                     busiest, nearest)


def client_bound(step: StepTotal) -> bool:
    """A client's CPUs were mostly busy with the test, or its engine ran close to what it can do at all on that
    host: the step's total may be the client's limit."""
    busy = step.busiest is not None and step.busiest[1] >= CLIENT_BUSY
    return busy or (step.nearest_ceiling is not None and step.nearest_ceiling[1] >= NEAR_CEILING)


def client_limit_text(step: StepTotal) -> str:
    """Why the step's total may be the client's limit ("" when nothing says so)."""
    reasons = []
    if step.nearest_ceiling is not None and step.nearest_ceiling[1] >= NEAR_CEILING:
        host, share, ceiling = step.nearest_ceiling
        reasons.append(f"{host}'s engine ran at {share * 100:.0f} % of what it reaches on that host with "
                       f"{step.threads} thread{'s' if step.threads != 1 else ''} and no storage at all "
                       f"({ceiling:.0f} op/s)")
    if step.busiest is not None and step.busiest[1] >= CLIENT_BUSY:
        reasons.append(f"the test kept {step.busiest[0]}'s CPUs {step.busiest[1] * 100:.0f} % busy")
    return " and ".join(reasons)


def find_knee(steps: Sequence[StepTotal], threshold: float = KNEE_THRESHOLD) -> Knee:
    ordered = sorted(steps, key=lambda s: (s.streams, s.clients))   # stable: run order among equals
    for index, step in enumerate(ordered):
        # the steps this one adds clients or threads to (no more of either, fewer streams)
        fewer = [s for s in ordered[:index]
                 if s.clients <= step.clients and s.threads <= step.threads and s.streams < step.streams]
        if not fewer:
            continue
        best = max(fewer, key=lambda s: s.ops)
        if step.ops < best.ops * (1.0 + threshold):
            gain = (step.ops / best.ops - 1.0) * 100.0 if best.ops > 0 else 0.0
            text = (f"knee at {_shape(step)}: {step.ops:.0f} op/s, {gain:+.0f} % against the best step with fewer "
                    f"clients or threads ({best.ops:.0f} op/s at {_shape(best)}): adding clients or threads raised "
                    f"the total by less than {threshold * 100:.0f} %")
            if client_bound(step):
                text += (f"; but there {client_limit_text(step)}, so the knee may be the clients' own limit, not the "
                         "storage's: more client hosts would tell")
            return Knee(step.name, text)
    return Knee(None, f"no knee within the sweep: every step that added clients or threads raised the total by "
                      f"at least {threshold * 100:.0f} %" if len(steps) > 1 else "no knee within the sweep (one step)")


def _shape(step: StepTotal) -> str:
    return f"{step.clients} client{'s' if step.clients != 1 else ''} x {step.threads} thread" \
           f"{'s' if step.threads != 1 else ''}"
