"""mailstorm parameters: the sink policy, the queue poll floor, message building, percentiles."""
from __future__ import annotations

import pytest

from remote.agent import bench_mailstorm, benches, mail_message, mail_queue, mail_stats


def test_defaults() -> None:
    params = benches.validate("mailstorm", {})
    assert params["messages"] == 2000 and params["concurrency"] == 20 and params["size"] == 4096
    assert params["server"] == "127.0.0.1:25" and params["recipient"] == "sink@benchbay.invalid"
    assert params["queue_poll"] == 5.0 and params["drain_timeout"] == 300.0
    assert params["sink_confirmed"] is False and params["session_per_message"] is False


@pytest.mark.parametrize("recipient", ["someone@example.com", "root@localhost", "a@invalid.com", "x@invalidx"])
def test_recipient_outside_invalid_is_refused_unless_confirmed(recipient: str) -> None:
    with pytest.raises(ValueError, match="sink_confirmed"):
        bench_mailstorm.validate({"recipient": recipient})
    assert bench_mailstorm.validate({"recipient": recipient, "sink_confirmed": True})["recipient"] == recipient


@pytest.mark.parametrize("recipient", ["sink@benchbay.invalid", "a@b.c.invalid", "x@invalid"])
def test_reserved_invalid_domains_are_sinks(recipient: str) -> None:
    assert bench_mailstorm.validate({"recipient": recipient})["recipient"] == recipient


@pytest.mark.parametrize("recipient", ["nobody", "a@b.invalid\r\nRCPT TO:<x@y.com>", "<a@b.invalid>", "", 5,
                                       "a b@c.invalid"])
def test_malformed_recipients_are_refused_even_confirmed(recipient: object) -> None:
    with pytest.raises(ValueError):
        bench_mailstorm.validate({"recipient": recipient, "sink_confirmed": True})


@pytest.mark.parametrize("bad", [{"queue_poll": 1}, {"queue_poll": 4.9}, {"messages": 0}, {"concurrency": True},
                                 {"size": 10}, {"server": "host:notaport"}, {"sink_confirmed": "yes"},
                                 {"surprise": 1}, {"test_dir": "relative"}])
def test_bad_parameters(bad: dict) -> None:
    with pytest.raises(ValueError):
        benches.validate("mailstorm", bad)


def test_message_has_the_marker_and_size() -> None:
    message = mail_message.build_message("42", "sink@benchbay.invalid", 4096, 7)
    assert len(message) == 4096
    assert b"\r\nX-Benchbay-Run: 42\r\n" in message and message.endswith(b"\r\n")
    assert not any(line.startswith(b".") for line in message.split(b"\r\n"))


def test_expected_seconds_covers_the_drain() -> None:
    params = benches.validate("mailstorm", {})
    assert benches.expected_seconds("mailstorm", {}) > params["drain_timeout"]


def test_percentiles_nearest_rank() -> None:
    values = [i / 1000.0 for i in range(1, 101)]   # 1..100 ms
    assert mail_stats.summary_ms(values) == {"p50": 50.0, "p95": 95.0, "p99": 99.0, "max": 100.0}
    assert mail_stats.summary_ms([]) == {"p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}
    assert mail_stats.per_second([0.1, 0.5, 1.2, 2.9], 0.0, 2.9) == [2, 1, 1]


def test_mailq_counting() -> None:
    assert mail_queue.count_mailq("Mail queue is empty\n") == 0
    text = ("-Queue ID-  --Size-- ----Arrival Time---- -Sender/Recipient-------\n"
            "4F2A81C0C1*    4321 Mon Jan  1 00:00:00  MAILER-DAEMON\n"
            "                                         sink@benchbay.invalid\n\n"
            "1b2C3d-000AbC-Xy    4321 Mon Jan  1 00:00:01  <>\n")
    assert mail_queue.count_mailq(text) == 2
