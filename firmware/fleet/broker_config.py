"""A parlour's Mosquitto configuration: TLS listeners, the ACL that confines each table, hashed staff passwords.

``write_broker_config`` writes into one folder everything the broker needs
(and the passwords in clear, to hand out), so that the folder's files can
be copied to the server as they are
(``install_dir``: where it will be there; the configuration names its files
by that path, Mosquitto taking no paths relative to its configuration):

* ``ca.crt`` (the CA's certificate, never its key), ``server.crt`` and
  ``server.key`` (copied in when made elsewhere);
* ``mosquitto.conf``: anonymous access off; a TLS listener for the tables
  that requires a client certificate from the parlour's CA and takes its CN
  as the username (``require_certificate``, ``use_identity_as_username``);
  a TLS listener for staff and services with passwords; a plain listener on
  loopback only when asked (a service on the broker's own machine);
  retained messages and queued sessions kept across a restart.
* ``acl``: ``pattern`` lines confine every table (``%u`` = its CN) to
  writing its leaves, events and answers under ``mj/v1/<site>/tbl/<table>/``
  (never its ``cmd/`` or ``assign``) and reading its own ``cmd/#``, its
  ``assign`` (the hall's assignment for a tournament round) and its
  ``avail`` (to answer a late Will); ``viewer`` reads the site;
  ``technician`` reads it, sends every command and writes assignments;
  ``service.recorder`` reads it and may ask for ``rebirth`` and
  ``resend_since`` only; ``service.tourney`` (the hall's tournament
  service) reads it, asks for ``rebirth`` and ``resend_since`` and writes
  the tables' assignments.
* ``passwd``: the staff and service accounts in Mosquitto's own ``$7$``
  format (PBKDF2-SHA512, 101 iterations, 12-byte salt, both base64:
  ``$7$101$<salt>$<hash>``, as ``mosquitto_passwd`` writes them).
* ``credentials``: the generated passwords in clear (mode 0600), to hand out
  and then delete: the one file that is not for the server.

Staff account names carry a ``.`` (``staff.viewer``), which no table id may,
so an ACL pattern never makes a staff account a table or the reverse.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from firmware.fleet.topics import PREFIX, check_id
from firmware.ports.broker import BrokerAddress
from firmware.private_files import write_private
from firmware.i18n import worded

PBKDF2_ITERATIONS = 101        # mosquitto_passwd's default for $7$
SALT_BYTES = 12
# what the broker queues for one client that is away (the bridge while the uplink is down, a consumer's
# session): 100 tables' ten hours of play (docs/fleet.md, "The bridge's queue")
MAX_QUEUED_MESSAGES = 100_000
# QoS 1 messages the broker has in flight to one client at once: no limit.  Mosquitto 2.0.11 (Debian 12's)
# miscounts its in-flight quota when it restores a bridge's session from its persistence file after a crash:
# the bridge reconnects and forwards nothing (seen in tests/end_to_end/test_fleet_chain.py at 100 tables a
# parlour; mosquitto issues #2306, #2362, fixed in 2.0.13); without a limit the quota is not counted
MAX_INFLIGHT_MESSAGES = 0
ACCOUNTS = {"staff.viewer": "viewer", "staff.technician": "technician", "service.recorder": "service",
            "service.tourney": "tournament"}


def hash_password(password: str, salt: bytes | None = None, iterations: int = PBKDF2_ITERATIONS) -> str:
    """A password in Mosquitto's ``$7$`` (PBKDF2-SHA512) format."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations)
    return f"$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def check_password(password: str, line_hash: str) -> bool:
    parts = line_hash.split("$")
    if len(parts) != 5 or parts[1] != "7":
        return False
    salt = base64.b64decode(parts[3])
    return secrets.compare_digest(hash_password(password, salt, int(parts[2])), line_hash)


def acl_text(site: str) -> str:
    site_root = f"{PREFIX}/{check_id(site, 'site')}"
    tables = f"{site_root}/tbl"
    return f"""# written by mjtable fleet broker-config: who may read and write what on site {site}
# every table (username = its certificate's CN): its own subtree only; its leaves, events and answers, never its
# commands or its assignment (the hall writes those, signed)
pattern write {tables}/%u/avail
pattern write {tables}/%u/meta
pattern write {tables}/%u/state
pattern write {tables}/%u/faults
pattern write {tables}/%u/counters
pattern write {tables}/%u/warnings
pattern write {tables}/%u/evt/#
pattern write {tables}/%u/resp/#
pattern read {tables}/%u/cmd/#
pattern read {tables}/%u/avail
pattern read {tables}/%u/assign

# staff: the site's every table, live; the technician may send commands
user staff.viewer
topic read {site_root}/#

user staff.technician
topic read {site_root}/#
topic write {tables}/+/cmd/#
topic write {tables}/+/assign
topic write {site_root}/rollout

# services (a tournament's recorder): read everything, ask for rebirth and resends, never an acknowledge
user service.recorder
topic read {site_root}/#
topic write {tables}/+/cmd/rebirth
topic write {tables}/+/cmd/resend_since

# the hall's tournament service: reads everything, asks for rebirth and resends, writes the tables' assignments
user service.tourney
topic read {site_root}/#
topic write {tables}/+/cmd/rebirth
topic write {tables}/+/cmd/resend_since
topic write {tables}/+/assign
"""


@dataclass(frozen=True)
class Listeners:
    tls_port: int = 8883             # tables: client certificates
    staff_port: int = 8884           # staff and services: passwords over TLS
    plain_port: int | None = None    # plain MQTT on loopback (passwords), only if asked
    bind: str = ""                   # the address the TLS listeners take ('' = every address)


@dataclass(frozen=True)
class Bridge:
    """The parlour's uplink to the chain's cluster: its nodes (tried in turn), the bridge's client id and account,
    the CA to check them with (mqtts://)."""

    nodes: tuple[BrokerAddress, ...]
    client_id: str
    username: str | None = None
    password: str | None = None
    cafile: Path | None = None


def bridge_text(site: str, bridge: Bridge) -> str:
    """Mosquitto's ``connection`` block: what the site's tables publish goes up to the cluster (QoS 1, queued in
    the parlour's broker while the uplink is down: a persistent bridge session, ``cleansession false``), the
    commands the chain sends come down; nothing that came down goes up again (no loop).

    ``round_robin true``: the cluster's nodes are equals, and a bridge stays on the node it reached until that
    connection fails, then tries the next. (With ``false`` Mosquitto treats the first address as the main one
    and goes back to it as soon as it answers again; a NATS node just restarted can accept that connection and
    leave it unanswered while its JetStream catches up, and Mosquitto waits for the answer for ever: seen in
    the chain test, both parlours' uplinks stuck on the returning node.)"""
    tables = f"{PREFIX}/{check_id(site, 'site')}/tbl"
    nodes = bridge.nodes
    if not nodes:
        raise worded(ValueError, "--bridge: no node of the cluster given")
    if len({n.tls for n in nodes}) != 1:
        raise worded(ValueError, "--bridge: the cluster's nodes are all mqtt:// or all mqtts://")
    lines = ["# the uplink to the chain's cluster (written by mjtable fleet broker-config --bridge)",
             "connection chain", "address " + " ".join(f"{n.host}:{n.port}" for n in nodes),
             "round_robin true", "bridge_protocol_version mqttv311", "try_private false", "cleansession false",
             f"remote_clientid {check_id(bridge.client_id, 'bridge client id')}", "start_type automatic",
             "restart_timeout 1 30", "keepalive_interval 30", "notifications false",
             f"topic {tables}/+/avail out 1", f"topic {tables}/+/meta out 1", f"topic {tables}/+/state out 1",
             f"topic {tables}/+/faults out 1", f"topic {tables}/+/counters out 1",
             f"topic {tables}/+/warnings out 1",
             f"topic {tables}/+/evt/# out 1", f"topic {tables}/+/resp/# out 1",
             f"topic {tables}/+/cmd/# in 1"]
    if bridge.username:
        lines.append(f"remote_username {bridge.username}")
    if bridge.password:
        lines.append(f"remote_password {bridge.password}")
    if nodes[0].tls:
        if bridge.cafile is None:
            raise worded(ValueError, "--bridge mqtts://...: give --bridge-ca (the cluster's CA certificate)")
        lines.append(f"bridge_cafile {bridge.cafile}")
    return "\n".join(lines) + "\n"


def conf_text(site: str, install_dir: Path, listeners: Listeners = Listeners()) -> str:
    """``mosquitto.conf`` for the folder at ``install_dir`` (an absolute path) on the server."""
    out_dir = Path(install_dir)
    bind = f" {listeners.bind}" if listeners.bind else ""
    tls = "".join(f"{name} {out_dir / file}\n" for name, file in (("cafile", "ca.crt"), ("certfile", "server.crt"),
                                                                 ("keyfile", "server.key")))
    text = f"""# written by mjtable fleet broker-config for site {check_id(site, 'site')}
per_listener_settings false
allow_anonymous false
password_file {out_dir / 'passwd'}
acl_file {out_dir / 'acl'}
persistence true
persistence_location {out_dir / 'data'}/
autosave_interval 60
max_packet_size 262144
max_queued_messages {MAX_QUEUED_MESSAGES}
max_inflight_messages {MAX_INFLIGHT_MESSAGES}
log_type error
log_type warning
log_type notice
connection_messages true

# tables: TLS with one client certificate each (CN = table id = username)
listener {listeners.tls_port}{bind}
{tls}require_certificate true
use_identity_as_username true
tls_version tlsv1.2

# staff and services: TLS, passwords
listener {listeners.staff_port}{bind}
{tls}require_certificate false
tls_version tlsv1.2
"""
    if listeners.plain_port is not None:
        text += (f"\n# plain MQTT for services on this machine only (passwords)\n"
                 f"listener {listeners.plain_port} 127.0.0.1\n")
    return text


def write_broker_config(out_dir: Path, site: str, ca_file: Path, cert_file: Path, key_file: Path,
                        listeners: Listeners = Listeners(),
                        passwords: dict[str, str] | None = None, install_dir: Path | None = None,
                        bridge: Bridge | None = None) -> dict[str, str]:
    """Write the configuration (see the module's docstring) for the folder at ``install_dir`` on the server
    (default: ``out_dir`` itself, on this machine); returns every account's password.  Accounts not in
    ``passwords`` get a random one."""
    check_id(site, "site")
    for path, what in ((ca_file, "--ca"), (cert_file, "server.crt"), (key_file, "server.key")):
        if not Path(path).is_file():
            raise worded(FileNotFoundError, "%(path)s: no such file (%(what)s; make them with mjtable fleet certs)",
                         path=path, what=what)
    unknown = set(passwords or {}) - set(ACCOUNTS)
    if unknown:
        raise worded(ValueError, "unknown account %(account)r (accounts: %(accounts)s)", account=sorted(unknown)[0],
                     accounts=", ".join(ACCOUNTS))
    if install_dir is not None and not Path(install_dir).is_absolute():
        raise worded(ValueError, "--install-dir %(dir)s: not an absolute path (where the folder will be on the "
                                 "server, e.g. /etc/mosquitto/mjtable)", dir=install_dir)
    out_dir = Path(out_dir)
    if (out_dir / "ca.key").exists():
        raise worded(ValueError, "--out %(dir)s: holds the CA's key (ca.key); the broker's folder goes to the server, "
                                 "the CA's key never: give --out another folder than the CA's", dir=out_dir)
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    for source, name, secret in ((ca_file, "ca.crt", False), (cert_file, "server.crt", False),
                                 (key_file, "server.key", True)):
        _copy_in(Path(source), out_dir / name, secret)
    chosen = {name: (passwords or {}).get(name) or secrets.token_urlsafe(18) for name in ACCOUNTS}
    _secret(out_dir / "passwd", "".join(f"{name}:{hash_password(pw)}\n" for name, pw in chosen.items()))
    _secret(out_dir / "credentials", "# the broker's accounts, in clear: hand them out, then delete this file\n"
            + "".join(f"{name} ({ACCOUNTS[name]}): {pw}\n" for name, pw in chosen.items()))
    _secret(out_dir / "acl", acl_text(site))
    conf = conf_text(site, Path(install_dir or out_dir.resolve()), listeners)
    if bridge is not None:                  # (its file holds the uplink's password: the broker's eyes only)
        (out_dir / "bridge").mkdir(exist_ok=True)
        _secret(out_dir / "bridge" / "bridge.conf", bridge_text(site, bridge))
        where = Path(install_dir or out_dir.resolve()) / "bridge"
        conf += f"\n# the uplink to the chain's cluster\ninclude_dir {where}\n"
    (out_dir / "mosquitto.conf").write_text(conf, encoding="utf-8")
    return chosen


def _copy_in(source: Path, target: Path, secret: bool) -> None:
    """A certificate or key into the broker's folder (left as it is when it is there already)."""
    if target.exists() and source.resolve() == target.resolve():
        return
    data = source.read_bytes()
    if secret:
        _secret(target, data.decode("ascii"))
    else:
        target.write_bytes(data)
        os.chmod(target, 0o644)


def _secret(path: Path, text: str) -> None:
    write_private(path, text.encode("utf-8"))
