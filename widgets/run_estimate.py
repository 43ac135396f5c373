"""How far a host's test is and how long it has left, from the agent's plan and events (Qt-free).

The agent announces its phases with their expected seconds ({"type": "plan", "phases": [...]}); a
phase is "timed" when its length is a parameter (a disk job's runtime), else it is a guess the
estimate refines with the speed seen so far. Progress is the expected work done, weighted by each
phase's seconds: it never goes back and reaches 100 % only when the run is over.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

BEFORE_END = 0.99      # the highest fraction shown before the run's end is known
MIN_FRACTION = 0.02    # below this a phase's own fraction is too small to extrapolate from


def now() -> float:
    """The clock of every estimate (looked up at each call, so a replay can set its own)."""
    return time.monotonic()


@dataclass(frozen=True)
class PlannedPhase:
    phase: str
    label: str
    seconds: float
    timed: bool


def parse_plan(event: dict) -> list[PlannedPhase]:
    """The phases of a plan event; entries that are not well formed are skipped."""
    phases = event.get("phases")
    out: list[PlannedPhase] = []
    for item in phases if isinstance(phases, list) else []:
        if not isinstance(item, dict):
            continue
        seconds = item.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
            continue
        phase = str(item.get("phase") or "")
        if phase:
            out.append(PlannedPhase(phase, str(item.get("label") or phase), float(seconds), item.get("timed") is True))
    return out


class RunEstimate:
    """Fed with a run's events in order; answers fraction() and seconds_left() at any moment.

    `expected` (the test's upper bound in seconds) is only used when the agent sent no plan.
    """

    def __init__(self, expected: float | None = None, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock or (lambda: now())
        self.expected = expected
        self.began = self._clock()
        self.ended: float | None = None
        self.final = ""                          # "done", "cancelled", "failed" once over
        self.plan: list[PlannedPhase] = []
        self.finished: dict[str, float] = {}     # phase -> seconds it took
        self.current: str = ""
        self.phase_began = self.began
        self.phase_fraction = 0.0
        self.phase_eta: float | None = None      # the agent's eta_s, at eta_at
        self.eta_at = self.began
        self._shown = 0.0
        self._ending: tuple[str, float] | None = None   # a phase that ended, whole unless the run stops

    # -- events ----------------------------------------------------------------------------------

    def add_event(self, event: dict) -> None:
        kind = event.get("type")
        now = self._clock()
        if kind == "plan":
            self.plan = parse_plan(event)
        elif kind == "phase_start":
            self._commit()
            self.current = str(event.get("phase") or event.get("label") or "")
            self.phase_began, self.phase_fraction, self.phase_eta = now, 0.0, None
        elif kind == "progress":
            fraction = event.get("fraction")
            if isinstance(fraction, (int, float)) and not isinstance(fraction, bool):
                self.phase_fraction = max(self.phase_fraction, min(1.0, max(0.0, float(fraction))))
            eta = event.get("eta_s")
            self.phase_eta = float(eta) if isinstance(eta, (int, float)) and not isinstance(eta, bool) else None
            self.eta_at = now
        elif kind == "phase_end":
            phase = str(event.get("phase") or event.get("label") or self.current)
            if phase and phase not in self.finished and not self.final:
                # a cancelled phase ends too: only the next phase (or done) shows this one was whole
                self._ending = (phase, now - self.phase_began)
                if self.phase_fraction >= 1.0 or phase != self.current:
                    self._commit()
        elif kind == "done":
            self.finish(str(event.get("status") or "done"))
        self.fraction()   # keeps the shown value from going back

    def _commit(self) -> None:
        if self._ending is not None:
            phase, seconds = self._ending
            self.finished[phase] = seconds
            self._ending = None
            if phase == self.current:
                self.current, self.phase_eta = "", None

    def finish(self, status: str) -> None:
        """The run is over: done reaches 100 %, cancelled and failed keep how far they got."""
        self._ending = None
        if not self.final:
            self.final = status if status in ("done", "cancelled", "failed") else "failed"
            self.ended = self._clock()
            self.current = ""

    # -- answers ---------------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else self._clock()) - self.began

    def _planned(self, phase: str) -> PlannedPhase | None:
        return next((p for p in self.plan if p.phase == phase), None)

    def _raw_fraction(self) -> float | None:
        total = sum(p.seconds for p in self.plan)
        if total > 0:
            done = sum(p.seconds for p in self.plan if p.phase in self.finished)
            current = self._planned(self.current)
            if current is not None and current.phase not in self.finished:
                done += current.seconds * self.phase_fraction
            return done / total
        if self.expected:   # no plan: time against the test's upper bound, so it only ever undershoots
            return min(self.elapsed / self.expected, 0.95)
        return None

    def fraction(self) -> float | None:
        """0..1, never lower than before; 1.0 only when the run is done; None while nothing tells."""
        if self.final == "done":
            self._shown = 1.0
            return 1.0
        raw = self._raw_fraction()
        if raw is None:
            return self._shown or None
        if not self.final:
            self._shown = max(self._shown, min(raw, BEFORE_END))
        return self._shown

    def _speed(self) -> float:
        """How much longer than guessed the guessed phases took so far (1.0 without evidence)."""
        guessed = [p for p in self.plan if not p.timed and p.phase in self.finished and p.seconds > 0]
        expected = sum(p.seconds for p in guessed)
        return sum(self.finished[p.phase] for p in guessed) / expected if expected > 0 else 1.0

    def seconds_left(self) -> tuple[float, bool] | None:
        """(seconds, whether it is a guess) or None when nothing says; None once over."""
        if self.final or not self.plan:
            return None
        now = self._clock()
        speed = self._speed()
        guess = False
        left = 0.0
        current = self._planned(self.current)
        if self.current:
            in_phase = now - self.phase_began
            if self.phase_eta is not None and (current is None or current.timed):
                left = max(0.0, self.phase_eta - (now - self.eta_at))
            elif self.phase_fraction >= MIN_FRACTION and in_phase > 0.5:
                left = in_phase * (1.0 - self.phase_fraction) / self.phase_fraction
                guess = True
            elif current is not None:
                left = max(0.0, current.seconds * (1.0 if current.timed else speed) - in_phase)
                guess = guess or not current.timed
            else:
                guess = True
        for phase in self.plan:
            if phase.phase in self.finished or phase.phase == self.current:
                continue
            left += phase.seconds if phase.timed else phase.seconds * speed
            guess = guess or not phase.timed
        return left, guess
