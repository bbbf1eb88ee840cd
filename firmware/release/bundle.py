"""The offline release bundle: one file that installs or updates a table with no network.

A technician updating forty tables carries one file on a USB stick::

    mjtable-0.2.0.bundle.tar
      mjtable-0.2.0/MANIFEST.json      name, version, platforms, the SHA-256 of every other file
      mjtable-0.2.0/MANIFEST.json.sig  optional: an Ed25519 signature of MANIFEST.json
      mjtable-0.2.0/wheels/*.whl       the project's wheel and every dependency's, for each platform
      mjtable-0.2.0/config/...         the default configuration (table models, rule sets, scenarios)
      mjtable-0.2.0/systemd/mjtable.service, mjtable-web.service

The wheels are those of the table (Raspberry Pi OS bookworm: aarch64,
CPython 3.11, glibc 2.36) and, by default, of the machine that builds the
bundle too, so the same file can be tried on a bench PC first.  Opening a
bundle checks every file against the manifest, refuses anything unlisted or
outside the bundle's folder, and checks the signature when the table trusts
a key (``/etc/mjtable/release-key.pub``): a table that trusts a key refuses
an unsigned or wrongly signed bundle.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from firmware.faults import TableError
from firmware.i18n import worded
from firmware.private_files import write_private

log = logging.getLogger(__name__)

FORMAT = 1
TABLE_PLATFORM = "linux_aarch64"          # a Raspberry Pi 4/5 running Raspberry Pi OS bookworm (64-bit)
TABLE_PYTHON = "3.11"
TABLE_GLIBC = (2, 36)                     # bookworm's glibc: wheels up to manylinux_2_36 run there
SIGNATURE = "MANIFEST.json.sig"


def host_platform() -> str:
    return f"linux_{platform.machine()}"


def platform_tags(plat: str, glibc: tuple[int, int] = TABLE_GLIBC) -> list[str]:
    """pip's ``--platform`` values for ``linux_<arch>``: every manylinux tag up to the table's glibc."""
    arch = plat.removeprefix("linux_")
    tags = [f"manylinux_{glibc[0]}_{minor}_{arch}" for minor in range(glibc[1], 16, -1)]
    return tags + [f"manylinux2014_{arch}", f"linux_{arch}"]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _pip(*args: str) -> None:
    result = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise worded(TableError, "pip %(command)s failed: %(output)s", command=args[0],
                     output=(result.stderr or result.stdout).strip()[-2000:])


# -- building -------------------------------------------------------------------------
def build_bundle(project: Path, out_dir: Path, platforms: list[str], python: str = TABLE_PYTHON,
                 extras: str = "pi", find_links: Path | None = None, sign_key: Path | None = None) -> Path:
    """Build the project's wheel, gather its dependencies' wheels for every platform, and write the bundle.

    ``find_links``: take dependencies from this folder of wheels only (no
    index), e.g. a wheelhouse kept for building with no network."""
    from firmware.config_paths import shipped_dir

    project = project.absolute()                 # (pip reads a relative path as a package name)
    if not (project / "setup.cfg").is_file():
        raise worded(TableError, "--project %(project)s: not a checkout of mjtable (no setup.cfg)", project=project)
    if sign_key is not None and not sign_key.is_file():
        raise worded(TableError, "--sign %(key)s: no such file", key=sign_key)
    with tempfile.TemporaryDirectory(prefix="mjtable-bundle-") as tmp:
        wheel_dir = Path(tmp) / "project"
        _pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(wheel_dir), str(project))
        wheel = next(wheel_dir.glob("mjtable-*.whl"))
        version = wheel.name.split("-")[1]
        folder = Path(tmp) / f"mjtable-{version}"
        wheels = folder / "wheels"
        wheels.mkdir(parents=True)
        source = ["--no-index", "--find-links", str(find_links)] if find_links else []
        for plat in platforms:
            tags = [t for tag in platform_tags(plat) for t in ("--platform", tag)]
            _pip("download", "--quiet", "--only-binary=:all:", *tags, "--python-version", python,
                 "--implementation", "cp", "-d", str(wheels), *source, f"{wheel}[{extras}]" if extras else str(wheel))
        shutil.copytree(shipped_dir(), folder / "config",
                        ignore=shutil.ignore_patterns("__init__.py", "__pycache__", "systemd", "*.pyc"))
        (folder / "systemd").mkdir()
        for unit in sorted((shipped_dir() / "systemd").glob("*.service")):     # the controller's, the web page's
            shutil.copyfile(unit, folder / "systemd" / unit.name)
        files = {str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}
        manifest = {"format": FORMAT, "name": "mjtable", "version": version, "python": python,
                    "platforms": platforms, "extras": extras, "files": files}
        (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        if sign_key is not None:
            (folder / SIGNATURE).write_bytes(_sign(sign_key, (folder / "MANIFEST.json").read_bytes()))
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / f"mjtable-{version}.bundle.tar"
        partial = target.with_suffix(".tar.partial")
        with tarfile.open(partial, "w") as tar:
            tar.add(folder, arcname=folder.name)
        partial.replace(target)
    return target


# -- opening ----------------------------------------------------------------------------
@dataclass
class OpenedBundle:
    folder: Path
    manifest: dict
    signed: bool

    @property
    def version(self) -> str:
        return self.manifest["version"]

    @property
    def wheels(self) -> Path:
        return self.folder / "wheels"


def open_bundle(path: Path, into: Path, trusted_key: Path | None = None) -> OpenedBundle:
    """Unpack ``path`` into ``into`` and check it; TableError naming what is wrong."""
    try:
        with tarfile.open(path) as tar:
            tar.extractall(into, filter="data")     # (refuses absolute paths, .., devices, links out)
    except tarfile.ReadError:
        raise worded(TableError, "%(path)s: not a release bundle (not a tar file)", path=path) from None
    except (tarfile.TarError, OSError) as exc:
        raise worded(TableError, "%(path)s: not a release bundle (%(problem)s)", path=path,
                     problem=str(exc).splitlines()[0]) from None
    tops = [p for p in into.iterdir()]
    if len(tops) != 1 or not (tops[0] / "MANIFEST.json").is_file():
        raise worded(TableError, "%(path)s: not a release bundle (no single folder with a MANIFEST.json)", path=path)
    folder = tops[0]
    raw = (folder / "MANIFEST.json").read_bytes()
    try:
        manifest = json.loads(raw)
        files: dict[str, str] = manifest["files"]
        manifest["version"]
    except (ValueError, KeyError, TypeError) as exc:
        raise worded(TableError, "%(path)s: its MANIFEST.json is unreadable (%(problem)s)", path=path,
                     problem=exc) from None
    if manifest.get("format") != FORMAT:
        raise worded(TableError, "%(path)s: bundle format %(format)r; this installer reads format %(ours)s", path=path,
                     format=manifest.get("format"), ours=FORMAT)
    present = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} - {"MANIFEST.json", SIGNATURE}
    if present - set(files):
        raise worded(TableError, "%(path)s: files not in its manifest: %(files)s", path=path,
                     files=", ".join(sorted(present - set(files))))
    for name, digest in files.items():
        if name not in present:
            raise worded(TableError, "%(path)s: %(file)s is missing", path=path, file=name)
        if _sha256(folder / name) != digest:
            raise worded(TableError, "%(path)s: %(file)s does not match its checksum (a damaged copy?)", path=path,
                         file=name)
    signature = folder / SIGNATURE
    if trusted_key is not None:
        if not signature.is_file():
            raise worded(TableError, "%(path)s: not signed, and this table trusts only bundles signed by %(key)s",
                         path=path, key=trusted_key)
        _verify(trusted_key, raw, signature.read_bytes(), path)
    return OpenedBundle(folder, manifest, signature.is_file())


# -- signatures (Ed25519) -----------------------------------------------------------------
DEFAULT_KEY_NAME = "release-signing"


def default_key_dir() -> Path:
    """Where ``bundle --new-key NAME`` keeps the pair: ``$XDG_CONFIG_HOME/mjtable`` (``~/.config/mjtable``), out of
    any checkout."""
    import os

    base = os.environ.get("XDG_CONFIG_HOME") or ""
    return (Path(base) if Path(base).is_absolute() else Path.home() / ".config") / "mjtable"


def signing_key_paths(name: str | None, key_out: Path | None) -> tuple[Path, Path]:
    """(private, public) for a new pair: ``key_out`` (the private key's file, the public one beside it as .pub), or
    a bare NAME in :func:`default_key_dir`, or a NAME with a folder in it (``dist/parlour``) as that path."""
    if key_out is not None:
        private = Path(key_out)
        return private, private.with_suffix(".pub")
    name = name or DEFAULT_KEY_NAME
    stem = Path(name) if ("/" in name or name.startswith(".")) else default_key_dir() / name
    if stem.suffix in (".pem", ".key", ".pub"):
        stem = stem.with_suffix("")
    return stem.with_suffix(".pem"), stem.with_suffix(".pub")


def work_tree_of(path: Path) -> Path | None:
    """The git work tree ``path`` would be in (a folder above it holding ``.git``), or None."""
    folder = Path(path).absolute().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def refuse_in_work_tree(path: Path, option: str) -> None:
    """TableError when ``path`` lies in a git work tree that does not ignore it: a private key there is one
    ``git add .`` from being published.  Ignored (``.gitignore``, ``.git/info/exclude``): allowed."""
    tree = work_tree_of(path)
    if tree is None:
        return
    try:
        done = subprocess.run(["git", "-C", str(tree), "check-ignore", "-q", "--no-index", "--",
                               str(Path(path).absolute())], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise worded(TableError, "%(option)s %(path)s: inside the git work tree %(tree)s, and git cannot say "
                     "whether it is ignored (%(problem)s); write it out of the checkout (the default: "
                     "%(folder)s/NAME.pem, or --key-out FILE) or make git ignore it (.gitignore)", option=option,
                     path=path, tree=tree, problem=exc, folder=default_key_dir()) from None
    if done.returncode == 0:
        return
    if done.returncode == 1:
        raise worded(TableError, "%(option)s %(path)s: a private key inside the git work tree %(tree)s, not ignored "
                     "by it; write it out of the checkout (the default: %(folder)s/NAME.pem, or --key-out FILE) or "
                     "make git ignore it (.gitignore)", option=option, path=path, tree=tree, folder=default_key_dir())
    raise worded(TableError, "%(option)s %(path)s: a private key inside the git work tree %(tree)s, git cannot say "
                 "it is ignored (%(problem)s); write it out of the checkout (the default: %(folder)s/NAME.pem, or "
                 "--key-out FILE) or make git ignore it (.gitignore)", option=option, path=path, tree=tree,
                 problem=done.stderr.strip(), folder=default_key_dir())


def make_key_pair(private: Path, public: Path) -> None:
    """A new Ed25519 key pair: the private key signs bundles (keep it off the tables), the public one is trusted."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    for path in (private, public):
        if path.exists():
            raise worded(TableError, "%(path)s exists: a new key would lock every table that trusts the old one "
                         "out; choose another name", path=path)
    key = Ed25519PrivateKey.generate()
    write_private(private, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()), replace=False)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))


def check_public_key(public: Path) -> None:
    """TableError unless ``public`` is an Ed25519 public key (a private key here would be published)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        data = public.read_bytes()
    except OSError as exc:
        raise worded(TableError, "%(path)s: %(problem)s", path=public, problem=exc.strerror or exc) from None
    if b"PRIVATE KEY" in data:
        raise worded(TableError, "%(path)s: a private key; trust the public one (.pub), keep the private one off the "
                     "tables", path=public)
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        raise worded(TableError, "%(path)s: not a public key (PEM)", path=public) from None
    if not isinstance(key, Ed25519PublicKey):
        raise worded(TableError, "%(path)s: not an Ed25519 public key", path=public)


def _sign(private: Path, data: bytes) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    except OSError as exc:
        raise worded(TableError, "%(path)s: %(problem)s", path=private, problem=exc.strerror or exc) from None
    except (ValueError, TypeError):
        raise worded(TableError, "%(path)s: not a private key (PEM, no password)", path=private) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise worded(TableError, "%(path)s: not an Ed25519 private key", path=private)
    return key.sign(data)


def _verify(public: Path, data: bytes, signature: bytes, bundle: Path) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(public.read_bytes())
    except (OSError, ValueError) as exc:
        raise worded(TableError, "%(path)s: not a public key (%(problem)s)", path=public, problem=exc) from None
    if not isinstance(key, Ed25519PublicKey):
        raise worded(TableError, "%(path)s: not an Ed25519 public key", path=public)
    try:
        key.verify(signature, data)
    except InvalidSignature:
        raise worded(TableError, "%(path)s: its signature does not match the key %(key)s", path=bundle,
                     key=public) from None
