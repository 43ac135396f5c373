"""The store keeps HostRecords, a connection needs HostSpecs: the workbench maps one to the other here."""
from __future__ import annotations

from dataclasses import asdict

from app.errors import AppError
from remote.hostspec import AUTH_METHODS, HostSpec
from storage.hosts import check_host_name
from storage.records import HostRecord


def spec_from_record(record: HostRecord) -> HostSpec:
    return HostSpec(**asdict(record))


def record_from_spec(spec: HostSpec) -> HostRecord:
    return HostRecord(**asdict(spec))


def checked_record(spec: HostSpec, renaming_from: str = "") -> HostRecord:
    """The record to store for spec; raises when the inventory must refuse it.

    The store checks names and ports itself; which authentication methods exist is known here only.
    The name is checked first so that a host wrong in both ways is refused for its name, as it always was.
    """
    check_host_name(spec.name, renaming_from)
    if spec.auth not in AUTH_METHODS:
        raise AppError(f"host {spec.name}: unknown authentication method {spec.auth!r}")
    return record_from_spec(spec)
