"""Secrets on disk: written with their mode from the first byte, replaced in one rename, links not followed."""

from __future__ import annotations

import os
import stat

import pytest

from firmware.fleet import broker_config
from firmware.private_files import write_private


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_replaced_secret_is_never_readable_by_others(tmp_path, monkeypatch):
    target = tmp_path / "table.key"
    target.write_text("old, readable by all\n")
    target.chmod(0o644)
    seen = []
    real_replace = os.replace

    def watching_replace(src, dst):             # the moment before the new file takes the target's name
        seen.append((_mode(src), open(src, "rb").read()))
        return real_replace(src, dst)
    monkeypatch.setattr(os, "replace", watching_replace)
    write_private(target, b"secret")
    assert seen == [(0o600, b"secret")] and _mode(target) == 0o600 and target.read_bytes() == b"secret"
    assert [p.name for p in tmp_path.iterdir()] == ["table.key"]          # (no temporary file left)


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not to be touched")
    link = tmp_path / "ca.key"
    link.symlink_to(elsewhere)
    write_private(link, b"secret")
    assert not link.is_symlink() and link.read_bytes() == b"secret" and elsewhere.read_text() == "not to be touched"
    with pytest.raises(FileExistsError, match="ca.key exists"):
        write_private(link, b"other", replace=False)
    assert link.read_bytes() == b"secret"


def test_a_failed_write_leaves_the_old_secret_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "passwd"
    write_private(target, b"old")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(OSError, match="No space"):
        write_private(target, b"new")
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["passwd"]


def test_the_broker_configs_secrets_use_it(tmp_path):
    target = tmp_path / "passwd"
    target.write_text("old\n")
    target.chmod(0o644)
    broker_config._secret(target, "viewer:hash\n")
    assert _mode(target) == 0o600 and target.read_text() == "viewer:hash\n"
