"""A table's ``[fleet]`` files checked before they are needed: the CA, its certificate and key, the command key.

A file that is missing or wrong fails only at connect time, as a bare
errno at every retry or as the broker's "Not authorized" for every message.
:func:`check_fleet_files` finds it first, for ``mjtable config check`` and
for the link at start-up (one error naming the file and the key):

* every file the section names can be read (by this user);
* ``ca_file`` holds PEM certificates, ``cert_file`` one, signed by a CA of
  ``ca_file``, whose CN is ``table_id`` (the broker takes the CN as the
  table's name: its ACL lets the table write only under
  ``mj/v1/<site>/tbl/<CN>/``) and, given ``now_s``, valid then;
* ``key_file`` holds an unencrypted private key, the one of ``cert_file``;
* ``command_key_file`` holds the keys a table trusts for commands.

:func:`check_tls_files` is the certificate part alone (``sim --fleet``'s
simulated tables).  Each :class:`FileProblem` names the key and the file;
:func:`problem_lines` words them as the table model's other errors
(``<table file>: table [fleet] key '<key>': <file>: ...``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from firmware.fleet.command_auth import load_verify_keys

if TYPE_CHECKING:
    from firmware.config import TableConfig


@dataclass(frozen=True)
class FileProblem:
    key: str            # the [fleet] key that names the file
    path: Path
    what: str

    def __str__(self) -> str:
        return f"key '{self.key}': {self.path}: {self.what}"


def _read(key: str, path: Path, problems: list[FileProblem]) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        problems.append(FileProblem(key, path, f"cannot be read ({exc.strerror or exc})"))
        return None


def _certificates(key: str, path: Path, data: bytes, problems: list[FileProblem]) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        problems.append(FileProblem(key, path, "not a PEM certificate"))
        return []


def _signed_by(cert: x509.Certificate, cas: list[x509.Certificate]) -> bool:
    for ca in cas:
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except (ValueError, TypeError, InvalidSignature):      # (another issuer, or its signature does not verify)
            continue
    return False


def _common_name(cert: x509.Certificate) -> str:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


def _public(key: Any) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def check_tls_files(table_id: str, ca_file: Path, cert_file: Path, key_file: Path,
                    now_s: float | None = None) -> list[FileProblem]:
    """What is wrong with a table's CA, certificate and key (nothing: ``[]``); ``now_s`` (Unix seconds) also
    checks that the certificate is valid then."""
    problems: list[FileProblem] = []
    ca_data, cert_data, key_data = (_read(k, p, problems) for k, p in (("ca_file", ca_file), ("cert_file", cert_file),
                                                                      ("key_file", key_file)))
    cas = _certificates("ca_file", ca_file, ca_data, problems) if ca_data is not None else []
    certs = _certificates("cert_file", cert_file, cert_data, problems) if cert_data is not None else []
    cert = certs[0] if certs else None
    if cert is not None:
        cn = _common_name(cert)
        if cn != table_id:
            problems.append(FileProblem("cert_file", cert_file,
                                        f"its CN is {cn!r}, not the table_id {table_id!r}: the broker would take "
                                        f"this table for {cn!r} and refuse every message under {table_id!r} (use "
                                        f"{table_id}'s certificate, or table_id = \"{cn}\")"))
        if cas and not _signed_by(cert, cas):
            problems.append(FileProblem("cert_file", cert_file, f"not signed by the CA in {ca_file} (the broker "
                                                                f"would refuse it: another parlour's CA?)"))
        if now_s is not None:
            now = datetime.fromtimestamp(now_s, timezone.utc)
            start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
            if not start <= now <= end:
                problems.append(FileProblem("cert_file", cert_file,
                                            f"valid from {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC, not "
                                            f"now ({now:%Y-%m-%d %H:%M}): make a new one (mjtable fleet certs "
                                            f"table {table_id} --force) or set the clock right"))
    if key_data is not None:
        try:
            key = serialization.load_pem_private_key(key_data, password=None)
        except (ValueError, TypeError):
            problems.append(FileProblem("key_file", key_file, "not an unencrypted PEM private key"))
        else:
            if cert is not None and _public(key.public_key()) != _public(cert.public_key()):
                problems.append(FileProblem("key_file", key_file, f"not the key of {cert_file} (they do not belong "
                                                                  f"together: another table's key?)"))
    return problems


def check_fleet_files(cfg: "TableConfig", now_s: float | None = None) -> list[FileProblem]:
    """Every file of the table model's ``[fleet]`` section (see the module's docstring)."""
    section = cfg.fleet
    if section is None:
        return []
    files = section.files(cfg.base_dir)
    problems: list[FileProblem] = []
    if files["ca_file"] is not None and files["cert_file"] is not None and files["key_file"] is not None:
        problems += check_tls_files(section.table_id, files["ca_file"], files["cert_file"], files["key_file"], now_s)
    command_keys = files["command_key_file"]
    if command_keys is not None and _read("command_key_file", command_keys, problems) is not None:
        try:
            load_verify_keys(command_keys)
        except ValueError as exc:
            problems.append(FileProblem("command_key_file", command_keys,
                                        str(exc).removeprefix(f"{command_keys}: ")))
    return problems


def problem_lines(cfg: "TableConfig", now_s: float | None = None) -> list[str]:
    """The problems as lines naming the table file, the section and the key, and the file."""
    return [f"{cfg.source or 'the table model'}: table [fleet] {problem}" for problem in check_fleet_files(cfg, now_s)]
