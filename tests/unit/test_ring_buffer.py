"""The live plots' ring buffer: newest pairs kept in order, contiguous views, earlier views untouched."""
from __future__ import annotations

import numpy as np
import pytest

from widgets.ring_buffer import RingBuffer


def test_appends_come_back_in_order() -> None:
    buffer = RingBuffer(capacity=100)
    for i in range(10):
        buffer.append(float(i), float(i * 10))
    t, v = buffer.view()
    assert len(buffer) == 10
    assert t.tolist() == [float(i) for i in range(10)]
    assert v.tolist() == [float(i * 10) for i in range(10)]
    assert (buffer.first_t, buffer.last_t, buffer.last_value) == (0.0, 9.0, 90.0)


def test_wraps_keeping_the_newest_capacity_pairs() -> None:
    buffer = RingBuffer(capacity=50, initial=8)
    for i in range(1234):   # many times round the storage, through growth and compactions
        buffer.append(float(i), float(-i))
        t, v = buffer.view()
        kept = min(i + 1, 50)
        assert len(t) == kept and t[0] == i + 1 - kept and t[-1] == i
    t, v = buffer.view()
    assert t.tolist() == [float(i) for i in range(1184, 1234)]
    assert v.tolist() == [float(-i) for i in range(1184, 1234)]
    assert t.flags.c_contiguous and v.flags.c_contiguous
    assert buffer.dropped == 1234 - 50


def test_a_view_handed_out_is_never_overwritten() -> None:
    buffer = RingBuffer(capacity=20, initial=4)
    for i in range(20):
        buffer.append(float(i), float(i))
    t_before, v_before = buffer.view()
    saved = (t_before.copy(), v_before.copy())
    for i in range(20, 500):
        buffer.append(float(i), float(i))
    assert np.array_equal(t_before, saved[0]) and np.array_equal(v_before, saved[1])


def test_views_are_read_only_and_version_counts_changes() -> None:
    buffer = RingBuffer(capacity=10)
    version = buffer.version
    buffer.append(1.0, 2.0)
    assert buffer.version > version
    t, _v = buffer.view()
    with pytest.raises(ValueError):
        t[0] = 5.0


def test_extend_and_window() -> None:
    buffer = RingBuffer(capacity=100, initial=4)
    buffer.extend(np.arange(30.0), np.arange(30.0) * 2)
    buffer.append(30.0, 60.0)
    t, v = buffer.window(10.0, 12.0)
    assert t.tolist() == [10.0, 11.0, 12.0] and v.tolist() == [20.0, 22.0, 24.0]
    assert buffer.window(28.5)[0].tolist() == [29.0, 30.0]
    buffer.extend(np.arange(31.0, 331.0), np.zeros(300))   # more than it holds: the newest 100 stay
    t, _v = buffer.view()
    assert len(t) == 100 and t[0] == 231.0 and t[-1] == 330.0
    with pytest.raises(ValueError):
        buffer.extend([1.0, 2.0], [1.0])


def test_clear() -> None:
    buffer = RingBuffer(capacity=10)
    buffer.extend([1.0, 2.0], [3.0, 4.0])
    buffer.clear()
    assert len(buffer) == 0 and buffer.last_t is None and buffer.view()[0].size == 0
