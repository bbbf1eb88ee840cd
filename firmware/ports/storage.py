"""The storage port: how the table database is opened (``sqlite3.connect`` on a table; the simulator's card model,
which can fail writes and be cut, in the simulator)."""

from __future__ import annotations

import sqlite3
from typing import Any, Protocol


class Connect(Protocol):
    """Open an SQLite database at ``path`` (``sqlite3.connect``'s arguments)."""

    def __call__(self, path: str, **kwargs: Any) -> sqlite3.Connection: ...
