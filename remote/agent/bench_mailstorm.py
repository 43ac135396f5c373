"""The "mailstorm" test: N messages over C concurrent SMTP sessions to the host's MTA, then the queue drain.

Only to a sink: the recipient must be in a reserved *.invalid domain (routed by the user to a discard
transport) unless sink_confirmed is true; the sender is the null sender, so nothing bounces anywhere.
Every message carries "X-Benchbay-Run: <run id>".

Phases: "storm" (the messages; accepts per second as progress) and "drain" (the MTA's queue polled,
never faster than every 5 s, until it is back to where it was before the storm or drain_timeout).
A queue that cannot be read before the storm (Exim's, for a user who is not an Exim admin) gives one
warning with the tool's reason, and no drain phase.
Markers for the live graphs: "Storm start", "Last accept" (written once the storm is over, at the
time of the last accept) and "Queue drained" (the poll that found it drained).
When nothing listens on the server: a synthetic queue storm on the test directory, every result
labelled synthetic: true. accepted_per_s comes with its per-interval rates (accepts per second in each
whole interval of the storm); the queue polls carry the wall clock of their second 0 (series_t0).
"""
import os
import shutil
import threading
import time
from typing import Any, Dict, Iterator, List, Optional  # noqa: F401 - some only in type comments

from . import mail_message, mail_queue, mail_sender, mail_smtp, mail_stats, mail_synthetic
from .common import emit_result

TEST = "mailstorm"
MIN_QUEUE_POLL = 5.0
MAX_MESSAGES = 10000000
MAX_CONCURRENCY = 1000
MIN_SIZE, MAX_SIZE = 256, 64 << 20
# the parameters validate() takes: name, kind, default, limits, unit
PARAMS = (
    {"name": "messages", "kind": "int", "default": 2000, "low": 1, "high": MAX_MESSAGES},
    {"name": "concurrency", "kind": "int", "default": 20, "low": 1, "high": MAX_CONCURRENCY},
    {"name": "size", "kind": "int", "default": 4096, "low": MIN_SIZE, "high": MAX_SIZE, "unit": "B"},
    {"name": "server", "kind": "text", "default": "127.0.0.1:25"},
    {"name": "recipient", "kind": "text", "default": "sink@benchbay.invalid"},
    {"name": "sink_confirmed", "kind": "bool", "default": False},
    {"name": "queue_poll", "kind": "float", "default": 5.0, "low": MIN_QUEUE_POLL, "high": 3600.0, "unit": "s"},
    {"name": "drain_timeout", "kind": "float", "default": 300.0, "low": 0.0, "high": 24 * 3600.0, "unit": "s"},
    {"name": "session_per_message", "kind": "bool", "default": False},
    {"name": "timeout", "kind": "float", "default": 30.0, "low": 0.5, "high": 600.0, "unit": "s"},
    {"name": "test_dir", "kind": "path", "default": ""},
)
DEFAULTS = {param["name"]: param["default"] for param in PARAMS}
LIMITS = {param["name"]: (param["low"], param["high"]) for param in PARAMS if "low" in param}
# what run() reports: metric name (with {stage}, {step}, {pct} filled in) and unit
METRICS = (("accepted", "messages"), ("accepted_per_s", "msg/s"), ("refused_tcp", "connections"),
           ("smtp_4xx", "replies"), ("smtp_5xx", "replies"), ("errors", "sessions"), ("queue_max", "messages"),
           ("drain_s", "s"), ("{stage}_{pct}", "ms"), ("synthetic_{step}_{pct}", "ms"))
PROGRESS_EVERY = 0.5
STORM_GUESS_PER_S = 300.0   # messages a second, for the first time-left guess (the workbench refines it)
HELO = "benchbay.invalid"
SENDER = ""     # the null sender: a message that cannot be delivered is never bounced to anyone


def _int(params: Dict[str, Any], name: str, low: int, high: int) -> int:
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError("mailstorm: {} must be a whole number {}-{}, not {!r}".format(name, low, high, value))
    return value


def _number(params: Dict[str, Any], name: str, low: float, high: float) -> float:
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError("mailstorm: {} must be a number {:g}-{:g}, not {!r}".format(name, low, high, value))
    return float(value)


def _bool(params: Dict[str, Any], name: str) -> bool:
    value = params[name]
    if not isinstance(value, bool):
        raise ValueError("mailstorm: {} must be true or false, not {!r}".format(name, value))
    return value


def check_recipient(recipient: Any, sink_confirmed: bool) -> str:
    """The recipient when it is a sink; ValueError otherwise."""
    text = str(recipient).strip() if isinstance(recipient, str) else ""
    local, at, domain = text.rpartition("@")
    bad = set(" \t\r\n<>()[],;:\\\"") & set(text)
    if not at or not local or not domain or bad or "." not in domain + "." or text != recipient:
        raise ValueError("mailstorm: recipient must be a plain address like sink@benchbay.invalid, not {!r}"
                         .format(recipient))
    domain = domain.lower().rstrip(".")
    if domain != "invalid" and not domain.endswith(".invalid") and not sink_confirmed:
        raise ValueError("mailstorm: recipient {} is outside the reserved *.invalid domains: refused unless "
                         "sink_confirmed is true (the address must be a sink that discards)".format(text))
    return text


def describe() -> Dict[str, Any]:
    """The parameters and metrics, as data (no presets: validate() refuses one)."""
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError("mailstorm: unknown parameter(s) {} (known: {})".format(
            ", ".join(unknown), ", ".join(sorted(DEFAULTS))))
    merged = dict(DEFAULTS)
    merged.update(params)
    out = {}  # type: Dict[str, Any]
    for name in ("messages", "concurrency", "size"):
        out[name] = _int(merged, name, *LIMITS[name])
    if not isinstance(merged["server"], str):
        raise ValueError("mailstorm: server must be host:port, not {!r}".format(merged["server"]))
    mail_smtp.parse_server(merged["server"])
    out["server"] = merged["server"].strip()
    out["sink_confirmed"] = _bool(merged, "sink_confirmed")
    out["recipient"] = check_recipient(merged["recipient"], out["sink_confirmed"])
    poll = merged["queue_poll"]
    if isinstance(poll, (int, float)) and not isinstance(poll, bool) and poll < MIN_QUEUE_POLL:
        raise ValueError("mailstorm: queue_poll must be at least {:g} s (the queue is never polled faster), "
                         "not {!r}".format(MIN_QUEUE_POLL, poll))
    out["queue_poll"] = _number(merged, "queue_poll", *LIMITS["queue_poll"])
    out["drain_timeout"] = _number(merged, "drain_timeout", *LIMITS["drain_timeout"])
    out["session_per_message"] = _bool(merged, "session_per_message")
    out["timeout"] = _number(merged, "timeout", *LIMITS["timeout"])
    test_dir = merged["test_dir"] or ""
    if not isinstance(test_dir, str) or (test_dir and not os.path.isabs(test_dir)):
        raise ValueError("mailstorm: test_dir must be an absolute path, not {!r}".format(test_dir))
    out["test_dir"] = test_dir
    return out


def expected_seconds(params: Dict[str, Any]) -> float:
    # a storm of about 100 msg/s at worst, then the drain, then a last poll
    storm = params["messages"] / 100.0 + 2 * params["timeout"]
    return storm + params["drain_timeout"] + 2 * params["queue_poll"] + 30.0


def wall_clock(monotonic: float) -> float:
    """time.time() of a time.monotonic() reading: event times are the host's wall clock."""
    return time.time() - (time.monotonic() - monotonic)




def _pct_results(ctx: Any, prefix: str, values: List[float], meta: Dict[str, Any]) -> None:
    figures = mail_stats.summary_ms(values)
    for name, value in figures.items():
        ctx.result(TEST, "{}_{}".format(prefix, name), value, "ms", dict(meta, samples=len(values)))


def run(ctx: Any, params: Dict[str, Any]) -> None:
    host, port = mail_smtp.parse_server(params["server"])
    why = mail_smtp.probe(host, port, min(params["timeout"], 5.0))
    if why:
        run_synthetic(ctx, params, "{}:{}".format(host, port), why)
        return
    run_smtp(ctx, params, host, port)


def run_smtp(ctx: Any, params: Dict[str, Any], host: str, port: int) -> None:
    rid = mail_message.run_id(ctx)
    mta = mail_queue.detect()
    meta = {"synthetic": False, "server": params["server"], "recipient": params["recipient"],
            "messages": params["messages"], "concurrency": params["concurrency"], "size": params["size"],
            "session_per_message": params["session_per_message"], "run_marker": rid,
            "mta": mta["mta"], "mta_version": mta["version"], "queue_dir": mta["queue_dir"],
            "queue_tool": mta["queue_tool"], "queue_fs": mail_queue.filesystem(mta["queue_dir"])}
    if not mta["queue_tool"]:
        ctx.warning("mailstorm: no postqueue, exim or mailq here: queue depth and drain time are not measured")
    poller = mail_queue.QueuePoller(ctx, mta["queue_tool"], params["queue_poll"])
    before = poller.poll() if poller.tool else None
    if poller.tool and before is None:
        # a queue that cannot be read now will not be readable after the storm: no drain wait for nothing
        ctx.warning("mailstorm: {}: queue depth and drain time are not measured".format(poller.why))
        poller.tool = ""
    plan = [{"phase": "storm", "label": "Storm", "seconds": round(params["messages"] / STORM_GUESS_PER_S, 3),
             "timed": False}]
    if poller.tool:   # drained at the first poll when the MTA keeps up
        plan.append({"phase": "drain", "label": "Queue drain", "seconds": params["queue_poll"], "timed": False})
    ctx.emit("plan", phases=plan)
    workers = params["concurrency"]
    stop = threading.Event()
    total = mail_smtp.Stats()
    batches = []
    serial = 0
    for index in range(workers):
        count = mail_message.share(params["messages"], workers, index)
        batches.append(mail_message.messages(rid, params["recipient"], params["size"], serial + 1, count))
        serial += count
    # one thread drives every session (mail_sender); this one reports progress and watches for cancel
    sender = threading.Thread(target=mail_sender.storm, name="mailstorm", daemon=True,
                              args=(host, port, HELO, params["timeout"], SENDER, params["recipient"], batches,
                                    params["session_per_message"], total, stop))
    with ctx.phase("storm", "Storm"):
        ctx.marker("storm_start", "Storm start")
        started = time.monotonic()
        try:
            def report(now):
                with total.lock:
                    done, accepted = total.attempted, total.accepted
                rate_now = accepted / max(now - started, 1e-6)
                ctx.progress("storm", done / params["messages"],
                             message="{} accepted, {:.0f} msg/s".format(accepted, rate_now))
                if poller.due():
                    poller.poll()

            _run_threads(ctx, [sender], report)
        finally:
            stop.set()
            sender.join(params["timeout"] + 1.0)
        ctx.progress("storm", 1.0, eta_s=0.0, message="{} accepted".format(total.accepted))

    first = total.first_attempt if total.first_attempt is not None else started
    last = total.accept_times[-1] if total.accept_times else first
    window = last - first
    rate = total.accepted / window if window > 0 else 0.0
    series = mail_stats.per_second(total.accept_times, first, last)
    if total.accept_times:
        ctx.marker("last_accept", "Last accept", at=wall_clock(last))
    ctx.result(TEST, "accepted", total.accepted, "messages", dict(meta, attempted=total.attempted))
    emit_result(ctx, TEST, "accepted_per_s", round(rate, 2), "msg/s",
                dict(meta, window_s=round(window, 4), per_second=series),
                mail_stats.accept_rates(total.accept_times, first, last, wall_clock(first)))
    by_stage = {stage: total.failures.get(stage, {}) for stage in mail_smtp.STAGES if stage in total.failures}

    def count(kind: str) -> int:
        return sum(kinds.get(kind, 0) for kinds in total.failures.values())

    fail_meta = dict(meta, by_stage=by_stage, last_error=total.last_error)
    ctx.result(TEST, "refused_tcp", count("refused"), "connections", fail_meta)
    ctx.result(TEST, "smtp_4xx", count("4xx"), "replies", fail_meta)
    ctx.result(TEST, "smtp_5xx", count("5xx"), "replies", fail_meta)
    ctx.result(TEST, "errors", count("error"), "sessions", fail_meta)
    for prefix, kind in (("connect", "connect"), ("banner", "banner"), ("data", "eod")):
        _pct_results(ctx, prefix, total.latency[kind], meta)
    if total.accepted < params["messages"]:
        ctx.warning("mailstorm: {} of {} messages accepted ({})".format(
            total.accepted, params["messages"], total.last_error or "stopped"))

    if not poller.tool:
        return
    drained_at = None  # type: Optional[float]
    with ctx.phase("drain", "Queue drain"):
        drain_start = time.monotonic()
        baseline = before or 0
        peak = baseline
        while True:
            ctx.sleep(poller.wait_due())
            depth = poller.poll()
            now = time.monotonic()
            if depth is not None and depth <= baseline:
                drained_at = now
                ctx.marker("queue_drained", "Queue drained", at=wall_clock(now))
                break
            if now - drain_start >= params["drain_timeout"]:
                break
            # how much of the queue's peak is gone; no eta: drain_timeout is a limit, not an estimate
            peak = max(peak, depth or 0)
            fraction = 1.0 - (depth - baseline) / (peak - baseline) if depth is not None and peak > baseline else 0.0
            ctx.progress("drain", fraction, message="{} in the queue".format(depth))
        ctx.progress("drain", 1.0, eta_s=0.0)
    depths = [d for _, d in poller.series]
    # series_t0: the wall clock of the series' second 0, so the workbench puts it on the run's time axis
    queue_meta = dict(meta, series=poller.series, series_t0=round(wall_clock(poller.start), 3),
                      poll_s=params["queue_poll"], before=before)
    ctx.result(TEST, "queue_max", max(depths) if depths else 0, "messages", queue_meta)
    if drained_at is None:
        ctx.warning("mailstorm: the queue was not drained within {:g} s".format(params["drain_timeout"]))
    else:
        ctx.result(TEST, "drain_s", round(max(drained_at - last, 0.0), 3), "s",
                   dict(queue_meta, resolution_s=params["queue_poll"],
                        note="time from the last accept to the first poll that found the queue drained"))


def run_synthetic(ctx: Any, params: Dict[str, Any], where: str, why: str) -> None:
    ctx.warning("synthetic: no MTA listening on {}".format(where))
    test_dir = os.path.realpath(params["test_dir"] or ctx.run_dir)
    directory = os.path.join(test_dir, "benchbay-mailstorm-{}".format(os.getpid()))
    os.mkdir(directory)        # fails when the name is taken: that directory is not ours to remove
    ctx.add_cleanup_path(directory)
    mail_synthetic.prepare(directory)
    rid = mail_message.run_id(ctx)
    meta = {"synthetic": True, "server": params["server"], "reason": why, "messages": params["messages"],
            "concurrency": params["concurrency"], "size": params["size"], "run_marker": rid,
            "directory": test_dir, "fs": mail_queue.filesystem(test_dir),
            "op": "create, write, fsync, rename, unlink per message"}
    message = mail_message.build_message(rid, params["recipient"], params["size"], 0)
    stats = mail_synthetic.SyntheticStats()
    stop = threading.Event()
    errors = []  # type: List[str]

    def work(index: int, count: int) -> None:
        try:
            mail_synthetic.worker(directory, index, count, message, stats, stop)
        except OSError as exc:
            errors.append("{}: {}".format(exc.filename or directory, exc.strerror or exc))

    workers = params["concurrency"]
    threads = [threading.Thread(target=work, args=(i, mail_message.share(params["messages"], workers, i)),
                                daemon=True) for i in range(workers)]
    ctx.emit("plan", phases=[{"phase": "storm", "label": "Storm (synthetic)",
                              "seconds": round(params["messages"] / STORM_GUESS_PER_S, 3), "timed": False}])
    with ctx.phase("storm", "Storm (synthetic)"):
        ctx.marker("storm_start", "Storm start (synthetic)")
        started = time.monotonic()
        try:
            _run_threads(ctx, threads, lambda now: ctx.progress(
                "storm", stats.accepted / params["messages"], message="synthetic: {} queued".format(stats.accepted)))
        finally:
            stop.set()
            for thread in threads:
                thread.join(30.0)
        ctx.progress("storm", 1.0, eta_s=0.0, message="synthetic: {} queued".format(stats.accepted))
    if errors:
        raise RuntimeError("mailstorm: synthetic storm failed: " + errors[0])
    times = sorted(stats.accept_times)
    last = times[-1] if times else started
    window = last - started
    if times:
        ctx.marker("last_accept", "Last accept (synthetic)", at=wall_clock(last))
    ctx.result(TEST, "accepted", stats.accepted, "messages", dict(meta))
    emit_result(ctx, TEST, "accepted_per_s", round(stats.accepted / window, 2) if window > 0 else 0.0, "msg/s",
                dict(meta, window_s=round(window, 4), per_second=mail_stats.per_second(times, started, last)),
                mail_stats.accept_rates(times, started, last, wall_clock(started)))
    for kind in ("create", "fsync", "total"):
        _pct_results(ctx, "synthetic_" + kind, stats.latency[kind], meta)
    shutil.rmtree(directory, ignore_errors=True)


def _run_threads(ctx, threads, report):
    """Start the senders and wait for them, reporting progress every PROGRESS_EVERY s; cancel stops the wait."""
    for thread in threads:
        thread.start()
    next_progress = 0.0
    while any(t.is_alive() for t in threads):
        ctx.check()
        now = time.monotonic()
        if now >= next_progress:
            next_progress = now + PROGRESS_EVERY
            report(now)
        ctx.sleep(0.05)
