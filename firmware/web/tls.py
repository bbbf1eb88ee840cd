"""The table's own TLS certificate for its web page: made once at install, kept in ``/etc/mjtable/web``.

A parlour's phones reach the table over a shared Wi-Fi, so the page is
served over TLS.  Each table gets its own key (ECDSA P-256) and a
certificate for its names (the host name, ``NAME.local``, ``localhost``) and
``127.0.0.1``; without a parlour CA it is self-signed, and a phone is told
to trust it once (its SHA-256 fingerprint is printed, to compare with what
the phone shows).  Where the parlour has its own CA (the fleet's), put the
certificate and key it signs at the same paths instead: nothing here
replaces an existing pair.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from firmware.faults import TableError
from firmware.ports.clock import Clock

VALID_DAYS = 3650


class CertificateError(TableError):
    """The certificate or key cannot be made or read (the message says which and why)."""


def make_certificate(cert: Path, key: Path, names: list[str], clock: Clock) -> str:
    """Write a new key (mode 0640) and self-signed certificate for ``names``, valid from the day before
    ``clock``'s date (the host's local date) for ``VALID_DAYS``; return its SHA-256 fingerprint.
    An existing pair is never replaced (CertificateError)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    for path in (cert, key):
        if path.exists():
            raise CertificateError(f"{path} exists: not replacing it (remove both files to make a new pair)")
    private = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0]),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mjtable table")])
    alt = [x509.DNSName(n) for n in dict.fromkeys(names)] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    today = datetime.date.fromtimestamp(clock.wall_s())           # (what date.today() is)
    start = datetime.datetime(today.year, today.month, today.day, tzinfo=datetime.timezone.utc)     # its midnight
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start - datetime.timedelta(days=1))
                   .not_valid_after(start + datetime.timedelta(days=VALID_DAYS))
                   .add_extension(x509.SubjectAlternativeName(alt), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .sign(private, hashes.SHA256()))
    try:
        cert.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
        with os.fdopen(fd, "wb") as out:
            out.write(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
        cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    except OSError as exc:
        raise CertificateError(f"{cert.parent}: cannot write the certificate ({exc.strerror or exc})") from None
    return fingerprint(cert)


def fingerprint(cert: Path) -> str:
    """The certificate's SHA-256 fingerprint as a phone shows it (AB:CD:...)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    except (OSError, ValueError) as exc:
        raise CertificateError(f"{cert}: not a PEM certificate ({exc})") from None
    return ":".join(f"{b:02X}" for b in loaded.fingerprint(hashes.SHA256()))
