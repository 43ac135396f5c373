"""The installed Qt binding must survive what live graphs do: many thousands of Qt calls."""
from __future__ import annotations

import subprocess
import sys

# Run in a child: a broken binding aborts the interpreter, which must fail this test, not the session.
_CALLS = """
import sys
from PySide6 import QtCore
point = QtCore.QPointF()
before = sys.getrefcount(None)
for i in range(20000):
    point.setX(i)
after = sys.getrefcount(None)
print(before - after)
"""


def test_void_qt_calls_do_not_leak_references_to_none() -> None:
    done = subprocess.run([sys.executable, "-c", _CALLS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the Qt binding crashed the interpreter: {done.stderr.strip()[:300]}"
    assert abs(int(done.stdout.strip())) < 100, "each Qt call drops a reference to None: use another PySide6"
