"""A support ticket's diagnostics archive: the parts the table gives, secrets redacted, in one tar.gz.

The running table answers ``mjtable diag bundle`` (and the web page's
"download diagnostics") with its parts (:meth:`firmware.diagnostics.commands.DiagCommands`,
``bundle``): its versions, its configuration as loaded and its table
model's file, the recent log, the fault history, the table sessions and the
status.  The caller adds the table database's ``PRAGMA integrity_check``
(opened read-only: never on the controller's loop) and writes the archive
with :func:`archive`.  Whatever might be a secret is replaced by
``<redacted>`` before anything is written: every key named like a password,
passphrase, secret, token, PSK, credential or key (a ``..._key``, not a
``..._key_file`` path), every PEM block, and the values of such keys in a
TOML or INI text.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import tarfile
import urllib.parse
from pathlib import Path
from typing import Any

REDACTED = "<redacted>"
SECRET_KEY = re.compile(r"(pass(word|wd|phrase)?|secret|token|psk|credential|cookie|signature|^sig$|(^|[_.-])key$"
                        r"|private)", re.IGNORECASE)
PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?(-----END [A-Z0-9 ]+-----|\Z)", re.DOTALL)
ASSIGNMENT = re.compile(r"^(\s*[\"']?)([A-Za-z0-9_.-]+)([\"']?\s*[=:]\s*)(.*)$")
FOLDER = "mjtable-diagnostics"
MAX_INTEGRITY_LINES = 100


def redact(value: Any, key: str = "") -> Any:
    """``value`` with every secret-named key's value replaced (dicts and lists, recursively; PEM blocks in text)."""
    if key and SECRET_KEY.search(key) and value not in (None, "", [], {}):
        return REDACTED
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return PEM.sub(REDACTED, value)
    return value


def redact_text(text: str) -> str:
    """A configuration file's text (TOML, INI, ``key = value`` lines) with secret-named values and PEM blocks
    replaced."""
    out = []
    for line in PEM.sub(REDACTED, text).splitlines():
        m = ASSIGNMENT.match(line)
        if m and SECRET_KEY.search(m.group(2)) and not line.lstrip().startswith(("#", ";", "[")):
            line = f"{m.group(1)}{m.group(2)}{m.group(3)}\"{REDACTED}\""
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def integrity_check(path: Path | str) -> list[str]:
    """``PRAGMA integrity_check`` of the table database, opened read-only (``["ok"]`` when it is sound)."""
    uri = f"file:{urllib.parse.quote(str(Path(path).absolute()))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        return [f"cannot open {path}: {exc}"]
    try:
        return [str(row[0]) for row in db.execute("PRAGMA integrity_check").fetchmany(MAX_INTEGRITY_LINES)]
    except sqlite3.Error as exc:
        return [f"integrity_check of {path} failed: {exc}"]
    finally:
        db.close()


def parts_of(answer: dict[str, Any], integrity: list[str] | None) -> dict[str, str]:
    """The archive's files from the table's ``bundle`` answer and the integrity check (everything redacted)."""
    parts: dict[str, str] = {}
    for name in ("versions", "config", "faults", "sessions", "status"):
        if name in answer:
            parts[f"{name}.json"] = json.dumps(redact(answer[name]), indent=2, ensure_ascii=False, default=str) + "\n"
    for name, text in sorted((answer.get("config_files") or {}).items()):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", str(name))[:80] or "file"
        parts[f"config/{safe}"] = redact_text(str(text))
    log = answer.get("log") or []
    parts["log.txt"] = "".join(f"{line['n']} {line['at']:.3f} {line['level']} {line['logger']}: "
                               f"{PEM.sub(REDACTED, line['message'])}\n" for line in log)
    parts["integrity_check.txt"] = "\n".join(integrity if integrity is not None else ["not checked"]) + "\n"
    return parts


def archive(parts: dict[str, str], made_at_s: float) -> bytes:
    """The tar.gz of ``parts`` (names inside :data:`FOLDER`), its files dated ``made_at_s``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in parts.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"{FOLDER}/{name}")
            info.size, info.mtime, info.mode = len(data), int(made_at_s), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
