"""How a shared-storage sweep was run, in the methodology's plain sentences (Qt-free).

The stored total carries the sweep's parameters (the same for every client), its client hosts, and per
step the clients' start spread; the sentences say who wrote what where, how the files were opened, how
long each step ran and how closely the clients started.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.engine.shared_totals import CLIENT_BUSY
from widgets.format import human_bytes

SHARED_TEST = "shared-storage"


def _list(values: Sequence[Any]) -> str:
    items = [str(v) for v in values]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _size(value: Any) -> str:
    return human_bytes(value).replace(".0 ", " ") if isinstance(value, (int, float)) else str(value)


def _flags(params: Mapping[str, Any], said: Sequence[str]) -> str:
    """How the clients opened their files: as they said, else as asked."""
    if said:
        return " on some clients, ".join(said) if len(said) > 1 else said[0]
    writing = params.get("rw", "write") == "write"
    names = ["O_WRONLY" if writing else "O_RDONLY"]
    if params.get("direct", True):
        names.append("O_DIRECT")
    if writing and params.get("sync", True):
        names.append("O_SYNC")
    return "|".join(names) + " (as asked)"


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'s' if number != 1 else ''}"


def shared_sentences(params: Mapping[str, Any], results: Sequence[Any]) -> list[str]:
    """What the sweep did, from the total's parameters and results."""
    hosts = [str(h) for h in params.get("hosts") or ()]
    best = next((dict(r.metadata) for r in results if r.metric == "sweep.best_ops"), {})
    steps = [r for r in results if r.metric.endswith(".ops") and r.metadata.get("total")]
    clients = list(params.get("clients") or sorted({int(r.metadata.get("clients", 0)) for r in steps}))
    threads = list(params.get("threads") or sorted({int(r.metadata.get("threads", 0)) for r in steps}))
    said = best.get("flags") or next((r.metadata.get("flags") for r in steps if r.metadata.get("flags")), []) or []
    verb = "read" if params.get("rw") == "read" else "wrote"
    who = f"{_count(len(hosts), 'client host')} ({_list(hosts)})" if hosts else "The client hosts"
    where = f" in {params['test_dir']}" if params.get("test_dir") else ""
    out = [f"{who} {verb} their own files{where} together, in steps of {_list(clients)} clients × "
           f"{_list(threads)} threads each, with {_size(params.get('bs', 4096))} requests on files opened "
           f"{_flags(params, list(said))}.",
           "Each client ran Benchbay's own I/O engine: a thread per file, one request at a time per thread; "
           "before the sweep each client measured what that engine reaches with no storage at all (requests to "
           "/dev/null or from /dev/zero), and in every step how busy its CPUs were, to tell a client's limit from "
           "the storage's."]
    runtime, gap = params.get("runtime"), params.get("gap")
    if runtime is not None:
        out.append(f"Each step ran for {runtime:g} s" + (f", {gap:g} s after the one before" if gap else "")
                   + "; its total is the sum of the clients' requests in the same seconds.")
    spreads = [r for r in results if r.metric.endswith(".start_spread")]
    if spreads:
        widest = max(spreads, key=lambda r: r.value)
        margin = widest.metadata.get("uncertainty_ms")
        out.append("The workbench measured each client's clock offset over SSH and gave every client the same "
                   f"start instant: in every step the clients' first requests were within {widest.value:.1f} ms "
                   "of each other" + (f" (± {margin:.1f} ms)" if isinstance(margin, (int, float)) else "") + ".")
    for r in results:
        limit = r.metadata.get("client_limit") if r.metric.endswith(".ops") and r.metadata.get("total") else ""
        if not limit and r.metric.endswith(".ops") and r.metadata.get("total") \
                and (r.metadata.get("busiest_cpu_share") or 0) >= CLIENT_BUSY:   # stored before client_limit
            limit = f"the test kept {r.metadata.get('busiest_client')}'s CPUs " \
                    f"{r.metadata['busiest_cpu_share'] * 100:.0f} % busy"
        if limit:
            out.append(f"In the step of {r.metadata.get('clients')} client(s) x {r.metadata.get('threads')} "
                       f"thread(s) {limit}: that step's total may be the client's limit, not the storage's.")
    knee = best.get("knee_text")
    if knee:
        out.append(f"{knee[:1].upper()}{knee[1:]}.")
    return out
