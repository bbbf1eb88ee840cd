"""End-to-end authentication of fleet commands: per-table HMAC-SHA256 keys and/or Ed25519, expiry, replay, limits.

The broker's ACL already decides who may publish a command; this decides
whether the *table* believes it, so a misconfigured or compromised broker
cannot make a table act.  A command is one JSON object::

    {"v": 1, "site": "hall1", "table": "t07", "verb": "ack", "args": {"code": "E41"},
     "issuer": "anna", "issued_at": 1717000000.0, "expires_at": 1717000060.0,
     "nonce": "3q2-7w...", "alg": "ed25519", "key_id": "5f0c...", "sig": "base64..."}

``sig`` signs the canonical JSON of every other field (sorted keys, compact).
A table accepts it only if, in this order: it decodes within the size limit,
the fields have their types, the verb is on the allow-list and is the one of
the topic, the site and table are this table's, the key is one of the
table's keys and the signature verifies, it has not expired, was not issued
in the future (with :data:`CLOCK_SKEW_S` of tolerance) or before this boot
started, lives at most :data:`MAX_TTL_S`, its nonce was not seen before,
and its arguments are valid for the verb: ``session_open`` takes
``{"minutes": N}`` (1 to a day), ``session_close`` nothing, ``ack`` names a
*recoverable* fault code (a latched or hold fault is acknowledged at the
table, by its keys or the local diagnostics socket).  Every refusal is
logged with its reason, a few lines a minute (a flood is summed up, not
logged line by line).  The replay cache holds the nonces of unexpired
commands only, at most :data:`REPLAY_CACHE_SIZE`; when it is full of live
nonces new commands are refused rather than a nonce forgotten.  With a
``store`` (the table database) each accepted nonce is written before the
command is carried out and loaded at the next start, so a restart does not
make a command replayable; a forgotten (expired) nonce raises the floor
below which a command's ``issued_at`` is refused to its expiry, so a clock
set back cannot revive it either.

Ed25519 keys are the parlour's: tables hold only the public key, so a table
broken into cannot sign commands for the others.  An HMAC key is a secret
per table (``mjtable fleet certs command-key --hmac``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from firmware.faults import FaultCode, FaultTier
from firmware.fleet.log_limit import LogLimiter
from firmware.fleet.messages import MAX_COMMAND_BYTES, MessageError, decode, dumps
from firmware.fleet.topics import Verb
from firmware.i18n import worded

log = logging.getLogger(__name__)

CLOCK_SKEW_S = 30.0
MAX_TTL_S = 300.0
REPLAY_CACHE_SIZE = 1024
MAX_SEQ = 2**63 - 1          # the outbox's seq is an SQLite INTEGER: a larger one is a bad argument, not a failing card
MAX_SESSION_MINUTES = 24 * 60   # session_open's minutes (a day at most)
MAX_TIME_S = 2.0**53         # issued_at / expires_at (Unix seconds): finite, and no larger than this
ISSUER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
URL_RE = re.compile(r"^https?://[!-~]{1,1990}$")
SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")
VERSION_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
ROLLOUT_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$")
MAX_WAVE = 1000
HMAC = "hmac-sha256"
ED25519 = "ed25519"


class CommandRefused(Exception):
    """A command the table does not carry out; the text is the reason, sent back to the requester."""


@dataclass(frozen=True)
class Command:
    """A command that passed every check."""

    verb: Verb
    args: dict[str, Any]
    issuer: str
    nonce: str
    expires_at: float


@dataclass(frozen=True)
class VerifyKey:
    alg: str
    key_id: str
    secret: bytes = b""                           # HMAC
    public: Ed25519PublicKey | None = None        # Ed25519

    def verify(self, message: bytes, signature: bytes) -> bool:
        if self.alg == HMAC:
            return hmac.compare_digest(hmac.new(self.secret, message, hashlib.sha256).digest(), signature)
        try:
            self.public.verify(signature, message)
            return True
        except InvalidSignature:
            return False


@dataclass(frozen=True)
class SigningKey:
    """What a technician's console (or a test) signs with."""

    alg: str
    key_id: str
    secret: bytes = b""
    private: Ed25519PrivateKey | None = None

    def sign(self, message: bytes) -> bytes:
        if self.alg == HMAC:
            return hmac.new(self.secret, message, hashlib.sha256).digest()
        return self.private.sign(message)

    def verify_key(self) -> VerifyKey:
        if self.alg == HMAC:
            return VerifyKey(HMAC, self.key_id, secret=self.secret)
        return VerifyKey(ED25519, self.key_id, public=self.private.public_key())


def _hmac_id(secret: bytes) -> str:
    return hashlib.sha256(b"mjtable-hmac-id" + secret).hexdigest()[:16]


def _ed_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def hmac_key(secret: bytes) -> SigningKey:
    if len(secret) < 16:
        raise worded(ValueError, "an HMAC command key has at least 16 bytes")
    return SigningKey(HMAC, _hmac_id(secret), secret=secret)


def ed25519_key(private: Ed25519PrivateKey) -> SigningKey:
    return SigningKey(ED25519, _ed_id(private.public_key()), private=private)


def load_verify_keys(path: Path) -> list[VerifyKey]:
    """The keys a table trusts, from one file: PEM Ed25519 public keys and/or lines ``hmac-sha256:<hex>``
    (several for a key rotation).  ValueError names the file and what is wrong."""
    text = _read(path)
    if "PRIVATE KEY" in text:
        raise worded(ValueError, "%(path)s: holds a private key; a table needs only the public key", path=path)
    keys: list[VerifyKey] = []
    for block in re.findall(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", text, re.S):
        public = serialization.load_pem_public_key(block.encode())
        if not isinstance(public, Ed25519PublicKey):
            raise worded(ValueError, "%(path)s: a public key that is not Ed25519", path=path)
        keys.append(VerifyKey(ED25519, _ed_id(public), public=public))
    rest = re.sub(r"-----BEGIN [A-Z ]+-----.*?-----END [A-Z ]+-----", "", text, flags=re.S)
    for line in rest.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keys.append(hmac_key(_hex_secret(path, line)).verify_key())
    if not keys:
        raise worded(ValueError, "%(path)s: no command key (a PEM Ed25519 public key or a line hmac-sha256:<hex>)",
                     path=path)
    return keys


def load_signing_key(path: Path) -> SigningKey:
    """A console's key: a PEM Ed25519 private key, or one line ``hmac-sha256:<hex>``."""
    text = _read(path)
    if "PRIVATE KEY" in text:
        private = serialization.load_pem_private_key(text.encode(), password=None)
        if not isinstance(private, Ed25519PrivateKey):
            raise worded(ValueError, "%(path)s: a private key that is not Ed25519", path=path)
        return ed25519_key(private)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if len(lines) != 1:
        raise worded(ValueError, "%(path)s: expected one line hmac-sha256:<hex> or a PEM Ed25519 private key",
                     path=path)
    return hmac_key(_hex_secret(path, lines[0]))


def _read(path: Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise worded(ValueError, "%(path)s: cannot read the command key (%(problem)s)", path=path,
                     problem=getattr(exc, "strerror", None) or exc) from None


def _hex_secret(path: Path, line: str) -> bytes:
    value = line[len(HMAC) + 1:] if line.startswith(HMAC + ":") else ""
    try:
        secret = bytes.fromhex(value)
    except ValueError:
        secret = b""
    if len(secret) < 16:
        raise worded(ValueError, "%(path)s: '%(line)s...' is not hmac-sha256:<at least 32 hex digits>", path=path,
                     line=line[:20])
    return secret


def signed_bytes(body: dict[str, Any]) -> bytes:
    return dumps({k: v for k, v in body.items() if k != "sig"}).encode("utf-8")


def verify_signature(body: dict[str, Any], keys: list[VerifyKey]) -> None:
    """``body``'s ``sig`` (with its ``alg`` and ``key_id``, strings) verifies with one of ``keys`` over the canonical
    JSON of its other fields; else CommandRefused saying why (an unknown key, not base64, a bad signature)."""
    key = next((k for k in keys if k.alg == body["alg"] and k.key_id == body["key_id"]), None)
    if key is None:
        raise CommandRefused(f"signed with an unknown key ({body['alg'][:16]} {body['key_id'][:32]})")
    try:
        signature = base64.b64decode(body["sig"], validate=True)
    except ValueError:
        raise CommandRefused("bad signature (not base64)") from None
    if not key.verify(signed_bytes(body), signature):
        raise CommandRefused("bad signature")


def sign_command(key: SigningKey, *, site: str, table: str, verb: Verb | str, args: dict[str, Any] | None,
                 issuer: str, issued_at: float, ttl_s: float = 60.0, nonce: str | None = None) -> bytes:
    """A signed command (``issued_at``: the console's wall clock, Unix seconds)."""
    body = {"v": 1, "site": site, "table": table, "verb": Verb(verb).value, "args": args or {}, "issuer": issuer,
            "issued_at": issued_at, "expires_at": issued_at + ttl_s, "nonce": nonce or secrets.token_urlsafe(18),
            "alg": key.alg, "key_id": key.key_id}
    body["sig"] = base64.b64encode(key.sign(signed_bytes(body))).decode()
    return dumps(body).encode("utf-8")


@dataclass
class CommandVerifier:
    """Checks commands for one table (see the module's docstring).

    ``wall_clock_s`` is injected (Unix seconds): the composition root passes
    the host clock, the simulator a virtual one.  ``boot_wall_s`` is when
    this boot started by that clock (commands issued before it are refused:
    a command captured before a reboot cannot be replayed after it)."""

    site: str
    table: str
    keys: list[VerifyKey]
    wall_clock_s: Callable[[], float]
    boot_wall_s: float
    cache_size: int = REPLAY_CACHE_SIZE
    store: NonceStore | None = None
    _seen: dict[str, float] = field(default_factory=dict)       # nonce -> expires_at
    refused: int = 0

    def __post_init__(self) -> None:
        self.refusal_log = LogLimiter(log, self.wall_clock_s, "command refusals")   # (the link gives it a timer)
        self._floor_s = self.boot_wall_s          # commands issued before it are refused
        if self.store is not None:
            kept, forgotten_until = self.store.load_nonces()
            self._seen.update(kept)
            self._floor_s = max(self._floor_s, forgotten_until)

    def verify(self, topic_verb: str, payload: bytes) -> Command:
        """The command, or CommandRefused (logged, and counted in ``refused``)."""
        try:
            return self._verify(topic_verb, payload)
        except CommandRefused as exc:
            self.refused += 1
            self.refusal_log.warning("table %s: command cmd/%s refused: %s", self.table, topic_verb[:32], exc)
            raise

    def _verify(self, topic_verb: str, payload: bytes) -> Command:
        try:
            body = decode(payload, MAX_COMMAND_BYTES)
        except MessageError as exc:
            raise CommandRefused(f"not a command: {exc}") from None
        for name, kind in (("v", int), ("site", str), ("table", str), ("verb", str), ("args", dict),
                           ("issuer", str), ("nonce", str), ("alg", str), ("key_id", str), ("sig", str)):
            if not isinstance(body.get(name), kind) or isinstance(body.get(name), bool):
                raise CommandRefused(f"field '{name}' missing or not a {kind.__name__}")
        for name in ("issued_at", "expires_at"):
            value = body.get(name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise CommandRefused(f"field '{name}' missing or not a number")
            if not -MAX_TIME_S <= value <= MAX_TIME_S:       # (an int of any size, 1e400 = inf: no float() on them)
                raise CommandRefused(f"field '{name}' out of range (Unix seconds, at most {MAX_TIME_S:.0f})")
        if body["v"] != 1:
            raise CommandRefused(f"command version {body['v']} (this table reads 1)")
        if body["verb"] not in {v.value for v in Verb} or topic_verb not in {v.value for v in Verb}:
            raise CommandRefused(f"verb '{topic_verb[:32]}' is not allowed (allowed: "
                                 f"{', '.join(v.value for v in Verb)})")
        if body["verb"] != topic_verb:
            raise CommandRefused(f"the command says '{body['verb']}' but came on cmd/{topic_verb}")
        if body["site"] != self.site or body["table"] != self.table:
            raise CommandRefused(f"addressed to table {body['table'][:64]!r} of site {body['site'][:64]!r}, "
                                 f"this is {self.table!r} of {self.site!r}")
        verify_signature(body, self.keys)
        if not ISSUER_RE.match(body["issuer"]) or not NONCE_RE.match(body["nonce"]):
            raise CommandRefused("issuer or nonce of the wrong form")
        if body["nonce"] in self._seen:
            raise CommandRefused("replayed (this nonce was seen before)")
        now = self.wall_clock_s()
        issued, expires = float(body["issued_at"]), float(body["expires_at"])
        if expires < now - CLOCK_SKEW_S:
            raise CommandRefused(f"expired {now - expires:.0f} s ago")
        if issued > now + CLOCK_SKEW_S:
            raise CommandRefused(f"issued {issued - now:.0f} s in the future (clocks apart?)")
        if issued < self._floor_s:
            raise CommandRefused("issued before this table started (or before a command whose nonce it has "
                                 "forgotten expired)")
        if not 0 < expires - issued <= MAX_TTL_S:
            raise CommandRefused(f"lives {expires - issued:g} s (from 0 to {MAX_TTL_S:g} s allowed)")
        verb = Verb(body["verb"])
        args = _check_args(verb, body["args"])
        self._remember(body["nonce"], expires, now)
        return Command(verb, args, body["issuer"], body["nonce"], expires)

    def _remember(self, nonce: str, expires: float, now: float) -> None:
        """Keep an accepted command's nonce (in the store first: a restart must not forget it); the expired ones are
        forgotten, and the floor rises to the latest expiry forgotten (a clock set back cannot revive them)."""
        forget = [n for n, until in self._seen.items() if until < now - CLOCK_SKEW_S]
        floor_s = max([self._floor_s] + [self._seen[n] for n in forget])
        if len(self._seen) - len(forget) >= self.cache_size:
            raise CommandRefused(f"too many commands at once ({self.cache_size} unexpired); try again later")
        if self.store is not None:
            try:
                self.store.save_nonce(nonce, expires, forget, floor_s)
            except Exception as exc:                  # noqa: BLE001 (not carried out unless its nonce is kept)
                raise CommandRefused(f"its nonce cannot be kept ({exc})") from None
        for old in forget:
            del self._seen[old]
        self._floor_s = floor_s
        self._seen[nonce] = expires


class NonceStore(Protocol):
    """Where a table keeps its accepted commands' nonces across restarts (the table database's ``fleet_nonces``,
    :class:`~firmware.store.outbox.SqliteOutbox`)."""

    def load_nonces(self) -> tuple[dict[str, float], float]:
        """(nonce -> expires_at of those kept, the latest expiry of those forgotten)."""

    def save_nonce(self, nonce: str, expires_at: float, forget: list[str], forgotten_until: float) -> None:
        """Keep one more nonce, forget ``forget``, raise the floor, in one write."""


def _check_args(verb: Verb, args: dict[str, Any]) -> dict[str, Any]:
    if verb is Verb.REBIRTH:
        if args:
            raise CommandRefused("rebirth takes no arguments")
        return {}
    if verb is Verb.RESEND_SINCE:
        seq = args.get("seq")
        if set(args) != {"seq"} or not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise CommandRefused("resend_since takes {\"seq\": a whole number >= 0}")
        if seq > MAX_SEQ:
            raise CommandRefused(f"resend_since: seq {_short(seq)} is out of range (a bad argument: a seq is a whole "
                                 f"number from 0 to {MAX_SEQ})")
        return {"seq": seq}
    if verb is Verb.UPDATE:
        return _update_args(args)
    if verb is Verb.ROLLBACK:
        version = args.get("version")
        if not {"version"} <= set(args) <= {"version", "rollout", "wave"} or not isinstance(version, str) \
                or not VERSION_RE.match(version):
            raise CommandRefused("rollback takes {\"version\": the release to roll back from} (and the rollout's "
                                 "\"rollout\" and \"wave\")")
        return {"version": version, **_rollout_args("rollback", args)}
    if verb is Verb.SESSION_OPEN:
        minutes = args.get("minutes")
        if set(args) != {"minutes"} or not isinstance(minutes, int) or isinstance(minutes, bool) \
                or not 1 <= minutes <= MAX_SESSION_MINUTES:
            raise CommandRefused(f"session_open takes {{\"minutes\": a whole number from 1 to {MAX_SESSION_MINUTES}}}")
        return {"minutes": minutes}
    if verb is Verb.SESSION_CLOSE:
        if args:
            raise CommandRefused("session_close takes no arguments")
        return {}
    code = args.get("code")
    if set(args) != {"code"} or not isinstance(code, str):
        raise CommandRefused("ack takes {\"code\": a fault code, e.g. \"E41\"}")
    try:
        fault = FaultCode(code)
    except ValueError:
        raise CommandRefused(f"ack: {code[:8]!r} is not a fault code") from None
    if fault.tier is not FaultTier.RECOVERABLE:
        raise CommandRefused(f"ack: {code} is a {fault.tier.value} fault; it is acknowledged at the table "
                             f"(its keys or the diagnostics socket)")
    return {"code": code}


def _update_args(args: dict[str, Any]) -> dict[str, Any]:
    """``update``: the bundle's ``url`` (http or https, the hall's server), its ``sha256`` (64 hex digits) and its
    ``version`` (a release folder's name: no '/', no leading '.')."""
    url, digest, version = args.get("url"), args.get("sha256"), args.get("version")
    if not {"url", "sha256", "version"} <= set(args) <= {"url", "sha256", "version", "rollout", "wave"}:
        raise CommandRefused("update takes {\"url\": ..., \"sha256\": ..., \"version\": ...} (and the rollout's "
                             "\"rollout\" and \"wave\")")
    if not isinstance(url, str) or not URL_RE.match(url):
        raise CommandRefused("update: url is not an http:// or https:// URL (at most 2,000 plain characters)")
    if not isinstance(digest, str) or not SHA256_RE.match(digest):
        raise CommandRefused("update: sha256 is not 64 hex digits")
    if not isinstance(version, str) or not VERSION_RE.match(version):
        raise CommandRefused("update: version is not a release's version (letters, digits, '.', '+', '_', '-')")
    return {"url": url, "sha256": digest.lower(), "version": version, **_rollout_args("update", args)}


def _rollout_args(verb: str, args: dict[str, Any]) -> dict[str, Any]:
    """The staged update an ``update`` or ``rollback`` belongs to, if it says: ``rollout`` (an id: letters, digits,
    '.', '_', '-') and its ``wave`` (1 to 1000); the table reports them back in its ``meta``."""
    out: dict[str, Any] = {}
    if "rollout" in args:
        rollout = args["rollout"]
        if not isinstance(rollout, str) or not ROLLOUT_RE.match(rollout):
            raise CommandRefused(f"{verb}: rollout is not a rollout's id (letters, digits, '.', '_', '-'; at most 64)")
        out["rollout"] = rollout
    if "wave" in args:
        wave = args["wave"]
        if not isinstance(wave, int) or isinstance(wave, bool) or not 1 <= wave <= MAX_WAVE:
            raise CommandRefused(f"{verb}: wave is not a whole number from 1 to {MAX_WAVE}")
        if "rollout" not in out:
            raise CommandRefused(f"{verb}: a wave belongs to a rollout (give \"rollout\" too)")
        out["wave"] = wave
    return out


def _short(number: int) -> str:
    """A number for a message: a huge one by its size (its digits would fill the answer)."""
    text = str(number)
    return text if len(text) <= 24 else f"{text[:6]}...({len(text)} digits)"
