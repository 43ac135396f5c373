"""SQLAlchemy models. The schema is created by the Alembic migrations, which must match these."""
from __future__ import annotations

import math
import sys
import uuid
from array import array
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Double,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

# Fixed names so the migrations (written by hand) and the models name every constraint the same way.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_name)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator[datetime]):
    """Always stores UTC and always returns an aware datetime, also on SQLite (which keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use an aware (UTC) datetime")
        value = value.astimezone(timezone.utc)
        # SQLite would store "+00:00" only sometimes; a naive UTC text sorts and compares correctly.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


class NaNDouble(TypeDecorator[float]):
    """A float that may be NaN: SQLite stores NaN as NULL, so NULL reads back as NaN."""

    impl = Double
    cache_ok = True

    def process_result_value(self, value: float | None, dialect: Dialect) -> float:
        return math.nan if value is None else value


def new_uid() -> str:
    """A run's identity across stores (laptops): 32 lowercase hex digits of a random uuid4."""
    return uuid.uuid4().hex


def pack_floats(values: Iterable[float]) -> bytes:
    """float64 little-endian, whatever the machine's byte order: files move between machines."""
    packed = array("d", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def unpack_floats(blob: bytes) -> list[float]:
    unpacked = array("d")
    unpacked.frombytes(blob)
    if sys.byteorder == "big":
        unpacked.byteswap()
    return unpacked.tolist()


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Host(Base):
    __tablename__ = "hosts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    address: Mapped[str] = mapped_column(String(255), default="")
    port: Mapped[int | None] = mapped_column(Integer, nullable=True)
    user: Mapped[str] = mapped_column(String(200), default="")
    auth: Mapped[str] = mapped_column(String(20), default="auto")
    key_path: Mapped[str] = mapped_column(Text, default="")
    jump: Mapped[str] = mapped_column(Text, default="")
    keyring: Mapped[bool] = mapped_column(Boolean, default=False)
    test_dir: Mapped[str] = mapped_column(Text, default="")
    run_dir: Mapped[str] = mapped_column(Text, default="")     # 0005
    # an optional price (records.HostPrice); NULL amount: none set (0008)
    price_amount: Mapped[float | None] = mapped_column(Double, nullable=True)
    price_currency: Mapped[str] = mapped_column(String(10), default="")
    price_period: Mapped[str] = mapped_column(String(20), default="")
    price_date: Mapped[str] = mapped_column(String(10), default="")
    price_source: Mapped[str] = mapped_column(Text, default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # A unique index, not a constraint: 0003 adds it to existing SQLite files without recreating the table.
    uid: Mapped[str] = mapped_column(String(32), unique=True, index=True, default=new_uid)
    host_name: Mapped[str] = mapped_column(String(200), index=True)   # not a FK: runs outlive hosts
    test: Mapped[str] = mapped_column(String(100), index=True)
    status: Mapped[str] = mapped_column(String(20))
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    agent_version: Mapped[str] = mapped_column(String(100), default="")
    engine: Mapped[str] = mapped_column(String(100), default="")
    engine_version: Mapped[str] = mapped_column(String(200), default="")
    error: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    notes: Mapped[str] = mapped_column(Text, default="")
    # While running: where it runs on its host (records.RemoteRunState) and which workbench drives it
    # (records.RunOwner), so a later workbench can re-attach after a crash (0004).
    remote_state: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    owner: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    # the runs repeating one test on one host share a group (records.RunRecord.repeat_group), 1-based index (0008)
    repeat_group: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    repeat_index: Mapped[int | None] = mapped_column(Integer, nullable=True)

    # passive_deletes: the database's ON DELETE CASCADE removes the children, no ORM load first.
    facts: Mapped[list[FactsSnapshot]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )
    results: Mapped[list[Result]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )
    series: Mapped[list[Series]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )
    events: Mapped[list[RunEvent]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )


class FactsSnapshot(Base):
    __tablename__ = "facts_snapshots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    host_name: Mapped[str] = mapped_column(String(200), index=True)
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)

    run: Mapped[Run] = relationship(back_populates="facts")


class Result(Base):
    __tablename__ = "results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    test: Mapped[str] = mapped_column(String(100))
    metric: Mapped[str] = mapped_column(String(200))
    value: Mapped[float] = mapped_column(NaNDouble, nullable=True)   # NULL is NaN (0006)
    unit: Mapped[str] = mapped_column(String(50), default="")
    # "metadata" is reserved on declarative classes, hence the attribute name.
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    # how much the figure varied (storage.spread's JSON form of records.Spread); NULL: not measured (0007)
    spread: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)

    run: Mapped[Run] = relationship(back_populates="results")


class Series(Base):
    __tablename__ = "series"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    device: Mapped[str] = mapped_column(String(200), default="")
    unit: Mapped[str] = mapped_column(String(50), default="")
    # before the blobs (migration 0009): SQLite then writes a long series into its blobs in pieces
    count: Mapped[int] = mapped_column(Integer)
    t_blob: Mapped[bytes] = mapped_column(LargeBinary)        # float64 LE, seconds since run start
    values_blob: Mapped[bytes] = mapped_column(LargeBinary)   # float64 LE

    run: Mapped[Run] = relationship(back_populates="series")


class RunEvent(Base):
    """One event of a run: seq is the agent's sequence number, None for events the workbench adds."""

    __tablename__ = "run_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    t: Mapped[float] = mapped_column(Double)          # host epoch seconds
    type: Mapped[str] = mapped_column(String(50))
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)   # the event without seq, t, type

    run: Mapped[Run] = relationship(back_populates="events")


class Comparison(Base):
    """A saved comparison: runs by uid (so it survives export/import), in the order they are shown."""

    __tablename__ = "comparisons"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    customer: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str] = mapped_column(Text, default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    run_uids: Mapped[list[str]] = mapped_column(JSON, default=list)
    baseline_uid: Mapped[str | None] = mapped_column(String(32), nullable=True)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
