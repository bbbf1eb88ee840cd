"""A parlour's certificates and command keys: its CA, one client certificate per table, the broker's, Ed25519/HMAC keys.

* The **CA** (``ca.crt``, ``ca.key``) signs everything; its key is never
  overwritten (a new CA would orphan every table's certificate).
* A **table** gets ``<table>.crt`` / ``<table>.key``: CN = the table id, which
  the broker takes as the username (``use_identity_as_username``) and the
  ACL confines to ``mj/v1/<site>/tbl/<table>/``.  Ids are checked, so no
  certificate names a staff account or a wildcard.
* The **broker** gets ``server.crt`` / ``server.key`` for its host names and
  addresses (subject alternative names: a table checks the broker's name).
* A **command key**: an Ed25519 pair (``<name>.pem`` for the consoles that
  sign, ``<name>.pub`` for the tables) or an HMAC secret ``<name>.hmac``.

Keys are EC P-256 (every TLS stack speaks it), written with mode 0600 and
never over another key unless asked.  Validity starts at ``now``, which the
caller passes (the firmware reads no clock): ``hal.runtime.utc_now()``.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from firmware.fleet.topics import check_id
from firmware.private_files import write_private
from firmware.i18n import worded

CA_DAYS = 3650
LEAF_DAYS = 825


@dataclass(frozen=True)
class Issued:
    cert: Path
    key: Path


def _write(path: Path, data: bytes, secret: bool, replace: bool) -> None:
    """Write a file; a secret with mode 0600.  Without ``replace`` an existing file is an error naming it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, data, mode=0o600 if secret else 0o644, replace=replace)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str, organisation: str = "mjtable parlour") -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(out_dir: Path, now: datetime, *, site: str = "parlour", days: int = CA_DAYS) -> Issued:
    """A new CA in ``out_dir``; refuses if ``ca.key`` is there already."""
    out_dir = Path(out_dir)
    key_path, cert_path = out_dir / "ca.key", out_dir / "ca.crt"
    if key_path.exists():
        raise worded(FileExistsError, "%(key)s exists: a CA key is never overwritten (every table's certificate "
                                      "depends on it)", key=key_path)
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(f"mjtable {check_id(site, 'site')} CA")
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    _write(key_path, _key_pem(key), secret=True, replace=False)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), secret=False, replace=True)
    return Issued(cert_path, key_path)


def load_ca(ca_dir: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    ca_dir = Path(ca_dir)
    try:
        cert = x509.load_pem_x509_certificate((ca_dir / "ca.crt").read_bytes())
        key = serialization.load_pem_private_key((ca_dir / "ca.key").read_bytes(), password=None)
    except FileNotFoundError as exc:
        raise worded(FileNotFoundError, "%(file)s: no CA there (make one with: mjtable fleet certs ca --out "
                                        "%(dir)s)", file=exc.filename, dir=ca_dir) from None
    except ValueError as exc:
        raise worded(ValueError, "%(dir)s: not a CA certificate and key (%(problem)s)", dir=ca_dir, problem=exc) \
            from None
    return cert, key


def _leaf(ca_dir: Path, common_name: str, usage: x509.ObjectIdentifier, now: datetime, days: int,
          alt_names: list[x509.GeneralName] | None = None) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    ca_cert, ca_key = load_ca(ca_dir)
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(ca_cert.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=True, key_cert_sign=False,
                                            crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    if alt_names:
        builder = builder.add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def _save(out_dir: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey,
          replace: bool) -> Issued:
    out_dir = Path(out_dir)
    key_path, cert_path = out_dir / f"{stem}.key", out_dir / f"{stem}.crt"
    if key_path.exists() and not replace:
        raise worded(FileExistsError, "%(key)s exists (give --force to replace it)", key=key_path)
    _write(key_path, _key_pem(key), secret=True, replace=True)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), secret=False, replace=True)
    return Issued(cert_path, key_path)


def make_table_cert(ca_dir: Path, table_id: str, out_dir: Path, now: datetime, *, days: int = LEAF_DAYS,
                    replace: bool = False) -> Issued:
    """A table's client certificate: CN = ``table_id`` (the broker's username for it)."""
    cert, key = _leaf(ca_dir, check_id(table_id, "table id"), ExtendedKeyUsageOID.CLIENT_AUTH, now, days)
    return _save(out_dir, table_id, cert, key, replace)


def make_server_cert(ca_dir: Path, hosts: list[str], out_dir: Path, now: datetime, *, days: int = LEAF_DAYS,
                     replace: bool = False) -> Issued:
    """The broker's certificate for its host names and IP addresses (``hosts[0]`` is its CN)."""
    if not hosts:
        raise worded(ValueError, "the broker's certificate needs at least one host name or address")
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            if not host or any(c in host for c in " /\\:@"):
                raise worded(ValueError, "%(host)r is not a host name or an IP address", host=host) from None
            names.append(x509.DNSName(host))
    cert, key = _leaf(ca_dir, hosts[0], ExtendedKeyUsageOID.SERVER_AUTH, now, days, names)
    return _save(out_dir, "server", cert, key, replace)


def make_command_key(out_dir: Path, name: str = "command", *, hmac_secret: bool = False,
                     replace: bool = False) -> list[Path]:
    """An Ed25519 pair (``name.pem`` private for consoles, ``name.pub`` for the tables' ``command_key_file``), or
    with ``hmac_secret`` one shared secret ``name.hmac`` (both sides)."""
    check_id(name, "key name")
    out_dir = Path(out_dir)
    if hmac_secret:
        path = out_dir / f"{name}.hmac"
        _write(path, f"hmac-sha256:{secrets.token_hex(32)}\n".encode(), secret=True, replace=replace)
        return [path]
    private = Ed25519PrivateKey.generate()
    pem, pub = out_dir / f"{name}.pem", out_dir / f"{name}.pub"
    if pem.exists() and not replace:
        raise worded(FileExistsError, "%(key)s exists (give --force to replace it)", key=pem)
    _write(pem, private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()), secret=True, replace=True)
    _write(pub, private.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo),
           secret=False, replace=True)
    return [pem, pub]
