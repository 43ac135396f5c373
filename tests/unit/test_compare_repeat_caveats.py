"""A server's repeats say each caveat once, and every "can't tell yet" says what would settle it."""
from __future__ import annotations

from dataclasses import replace

from app.compare.caveats import Caveat, merged
from app.compare.model import RunInput, build
from tests.unit.test_compare_model import cpu, disk, facts, record

KEYS = ("disk:syncwrite_4k.iops",)


def test_the_same_sentence_with_other_numbers_is_one_caveat_with_a_range() -> None:
    fast = [[Caveat("write cache?", "1,500 flushed 4 KiB writes/s is fast for a disk (vda).", KEYS)],
            [Caveat("write cache?", "1,417 flushed 4 KiB writes/s is fast for a disk (vda).", KEYS)],
            []]
    assert merged(fast) == [Caveat("write cache?", "In 2 of its 3 runs: 1,417–1,500 flushed 4 KiB writes/s is fast "
                                   "for a disk (vda).", KEYS)]
    same = [[Caveat("cached", "Cached I/O in 2 job(s).", KEYS)]] * 3
    assert merged(same) == [Caveat("cached", "In all 3 of its runs: Cached I/O in 2 job(s).", KEYS)]
    # a lone run's caveat is its own sentence, unchanged
    assert merged([fast[0]]) == fast[0]
    # other sentences stay apart
    two = merged([[fast[0][0], same[0][0]], [fast[1][0]]])
    assert [c.tag for c in two] == ["write cache?", "cached"]


def test_a_repeat_group_lists_its_caveat_once_in_the_table_and_the_list() -> None:
    group = [RunInput(replace(record(i, "hdd-box", "disk", minutes=i), repeat_group="g1"), facts(rotational=True),
                      disk(1_000, sync_iops=sync)) for i, sync in ((1, 4_200.0), (2, 4_000.0), (3, 90.0))]
    other = [RunInput(record(4, "ssd-box", "disk", minutes=5), facts(), disk(2_000, sync_iops=800))]
    comparison = build(group + other)
    lines = [line for line in comparison.caveat_lines() if line.startswith("hdd-box")]
    assert len(lines) == 1, lines
    assert "In 2 of its 3 runs: 4,000–4,200 flushed 4 KiB writes/s" in lines[0]
    assert comparison.rows[0].cells["disk:syncwrite_4k.iops"].tags == "write cache?"


def test_each_cant_tell_yet_says_what_would_settle_it() -> None:
    runs = [RunInput(record(1, "a", "disk"), facts(), disk(1_000, p99=0.4)),
            RunInput(record(2, "b", "disk", minutes=1), facts(), disk(1_050, p99=0.2)),
            RunInput(record(3, "a", "cpu", minutes=2), facts(), cpu(100.0)),
            RunInput(record(4, "b", "cpu", minutes=3), facts(), cpu(300.0))]
    comparison = build(runs)
    lines = comparison.settle_lines()
    # single runs of a tail latency, 2x apart: within its run-to-run noise, and said so with the remedy
    [line] = [line for line in lines if line.startswith("a (")]   # a's figures with one remedy: one line
    assert "Random read 4 KiB p99" in line and line.endswith("): run 2 more repeats on each.")
    # the settled verdicts (3x on CPU) have no line; a test's lines are its own
    assert not any("CPU" in line for line in lines)
    assert comparison.settle_lines("cpu") == [] and comparison.settle_lines("disk") == lines
