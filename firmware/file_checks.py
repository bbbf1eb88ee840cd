"""What a file named on a command line must be before anything is written to it (one error that names it)."""

from __future__ import annotations

import os
from pathlib import Path

from firmware.faults import TableError


def check_writable(path: Path, option: str) -> None:
    """``path`` can be written: its folder exists and may be written, and it is not a folder itself."""
    if path.is_dir():
        raise TableError(f"{option} {path}: a folder; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise TableError(f"{option} {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise TableError(f"{option} {path}: not writable")
    if path.exists():
        if not path.is_file():
            raise TableError(f"{option} {path}: not a regular file")
        try:
            with open(path, "ab"):              # (appends nothing: proves the file takes writes, e.g. not /proc)
                pass
        except OSError as exc:
            raise TableError(f"{option} {path}: cannot be written ({exc.strerror or exc})") from None
