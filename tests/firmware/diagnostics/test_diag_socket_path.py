"""What lies at the technician's socket's path: a file, a folder, a symbolic link or a staging file left there is
never replaced (the server and ``mjtable sim --diag-socket`` refuse, naming it); a live socket is kept, a stale
one replaced."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from firmware.cli.main import main
from firmware.diagnostics.socket.server import DiagSocketError, DiagSocketServer
from hal.runtime import HOST_CLOCK


def _server(path: Path) -> DiagSocketServer:
    return DiagSocketServer(path, lambda fn, *a: None, lambda request, reply: None, group=None, clock=HOST_CLOCK)


def test_a_file_or_folder_at_the_path_is_never_replaced(tmp_path):
    path = tmp_path / "diag.sock"
    path.write_text("the shift log\n")
    with pytest.raises(DiagSocketError, match=f"{path} is a regular file, not a socket"):
        _server(path).start()
    assert path.read_text() == "the shift log\n"
    path.unlink()
    path.mkdir()
    with pytest.raises(DiagSocketError, match=f"{path} is a folder, not a socket"):
        _server(path).start()
    assert path.is_dir()
    path.rmdir()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DiagSocketError, match="symbolic link"):
        _server(path).start()
    path.unlink()
    staging = tmp_path / "diag.sock.new"
    staging.write_text("keep\n")
    with pytest.raises(DiagSocketError, match=f"{staging} is a regular file"):
        _server(path).start()
    assert staging.read_text() == "keep\n" and not path.exists()


def test_a_live_socket_is_kept_and_a_stale_one_replaced(tmp_path):
    path = tmp_path / "diag.sock"
    live = _server(path)
    live.start()
    try:
        with pytest.raises(DiagSocketError, match="another service is answering"):
            _server(path).start()
        assert live.serving
    finally:
        live.stop()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)          # a socket file nobody listens on
    stale.bind(str(path))
    stale.close()
    server = _server(path)
    server.start()
    try:
        assert server.serving
    finally:
        server.stop()
    assert not path.exists()


def test_sim_refuses_a_diag_socket_path_that_is_a_file(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_text("precious\n")
    assert main(["sim", "--service", "--until-s", "5", "--quiet", "--diag-socket", str(path)]) == 2
    assert f"{path} is a regular file, not a socket" in capsys.readouterr().err
    assert path.read_text() == "precious\n"
    folder = tmp_path / "run"
    folder.mkdir()
    assert main(["sim", "--service", "--until-s", "5", "--quiet", "--diag-socket", str(folder)]) == 2
    assert f"{folder} is a folder, not a socket" in capsys.readouterr().err
