"""A wall clock that a file moves, for the suite's tests of several server processes.

The sessions of a deployment idle out by :attr:`mcp_endpoint.sessions.SessionStore.clock`,
which every process reads. A test of two real server processes cannot move a clock inside
them, so with ``DEMO_CLOCK_FILE`` set each process reads the wall clock plus the seconds
that file holds, and the test writes there instead of waiting for the idle time to pass.
Nothing but the suite should set it.
"""

from __future__ import annotations

import time
from pathlib import Path


class FileMovedClock:
    """``time.time()`` plus the seconds in ``path`` (none while it is missing or empty)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> float:
        try:
            text = self.path.read_text().strip()
        except FileNotFoundError:
            text = ""
        return time.time() + (float(text) if text else 0.0)
