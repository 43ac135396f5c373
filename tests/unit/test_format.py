from datetime import datetime, timedelta, timezone

import pytest

from widgets.format import (
    NOT_AVAILABLE,
    disk_size,
    human_bytes,
    human_duration,
    human_mhz,
    local_time,
    number,
    one_line,
    parse_timestamp,
    plural,
    time_ago,
    workers_text,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (int(23.4 * 1024**3), "23.4 GiB"),
        (1024**4, "1.0 TiB"),
        (1024 * 1024 - 1, "1.0 MiB"),  # not "1024.0 KiB"
        (None, NOT_AVAILABLE),
        (-2048, "-2.0 KiB"),
    ],
)
def test_human_bytes_binary(value, expected):
    assert human_bytes(value) == expected


def test_human_bytes_decimal():
    assert human_bytes(500_107_862_016, binary=False) == "500.1 GB"
    assert human_bytes(999, binary=False) == "999 B"


def test_an_unknown_size_reads_as_the_caller_says():
    assert human_bytes(None, missing="?") == "?"
    assert human_bytes(2048, missing="?") == "2.0 KiB"


def test_facts_lines_keep_a_question_mark_for_unknown_sizes():
    from app.summary.facts import facts_lines, spec_line

    line = spec_line({"memory": {}, "disks": [{"name": "vda", "size_bytes": None}]})
    assert "? RAM" in line and "vda ? SSD" in line
    assert "memory:         ? RAM, ? available, swap ?" in list(facts_lines({}))
    assert "24.0 GiB RAM" in spec_line({"memory": {"total_bytes": 24 * 1024**3}})


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [
        (12345.6, None, "12,346"),
        (512.0, None, "512"),
        (48.25, None, "48.2"),
        (1.27, None, "1.27"),
        (0.0834, None, "0.083"),
        (8912.4, 0, "8,912"),
        (36.5, 1, "36.5"),
        (None, None, NOT_AVAILABLE),
        (float("nan"), None, NOT_AVAILABLE),
    ],
)
def test_number_has_about_three_significant_figures(value, decimals, expected):
    assert number(value, decimals) == expected


def test_number_missing_text_is_the_callers():
    assert number(None, missing="-") == "-"
    assert number(float("nan"), 2, missing="?") == "?"


def test_disk_size_shows_vendor_and_binary_sizes():
    assert disk_size(500_107_862_016) == "500.1 GB (465.8 GiB)"
    assert disk_size(512) == "512 B"
    assert disk_size(None) == NOT_AVAILABLE


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0.42, "420 ms"),
        (2.345, "2.3 s"),
        (42, "42 s"),
        (60, "1 min"),
        (75, "1 min 15 s"),
        (3600, "1 h"),
        (5349, "1 h 29 min"),
        (6 * 3600 + 18 * 60, "6 h 18 min"),
        (2 * 86400, "2 d"),
        (190000, "2 d 4 h"),
        (timedelta(minutes=3), "3 min"),
        (None, NOT_AVAILABLE),
        (-5, "-5.0 s"),
    ],
)
def test_human_duration(seconds, expected):
    assert human_duration(seconds) == expected


def test_human_mhz():
    assert human_mhz(2394.5) == "2.39 GHz"
    assert human_mhz(800) == "800 MHz"
    assert human_mhz(None) == NOT_AVAILABLE


def test_parse_timestamp_accepts_z_and_naive_utc():
    aware = parse_timestamp("2024-05-02T12:00:00Z")
    assert aware == datetime(2024, 5, 2, 12, tzinfo=timezone.utc)
    assert parse_timestamp(datetime(2024, 5, 2, 12)) == aware
    assert parse_timestamp("not a date") is None
    assert parse_timestamp("") is None


def test_local_time_format():
    text = local_time("2024-05-02T12:00:00+00:00")
    assert len(text) == len("2024-05-02 12:00:00")
    assert local_time(None) == NOT_AVAILABLE


def test_time_ago():
    now = datetime(2024, 5, 2, 12, tzinfo=timezone.utc)
    assert time_ago(now - timedelta(seconds=5), now) == "just now"
    assert time_ago(now - timedelta(minutes=5), now) == "5 min ago"
    assert time_ago(now - timedelta(hours=3), now) == "3 h ago"
    assert time_ago(now - timedelta(days=2), now) == "2 d ago"
    assert time_ago(now + timedelta(days=2), now) == "in the future"


def test_plural_and_one_line():
    assert plural(1, "socket") == "1 socket"
    assert plural(2, "core") == "2 cores"
    assert plural(0, "thread") == "0 threads"
    assert workers_text(1) == "1 worker" and workers_text("16") == "16 workers" and workers_text(None) == "? workers"
    assert one_line("\n  first line  \nsecond") == "first line"
    assert one_line("x" * 300, limit=10) == "x" * 9 + "…"
