"""`benchbay run HOST1 HOST2 --test dbload --set target=ADDR:PORT ...`: the hosts load one target together.

Every host is a client of the one database server; each step starts at one instant on all of them
(app.engine.dbload_multi). Progress on stderr (the first client's, as the sweep's), then each step's
total, each client's share and the start spread, the knee (app.summary.dbload_multi) or JSON.
"""
from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import print_json
from app.cli.exits import Exit
from app.cli.monitor import check_interval
from app.cli.run_shared import client_rows, run_sweep
from app.engine.dbload_multi import DbMultiOutcome, DbMultiRequest, plan, run_dbload_multi
from app.summary.dbload_multi import dbload_multi_text
from app.workbench import Workbench
from storage.records import RunStatus


def run_dbload_multi_command(bench: Workbench, args: argparse.Namespace, params: dict[str, Any]) -> int:
    check_interval(args.interval)
    hosts = list(args.hosts)
    request = DbMultiRequest(tuple(hosts), params, args.interval)
    result, control = run_sweep(bench, hosts, lambda: plan(request, "check"),
                                lambda control, on_event, passwords: run_dbload_multi(bench, request, control,
                                                                                      on_event, passwords))
    if not isinstance(result, DbMultiOutcome):
        raise result   # a wrong request or an unreachable host: one line from main()
    rows = client_rows(result.hosts, result.outcomes)
    total = result.total
    if args.json:
        print_json({"group": result.group, "total_run_id": result.total_run_id, "runs": rows,
                    "database": result.database, "started_at": result.started,
                    "offsets": {h: {"offset_s": o.offset, "uncertainty_s": o.uncertainty}
                                for h, o in result.offsets.items()},
                    "steps": [{"step": s.step, "clients": s.clients, "ops": s.ops, "per_second": list(s.per_second),
                               "shares": dict(s.shares), "short_seconds": dict(s.short),
                               "start_spread_s": result.spreads.get(s.step)} for s in total.steps] if total else [],
                    "knee": total.knee if total else None, "knee_text": total.knee_text() if total else "",
                    "target": {"host": result.target.host, "run_id": result.target.run_id,
                               "error": result.target.error} if result.target else None,
                    "error": result.error})
    else:
        print(dbload_multi_text(result))
    if control.cancelled and not result.error:
        return Exit.CANCELLED
    ok = all(row["status"] == RunStatus.DONE for row in rows) and not result.error and total is not None \
        and bool(total.steps)
    return Exit.OK if ok else Exit.FAILED
