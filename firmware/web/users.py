"""Who may use the web page: names, roles and Argon2id password hashes, in one file set at install.

There is no default password.  ``mjtable web passwd NAME --role ROLE`` (as
root, on the table) writes ``/etc/mjtable/web/users.json``; until a user
exists the page only says how to set a password on the table.  Roles:
*staff* may look at everything; a *technician* may also acknowledge faults
and run service tests and jogs.  Passwords are hashed with Argon2id
(argon2-cffi, with OWASP's parameters: 19 MiB, two passes, one lane, so a
login fits the web service's memory cap on a Pi); the file holds only the
hashes and is replaced in one rename, mode 0640.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from firmware.faults import TableError

log = logging.getLogger(__name__)

USERS_FILE = Path("/etc/mjtable/web/users.json")
MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 256
NAME = re.compile(r"[a-z][a-z0-9_.-]{0,31}")
HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
_DUMMY_HASH = HASHER.hash("not a password of anyone")     # verified for unknown names (same time taken)


class Role(str, enum.Enum):
    STAFF = "staff"                 # looks: the table, faults, scoreboard, sensors
    TECHNICIAN = "technician"       # and acts: acknowledge, service tests, jogs

    @property
    def may_act(self) -> bool:
        return self is Role.TECHNICIAN


class UsersError(TableError):
    """The users file cannot be read or written, or a name, role or password is refused (says why)."""


@dataclass(frozen=True)
class User:
    name: str
    role: Role
    hash: str


class Users:
    """The users of one file (read once at start; ``mjtable web passwd`` writes it, then the service restarts)."""

    def __init__(self, users: dict[str, User], path: Path | None = None) -> None:
        self.by_name = users
        self.path = path

    def __bool__(self) -> bool:
        return bool(self.by_name)

    @classmethod
    def load(cls, path: Path) -> "Users":
        """The file's users (none when it does not exist: the page asks for a password to be set)."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls({}, path)
        except OSError as exc:
            raise UsersError(f"{path}: cannot read the users file ({exc.strerror or exc})") from None
        try:
            doc = json.loads(text)
            users = {}
            for name, entry in doc["users"].items():
                if not NAME.fullmatch(name) or not str(entry["hash"]).startswith("$argon2id$"):
                    raise ValueError(f"user {name!r}: a bad name or a hash that is not Argon2id")
                users[name] = User(name, Role(entry["role"]), entry["hash"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsersError(f"{path}: not a users file of mjtable web ({exc})") from None
        return cls(users, path)

    def verify(self, name: str, password: str) -> User | None:
        """The user when the password is right; None otherwise (an unknown name takes the same time)."""
        user = self.by_name.get(name)
        try:
            HASHER.verify(user.hash if user else _DUMMY_HASH, password)
        except (VerificationError, InvalidHashError):
            return None
        return user

    def set_password(self, name: str, password: str, role: Role) -> None:
        """Add or change a user and write the file (one rename, mode 0640)."""
        if not NAME.fullmatch(name):
            raise UsersError(f"user name {name!r}: lower-case letters, digits and . _ - (at most 32, a letter first)")
        check_password(password)
        self.by_name = {**self.by_name, name: User(name, role, HASHER.hash(password))}
        self._write()

    def remove(self, name: str) -> None:
        if name not in self.by_name:
            raise UsersError(f"no user {name!r} in {self.path}")
        self.by_name = {n: u for n, u in self.by_name.items() if n != name}
        self._write()

    def _write(self) -> None:
        assert self.path is not None
        doc = {"version": 1, "users": {u.name: {"role": u.role.value, "hash": u.hash}
                                       for u in sorted(self.by_name.values(), key=lambda u: u.name)}}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".users-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(doc, out, indent=2)
                out.write("\n")
            os.chmod(tmp, 0o640)
            try:                    # readable by the page's group: the folder's (chgrp mjtable-web at install)
                os.chown(tmp, -1, os.stat(self.path.parent).st_gid)
            except PermissionError:
                pass
            os.replace(tmp, self.path)
        except OSError as exc:
            raise UsersError(f"{self.path}: cannot write the users file ({exc.strerror or exc})") from None


def check_password(password: str) -> None:
    if not MIN_PASSWORD_CHARS <= len(password) <= MAX_PASSWORD_CHARS:
        raise UsersError(f"a password has {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters")
    if len(set(password)) < 4:
        raise UsersError("a password needs at least four different characters")
