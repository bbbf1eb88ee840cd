"""Secrets on disk (keys, password files): never readable by others, not even for an instant.

A secret is written to a new file in the same folder, created with its
final mode (0600 unless told) and ``O_EXCL | O_NOFOLLOW`` (a link planted
there is not followed), flushed to the card, then renamed over the target:
a reader sees the old file or the new one, never a half-written or
world-readable one, and a symbolic link at the target is replaced, not
written through.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_private(path: Path, data: bytes, *, mode: int = 0o600, replace: bool = True) -> None:
    """Write ``data`` to ``path`` with ``mode``.  Without ``replace`` an existing ``path`` is FileExistsError
    (naming it) and nothing is written."""
    path = Path(path)
    if not replace and (path.exists() or path.is_symlink()):
        raise FileExistsError(f"{path} exists (not replaced)")
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temporary, mode)              # (the umask may have narrowed it; never widened)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)           # (fails if the target appeared meanwhile)
            os.unlink(temporary)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
