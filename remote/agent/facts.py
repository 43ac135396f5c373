"""Assemble the facts document (schema 1): every section gathered on its own, failures become errors."""
import datetime
from typing import Dict, Optional

from . import AGENT_VERSION
from .common import Collector
from .facts_cpu import gather_cpu, gather_memory
from .facts_disks import gather_disks
from .facts_storage import gather_raid, gather_test_dir
from .facts_system import gather_identity, gather_system, gather_virtualization
from .facts_tools import gather_tools

SCHEMA = 1


def collect_facts(test_dir: Optional[str] = None, collector: Optional[Collector] = None) -> Dict[str, object]:
    col = collector or Collector()
    now = datetime.datetime.now(datetime.timezone.utc)
    facts = {"schema": SCHEMA, "agent_version": AGENT_VERSION,
             "collected_at": now.strftime("%Y-%m-%dT%H:%M:%SZ")}  # type: Dict[str, object]
    identity = col.guard("identity", lambda: gather_identity(col), {}) or {}
    for key in ("hostname", "kernel", "kernel_version", "arch", "os", "python", "is_root"):
        facts[key] = identity.get(key)
    facts["cpu"] = col.guard("cpu", lambda: gather_cpu(col))
    facts["memory"] = col.guard("memory", gather_memory)
    facts["disks"] = col.guard("disks", lambda: gather_disks(col), [])
    facts["test_dir"] = col.guard("test_dir", lambda: gather_test_dir(test_dir)) if test_dir else None
    facts["raid"] = col.guard("raid", lambda: gather_raid(col),
                              {"mdstat": None, "arrays": [], "hardware": []})
    facts["virtualization"] = col.guard("virtualization", lambda: gather_virtualization(col))
    facts["system"] = col.guard("system", lambda: gather_system(col),
                                {"vendor": None, "product": None, "serial": None, "bios": None})
    facts["tools"] = col.guard("tools", lambda: gather_tools(col), {})
    facts["needs_root"] = col.needs_root
    facts["errors"] = col.errors
    return facts
