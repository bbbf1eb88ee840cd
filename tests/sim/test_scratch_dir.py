"""A run without --state keeps its throwaway table database on a memory-backed file system when there is one."""

import pytest

from sim import storage


def test_tmpdir_set_by_the_user_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", "/somewhere")
    assert storage.scratch_dir() is None


def test_memory_backed_when_writable(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(storage, "RAM_DIR", str(tmp_path))
    monkeypatch.setattr(storage, "RAM_FREE_MIN", 0)
    assert storage.scratch_dir() == str(tmp_path)
    monkeypatch.setattr(storage, "RAM_DIR", str(tmp_path / "absent"))
    assert storage.scratch_dir() is None


def test_not_when_it_is_small(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(storage, "RAM_DIR", str(tmp_path))
    monkeypatch.setattr(storage, "RAM_FREE_MIN", 1 << 62)
    assert storage.scratch_dir() is None


def test_the_run_uses_it(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from sim.table_run import SimRun

    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(storage, "RAM_DIR", str(tmp_path))       # (the memory-backed folder, whatever the host has)
    monkeypatch.setattr(storage, "RAM_FREE_MIN", 0)
    run = SimRun(hands=1)
    try:
        assert run.state_path.parent.parent == tmp_path and run.state_path.parent.name.startswith("mjtable-")
    finally:
        run.close()
    assert not run.state_path.exists()                              # (scratch: gone with the run)
