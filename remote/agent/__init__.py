"""Benchbay agent: runs on the servers themselves. Python standard library only, Python >= 3.6.

Everything in this package must stay importable by an old server Python: no dataclasses,
no walrus, no `from __future__ import annotations`, no subprocess capture_output.
"""

AGENT_VERSION = "0.1.0"
