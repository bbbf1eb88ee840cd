"""Setting the web page up: its unit and install, users and passwords, the certificate, the shipped files.

The unit runs a command line the CLI accepts, as its own user with no
devices, a lower priority and a memory cap; ``mjtable install`` writes it
and the table's certificate once (kept by updates and ``--force``);
``mjtable web passwd`` writes Argon2id hashes only; ``mjtable web`` refuses
plain HTTP off loopback; the tiles shipped are the generator's, drawn with
no text; the wheel carries the templates, the script, the styles and the tiles.
"""

from __future__ import annotations

import configparser
import io
import json
import os
import shlex
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from firmware.cli.main import build_parser, main
from firmware.config_paths import shipped_dir
from firmware.web import make_tiles
from firmware.web.users import Role, Users, UsersError

WEB_UNIT = shipped_dir() / "systemd" / "mjtable-web.service"
ROOT = Path(__file__).resolve().parents[3]


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str
    parser.read_string(WEB_UNIT.read_text())
    return parser


def test_the_web_unit_is_its_own_user_without_devices_low_priority_capped():
    service = _unit()["Service"]
    argv = shlex.split(service["ExecStart"])
    assert argv[:2] == ["/opt/mjtable/current/bin/mjtable", "web"]
    args = build_parser().parse_args(argv[1:])
    assert args.func.__module__ == "firmware.cli.web_cmd" and args.tls_cert and args.tls_key
    assert str(args.state) == "/var/lib/mjtable/table.db" and str(args.socket) == "/run/mjtable/diag.sock"
    assert service["User"] == "mjtable-web" and service["SupplementaryGroups"] == "mjtable-tech"
    assert service["PrivateDevices"] == "yes" and service["DevicePolicy"] == "closed"    # no GPIO, no serial port
    assert int(service["Nice"]) > 0 and service["MemoryMax"].endswith("M")
    assert "/var/lib/mjtable" in service["ReadOnlyPaths"].split() and service["ProtectSystem"] == "strict"


def test_install_writes_the_web_unit_and_the_certificate_once(tmp_path, capsys):
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "etc/systemd/system/mjtable-web.service").read_text() == WEB_UNIT.read_text()
    web = tmp_path / "etc/mjtable/web"
    assert stat.S_IMODE(os.stat(web).st_mode) == 0o750 and stat.S_IMODE(os.stat(web / "tls.key").st_mode) == 0o640
    assert "SHA-256" in out and "no default password" in out and "useradd --system --no-create-home" in out
    cert = (web / "tls.crt").read_bytes()
    Users.load(web / "users.json").set_password("ana", "a-long-password", Role.TECHNICIAN)
    assert main(["install", "--config-only", "--root", str(tmp_path), "--force"]) == 0
    assert (web / "tls.crt").read_bytes() == cert and (web / "users.json").exists()      # kept by --force
    assert "no user yet" not in capsys.readouterr().out


def _another_group() -> int:
    """A group this process may give its files that is not its own (any, as root)."""
    import grp

    others = [g for g in os.getgroups() if g != os.getegid()]
    if os.geteuid() == 0:
        return next((g.gr_gid for g in grp.getgrall() if g.gr_gid != os.getegid()), 4242)
    if not others:
        pytest.skip("this user is in one group only: no other group to give a file")
    return others[0]


def test_install_force_keeps_the_web_files_group(tmp_path, monkeypatch):
    """``--force`` copies the web folder aside and back: the users and the key keep their group (the web
    page's user reads them through it), their owner and their modes."""
    from firmware.cli import install_cmd

    monkeypatch.setattr(install_cmd, "WEB_GROUP", "mjtable-web-not-on-this-system")
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0
    web = tmp_path / "etc/mjtable/web"
    Users.load(web / "users.json").set_password("ana", "a-long-password", Role.TECHNICIAN)
    gid = _another_group()
    for path in (web, web / "users.json", web / "tls.key", web / "tls.crt"):
        os.chown(path, -1, gid)
    before = {p.name: (os.stat(p).st_uid, stat.S_IMODE(os.stat(p).st_mode)) for p in web.iterdir()}
    assert main(["install", "--config-only", "--root", str(tmp_path), "--force"]) == 0
    assert all(os.stat(p).st_gid == gid for p in (web, web / "users.json", web / "tls.key", web / "tls.crt"))
    assert {p.name: (os.stat(p).st_uid, stat.S_IMODE(os.stat(p).st_mode)) for p in web.iterdir()} == before


def test_install_puts_the_web_files_in_the_web_group_when_it_exists(tmp_path, monkeypatch):
    import grp

    from firmware.cli import install_cmd

    gid = _another_group()
    try:
        name = grp.getgrgid(gid).gr_name
    except KeyError:
        pytest.skip(f"group {gid} has no name here")
    monkeypatch.setattr(install_cmd, "WEB_GROUP", name)
    assert main(["install", "--config-only", "--root", str(tmp_path)]) == 0
    web = tmp_path / "etc/mjtable/web"
    assert os.stat(web).st_gid == gid and os.stat(web / "tls.key").st_gid == gid
    assert stat.S_IMODE(os.stat(web / "tls.key").st_mode) == 0o640


def test_passwd_writes_argon2id_hashes_only(tmp_path, monkeypatch, capsys):
    users = tmp_path / "users.json"
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct-horse-1\n"))
    assert main(["web", "passwd", "ana", "--role", "technician", "--users", str(users), "--password-stdin"]) == 0
    doc = json.loads(users.read_text())
    assert doc["users"]["ana"]["role"] == "technician" and doc["users"]["ana"]["hash"].startswith("$argon2id$")
    assert "correct-horse-1" not in users.read_text() and stat.S_IMODE(os.stat(users).st_mode) == 0o640
    loaded = Users.load(users)
    assert loaded.verify("ana", "correct-horse-1").role is Role.TECHNICIAN
    assert loaded.verify("ana", "wrong-horse-1") is None and loaded.verify("bob", "correct-horse-1") is None
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    assert main(["web", "passwd", "bob", "--users", str(users), "--password-stdin"]) == 2
    assert "a password has 10 to 256 characters" in capsys.readouterr().err
    with pytest.raises(UsersError, match="user name 'Bob!'"):
        loaded.set_password("Bob!", "long-enough-pw", Role.STAFF)
    assert main(["web", "passwd", "ana", "--users", str(users), "--remove"]) == 0
    assert not Users.load(users)
    users.write_text('{"users": {"eve": {"role": "staff", "hash": "plain"}}}')
    with pytest.raises(UsersError, match="not a users file"):
        Users.load(users)


def test_passwd_at_the_end_of_input_is_one_line_exit_2_and_nothing_written(tmp_path):
    """No terminal and nothing on standard input (getpass reads stdin then: EOFError; it was a traceback); the same
    with --password-stdin.  A real process, with no controlling terminal (its own session), so getpass cannot open
    /dev/tty and reads the closed input as it would under a service or a script."""
    users = tmp_path / "users.json"
    for extra in ([], ["--password-stdin"]):
        done = subprocess.run([sys.executable, "-m", "firmware.cli.main", "web", "passwd", "ana", "--users", str(users),
                               *extra], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              start_new_session=True, cwd=ROOT)
        err = [line for line in done.stderr.splitlines() if line.startswith("mjtable")]   # (and getpass's warnings)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(err) == 1 and err[0].startswith("mjtable: web passwd: no password") and "not changed" in err[0], err
        assert done.stderr.rstrip().endswith("(--password-stdin reads it from a pipe)" if not extra else "not changed")
        assert not users.exists() and list(tmp_path.iterdir()) == []


def test_passwd_eof_at_the_second_prompt_changes_nothing(tmp_path, monkeypatch, capsys):
    users = tmp_path / "users.json"
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct-horse-1\n"))
    assert main(["web", "passwd", "ana", "--users", str(users), "--password-stdin"]) == 0
    before = users.read_bytes()
    answers = iter(["another-horse-2"])

    def prompt(_text: str = "") -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None
    monkeypatch.setattr("getpass.getpass", prompt)
    assert main(["web", "passwd", "ana", "--users", str(users)]) == 2
    err = capsys.readouterr().err
    assert "no password given (end of input)" in err and "Traceback" not in err
    assert users.read_bytes() == before


def test_web_refuses_plain_http_off_loopback_and_half_a_tls_pair(tmp_path, capsys):
    assert main(["web", "--host", "0.0.0.0", "--users", str(tmp_path / "u.json")]) == 2
    assert "plain HTTP is served only on loopback" in capsys.readouterr().err
    assert main(["web", "--tls-cert", str(tmp_path / "c.pem"), "--users", str(tmp_path / "u.json")]) == 2
    assert "--tls-cert and --tls-key go together" in capsys.readouterr().err
    assert main(["sim", "--web", "8080"]) == 2
    assert "--web needs --speed" in capsys.readouterr().err


def test_web_cert_makes_a_pair_once(tmp_path, capsys):
    assert main(["web", "cert", "--dir", str(tmp_path), "--name", "table7"]) == 0
    assert "SHA-256" in capsys.readouterr().out
    from cryptography import x509
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "table7" in names.get_values_for_type(x509.DNSName)
    assert main(["web", "cert", "--dir", str(tmp_path)]) == 2
    assert "exists: not replacing it" in capsys.readouterr().err


def test_shipped_tiles_are_the_generators_and_need_no_font(tmp_path):
    make_tiles.main(tmp_path)
    shipped = Path(make_tiles.__file__).parent / "static" / "tiles"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in shipped.iterdir())
    for drawn in tmp_path.iterdir():
        text = drawn.read_text()
        assert text == (shipped / drawn.name).read_text(), f"run python -m firmware.web.make_tiles ({drawn.name})"
        assert "<text" not in text and "font" not in text
    assert len(make_tiles.codes()) == 43


def test_the_shipped_icon_is_the_generators(tmp_path):
    from firmware.web import favicon

    favicon.main(tmp_path)
    shipped = Path(favicon.__file__).parent / "static"
    for name in ("favicon.svg", "favicon.ico"):
        assert (tmp_path / name).read_bytes() == (shipped / name).read_bytes(), "run python -m firmware.web.favicon"
    assert "<text" not in (tmp_path / "favicon.svg").read_text()


def test_the_wheel_carries_the_pages_script_styles_and_tiles(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("mjtable-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("firmware/web/templates/table.html", "firmware/web/templates/_payments.html",
                 "firmware/web/static/mjtable.js", "firmware/web/static/mjtable.css",
                 "firmware/web/static/tiles/5m.svg", "firmware/web/static/tiles/back.svg",
                 "firmware/web/static/favicon.svg", "firmware/web/static/favicon.ico",
                 "firmware/defaults/systemd/mjtable-web.service", "firmware/web/locale/zh_CN/LC_MESSAGES/messages.mo",
                 "firmware/cli/locale/zh_CN/LC_MESSAGES/cli.mo", "firmware/cli/locale/en/LC_MESSAGES/cli.mo"):
        assert name in names, name
