"""A release bundle fetched from the hall's server for a staged update (``cmd/update``): the URL, the hash, the size.

The hash comes in the signed command; the bundle's own signature is checked
afterwards by :func:`firmware.release.bundle.open_bundle`, as ``mjtable
install`` checks a bundle from a USB stick.  A bundle whose bytes do not
match the hash is deleted and refused before anything is unpacked.
"""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.request
from pathlib import Path

from firmware.faults import TableError
from firmware.i18n import worded

MAX_BUNDLE_BYTES = 1 << 30          # 1 GiB: a bundle for two platforms is a few hundred MB
TIMEOUT_S = 60.0                    # per network read (the socket's timeout, not a clock of ours)


def fetch_bundle(url: str, sha256: str, dest: Path, max_bytes: int = MAX_BUNDLE_BYTES) -> Path:
    """Download ``url`` to ``dest``, checking its size and SHA-256; TableError saying what is wrong."""
    if not url.startswith(("http://", "https://")):
        raise worded(TableError, "%(url)s: only http:// and https:// bundles are fetched", url=url[:200])
    digest = hashlib.sha256()
    size = 0
    partial = dest.with_name(dest.name + ".partial")
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, open(partial, "wb") as out:
            while chunk := response.read(1 << 20):
                size += len(chunk)
                if size > max_bytes:
                    raise worded(TableError, "%(url)s: larger than %(max)s bytes; refused", url=url[:200],
                                 max=max_bytes)
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha256.lower():
            raise worded(TableError, "%(url)s: its SHA-256 is %(got)s, the command says %(sha256)s: refused (a "
                         "damaged or substituted bundle)", url=url[:200], got=digest.hexdigest(), sha256=sha256)
        partial.replace(dest)
    except (urllib.error.URLError, OSError) as exc:
        raise worded(TableError, "%(url)s: cannot fetch it (%(problem)s)", url=url[:200],
                     problem=getattr(exc, "reason", None) or exc) from None
    finally:
        partial.unlink(missing_ok=True)
    return dest
