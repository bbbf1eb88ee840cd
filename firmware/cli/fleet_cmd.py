"""``mjtable fleet``: a parlour's broker set-up, certificates and keys, the staff's live console, signed commands.

Heavy modules (cryptography, paho, rich) are imported inside the commands,
so that ``mjtable --help`` stays quick.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from firmware.cli.arg_types import count, seconds
from firmware.cli.words import N_, _
from firmware.cli.error_words import said

EPILOG = N_("""examples:
  mjtable fleet certs ca --out parlour/ca --site hall1
  mjtable fleet certs server broker.hall1.lan 10.0.0.2 --ca parlour/ca --out parlour/broker
  mjtable fleet certs table t07 --ca parlour/ca --out parlour/tables
  mjtable fleet certs table $(seq -f 't%03g' 20) --ca parlour/ca --out parlour/sim    # sim --fleet 20's tables
  mjtable fleet certs command-key --out parlour/keys --name hall1-cmd
  mjtable fleet broker-config --site hall1 --ca parlour/ca --server parlour/broker --out parlour/broker
  mjtable fleet watch --broker mqtts://broker.hall1.lan:8884 --site hall1 --ca parlour/ca/ca.crt \\
      --user staff.viewer --password-file viewer.pw
  mjtable fleet send --broker mqtts://broker.hall1.lan:8884 --site hall1 --table t07 --ca parlour/ca/ca.crt \\
      --user staff.technician --password-file tech.pw --sign-key parlour/keys/hall1-cmd.pem ack E41
""")


def register(sub: argparse._SubParsersAction) -> None:
    fleet = sub.add_parser("fleet", help=_("a parlour's tables on one MQTT broker: broker set-up, certificates, watch"),
                           description=_("Fleet telemetry (docs/fleet.md)."), epilog=_(EPILOG),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = fleet.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)

    broker = actions.add_parser("broker-config", help=_("write a Mosquitto configuration for the parlour"),
                                description=_("mosquitto.conf, acl, passwd, ca.crt, server.crt, server.key: what the "
                                              "broker needs, into --out (and the passwords in clear in 'credentials', "
                                              "mode 0600: not for the server)."))
    broker.add_argument("--site", required=True, help=_("the site id (e.g. hall1)"))
    broker.add_argument("--out", type=Path, required=True, metavar="DIR", help=_("where to write the files"))
    broker.add_argument("--ca", type=Path, required=True, metavar="DIR", help=_("the folder with the CA's ca.crt"))
    broker.add_argument("--server", type=Path, metavar="DIR",
                        help=_("the folder with the broker's server.crt and server.key (default: --out)"))
    broker.add_argument("--tls-port", type=count(1, 65535), default=8883, help=_("the tables' listener (8883)"))
    broker.add_argument("--staff-port", type=count(1, 65535), default=8884, help=_("staff and services (8884)"))
    broker.add_argument("--plain-port", type=count(1, 65535), help=_("also plain MQTT on 127.0.0.1 (off)"))
    broker.add_argument("--bind", default="", metavar="ADDRESS", help=_("the TLS listeners' address (default: all)"))
    broker.add_argument("--install-dir", type=Path, metavar="DIR",
                        help=_("where the folder will be on the server, e.g. /etc/mosquitto/mjtable: the configuration "
                               "names its files there (default: --out, on this machine)"))
    broker.add_argument("--bridge", metavar="URLS",
                        help=_("a chain: bridge the site's tables up to the chain's cluster, its nodes as "
                               "mqtt://HOST:PORT,... (tried in turn; MQTT 3.1.1, e.g. NATS's MQTT interface)"))
    broker.add_argument("--bridge-user", help=_("the bridge's account on the cluster (default: none)"))
    broker.add_argument("--bridge-password-file", type=Path, metavar="FILE",
                        help=_("a file whose first line is that account's password"))
    broker.add_argument("--bridge-ca", type=Path, metavar="FILE", help=_("the cluster's CA certificate (mqtts://)"))
    broker.set_defaults(func=_broker_config)

    certs = actions.add_parser("certs", help=_("the parlour's CA, a table's or the broker's certificate, command keys"))
    kinds = certs.add_subparsers(dest="certs_command", metavar="KIND", required=True)
    ca = kinds.add_parser("ca", help=_("a new CA (ca.crt, ca.key); an existing CA key is never overwritten"))
    ca.add_argument("--out", type=Path, required=True, metavar="DIR")
    ca.add_argument("--site", default="parlour", help=_("named in the CA's certificate"))
    ca.add_argument("--days", type=count(1, 36500), default=3650)
    ca.set_defaults(func=_certs_ca)
    table = kinds.add_parser("table", help=_("a table's client certificate (CN = table id); several ids, one each"))
    table.add_argument("table_id", nargs="+", metavar="TABLE_ID")
    table.add_argument("--ca", type=Path, required=True, metavar="DIR", help=_("the CA's folder"))
    table.add_argument("--out", type=Path, required=True, metavar="DIR")
    table.add_argument("--days", type=count(1, 36500), default=825)
    table.add_argument("--force", action="store_true", help=_("replace an existing key"))
    table.set_defaults(func=_certs_table)
    server = kinds.add_parser("server", help=_("the broker's certificate for its host names and addresses"))
    server.add_argument("hosts", nargs="+", metavar="HOST")
    server.add_argument("--ca", type=Path, required=True, metavar="DIR")
    server.add_argument("--out", type=Path, required=True, metavar="DIR")
    server.add_argument("--days", type=count(1, 36500), default=825)
    server.add_argument("--force", action="store_true", help=_("replace an existing key"))
    server.set_defaults(func=_certs_server)
    key = kinds.add_parser("command-key", help=_("a key for signed commands: Ed25519 pair, or --hmac a shared secret"))
    key.add_argument("--out", type=Path, required=True, metavar="DIR")
    key.add_argument("--name", default="command")
    key.add_argument("--hmac", action="store_true", help=_("an HMAC-SHA256 secret instead of an Ed25519 pair"))
    key.add_argument("--force", action="store_true", help=_("replace an existing key"))
    key.set_defaults(func=_command_key)

    watch = actions.add_parser("watch", help=_("every table of a site, live: state, hand, chips, faults, online"),
                               description=_("A live table refreshing in place (Ctrl-C ends it); --json prints one "
                                             "JSON object per line per change."))
    watch.add_argument("--broker", required=True, metavar="URL", help=_("mqtt://HOST:PORT or mqtts://HOST:PORT"))
    watch.add_argument("--site", required=True)
    watch.add_argument("--json", action="store_true", help=_("JSON lines instead of the table"))
    watch.add_argument("--once", action="store_true", help=_("print what the broker holds, then stop"))
    watch.add_argument("--seconds", type=seconds, help=_("stop after this long (--once: wait at most this long, 5)"))
    _connection_options(watch)
    watch.set_defaults(func=_watch)

    send = actions.add_parser("send", help=_("a signed command to one table (ack of a recoverable fault, rebirth, "
                                             "resend_since, session_open, session_close) and its answer"),
                              description=_("Exit 0 when the table carried it out, 1 when it refused or did not "
                                            "answer (a latched fault is acknowledged only at the table)."))
    send.add_argument("verb", choices=["ack", "rebirth", "resend_since", "session_open", "session_close"])
    send.add_argument("value", nargs="?", help=_("ack: the fault code (E41); resend_since: the seq; session_open: the "
                                                 "minutes"))
    send.add_argument("--broker", required=True, metavar="URL", help=_("mqtt://HOST:PORT or mqtts://HOST:PORT"))
    send.add_argument("--site", required=True)
    send.add_argument("--table", required=True, help=_("the table id"))
    send.add_argument("--sign-key", type=Path, required=True, metavar="FILE",
                      help=_("the command key: an Ed25519 private key (.pem) or an HMAC secret (.hmac)"))
    send.add_argument("--issuer", default="technician", help=_("who sends it (logged by the table)"))
    send.add_argument("--ttl-s", type=count(5, 300), default=60, help=_("how long the command is valid (60 s)"))
    send.add_argument("--seconds", type=seconds, default=10.0, help=_("how long to wait for the answer (10 s)"))
    _connection_options(send)
    send.set_defaults(func=_send)

    release = actions.add_parser("release", help=_("roll a signed release bundle out to the tables in waves"),
                                 description=_("A staged update (docs/fleet.md): one canary table, then a share, then "
                                               "all; a wave goes on only when its tables report the new version "
                                               "installed (its self-test passed) and no new fault for --soak-s; "
                                               "otherwise the rollout halts and the tables it updated roll back. "
                                               "Exit 0 when every table runs the new version, 1 when it halted."))
    release.add_argument("--bundle", type=Path, required=True, metavar="FILE", help=_("the signed release bundle"))
    release.add_argument("--url", required=True, help=_("where the tables fetch it (the hall's HTTP server)"))
    release.add_argument("--broker", required=True, metavar="URL", help=_("mqtt://HOST:PORT or mqtts://HOST:PORT"))
    release.add_argument("--site", required=True)
    release.add_argument("--tables", required=True, help=_("the table ids, comma-separated, in rollout order "
                                                           "(the first is the canary)"))
    release.add_argument("--waves", default="1,25%,100%", help=_("cumulative wave sizes, counts or shares "
                                                                 "(1,25%%,100%%)"))
    release.add_argument("--soak-s", type=seconds, default=600.0, help=_("how long a table must stay healthy (600)"))
    release.add_argument("--report-timeout-s", type=seconds, default=900.0,
                         help=_("how long a table may take to report its update (900)"))
    release.add_argument("--settle-s", type=seconds, default=2.0,
                         help=_("how long to read the tables' retained state before the first wave (2)"))
    release.add_argument("--sign-key", type=Path, required=True, metavar="FILE",
                         help=_("the command key: an Ed25519 private key (.pem) or an HMAC secret"))
    release.add_argument("--trusted-key", type=Path, metavar="FILE",
                         help=_("check the bundle's signature with this release key before sending it"))
    release.add_argument("--issuer", default="rollout", help=_("who sends it (logged by the tables)"))
    release.add_argument("--ttl-s", type=count(5, 300), default=120, help=_("how long each command is valid (120)"))
    release.add_argument("--json", action="store_true", help=_("print the progress as one JSON object per change"))
    release.add_argument("--rollout-id", type=_rollout_id, metavar="ID",
                         help=_("the rollout's id, carried in every command and in each table's report (default: the "
                                "version, the UTC minute and a random part)"))
    _connection_options(release)
    release.set_defaults(func=_release)


def _rollout_id(text: str) -> str:
    from firmware.cli.fleet_release import check_rollout_id

    try:
        return check_rollout_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(said(exc)) from None


def _connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ca", type=Path, metavar="FILE", help=_("the parlour's ca.crt (mqtts://)"))
    parser.add_argument("--cert", type=Path, metavar="FILE", help=_("a client certificate, if the listener wants one"))
    parser.add_argument("--key", type=Path, metavar="FILE", help=_("its key"))
    parser.add_argument("--user", help=_("the staff account (e.g. staff.viewer)"))
    parser.add_argument("--password-file", type=Path, metavar="FILE", help=_("the account's password (first line)"))


def _now():
    from firmware.root.host import utc_now

    return utc_now()


def _certs_ca(args: argparse.Namespace) -> int:
    from firmware.fleet.certs import make_ca

    issued = make_ca(args.out, _now(), site=args.site, days=args.days)
    print(_("CA written: %(cert)s (give it to the broker and every table), %(key)s (keep it offline)")
          % {"cert": issued.cert, "key": issued.key})
    return 0


def _certs_table(args: argparse.Namespace) -> int:
    from firmware.fleet.certs import make_table_cert
    from firmware.fleet.topics import check_id

    for table_id in args.table_id:                    # (every id checked before any certificate is written)
        check_id(table_id, "table id")
        if (args.out / f"{table_id}.key").exists() and not args.force:
            raise FileExistsError(_("%(key)s exists (give --force to replace it)")
                                  % {"key": args.out / f"{table_id}.key"})
    for table_id in args.table_id:
        issued = make_table_cert(args.ca, table_id, args.out, _now(), days=args.days, replace=args.force)
        print(_("table %(table)s: %(cert)s, %(key)s (copy both to the table, [fleet] cert_file and key_file)")
              % {"table": table_id, "cert": issued.cert, "key": issued.key})
    return 0


def _certs_server(args: argparse.Namespace) -> int:
    from firmware.fleet.certs import make_server_cert

    issued = make_server_cert(args.ca, args.hosts, args.out, _now(), days=args.days, replace=args.force)
    print(_("broker certificate for %(hosts)s: %(cert)s, %(key)s")
          % {"hosts": ", ".join(args.hosts), "cert": issued.cert, "key": issued.key})
    return 0


def _command_key(args: argparse.Namespace) -> int:
    from firmware.fleet.certs import make_command_key

    paths = make_command_key(args.out, args.name, hmac_secret=args.hmac, replace=args.force)
    if args.hmac:
        print(_("command secret: %(secret)s (the same file on the consoles and as the table's command_key_file)")
              % {"secret": paths[0]})
    else:
        print(_("command keys: %(private)s (consoles sign with it), %(public)s (tables: [fleet] command_key_file)")
              % {"private": paths[0], "public": paths[1]})
    return 0


def _broker_config(args: argparse.Namespace) -> int:
    from firmware.fleet.broker_config import Listeners, write_broker_config

    server = args.server or args.out
    bridge = None
    if args.bridge is not None:
        from firmware.fleet.broker_config import Bridge
        from firmware.ports.broker import parse_broker_urls

        try:
            nodes = tuple(parse_broker_urls(args.bridge))
        except ValueError as exc:
            raise ValueError(_("--bridge: %(problem)s") % {"problem": said(exc)}) from None
        from firmware.cli.fleet_watch import password_from_file

        password = password_from_file(args.bridge_password_file) if args.bridge_password_file is not None else None
        bridge = Bridge(nodes, f"bridge-{args.site}", args.bridge_user, password, args.bridge_ca)
    write_broker_config(args.out, args.site, args.ca / "ca.crt", server / "server.crt", server / "server.key",
                        Listeners(args.tls_port, args.staff_port, args.plain_port, args.bind),
                        install_dir=args.install_dir, bridge=bridge)
    print(_("written: %(conf)s, acl, passwd, ca.crt, server.crt, server.key, data/; and the passwords in "
            "%(credentials)s (hand them out, then delete it; not for the server)")
          % {"conf": args.out / "mosquitto.conf", "credentials": args.out / "credentials"})
    if args.install_dir is not None:
        print(_("on the server: the folder's files (but credentials) in %(dir)s, owned by mosquitto, then "
                "mosquitto -c %(conf)s") % {"dir": args.install_dir, "conf": args.install_dir / "mosquitto.conf"})
    else:
        print(_("run: mosquitto -c %(conf)s") % {"conf": args.out / "mosquitto.conf"})
    return 0


def _watch(args: argparse.Namespace) -> int:
    from firmware.cli.fleet_watch import watch

    return watch(args)


def _release(args: argparse.Namespace) -> int:
    from firmware.cli.fleet_release import release

    return release(args)


def _send(args: argparse.Namespace) -> int:
    from firmware.cli.fleet_send import send

    return send(args)
