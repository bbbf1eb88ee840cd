"""``mjtable web``: the table's web page (a service of its own); ``web passwd`` and ``web cert`` set it up.

``mjtable web`` serves the page for phones on the parlour Wi-Fi: it
subscribes to the controller's socket, reads the table database read-only
and serves over TLS (the table's certificate, ``mjtable web cert``); plain
HTTP only on a loopback address (``mjtable sim --web`` does that).  It
refuses to start on an address it cannot serve safely rather than serve
without TLS.  ``mjtable web passwd NAME --role ROLE`` sets a user's password
(there is no default: until one is set the page only says how); run it as
root on the table, then restart the page's unit.
"""

from __future__ import annotations

import argparse
import getpass
import logging
import socket
import sys
from pathlib import Path

from firmware.cli.arg_types import count
from firmware.cli.words import _
from firmware.faults import TableError
from firmware.i18n import N_

log = logging.getLogger("mjtable.web")

DEFAULT_SOCKET = Path("/run/mjtable/diag.sock")
DEFAULT_STATE = Path("/var/lib/mjtable/table.db")
WEB_DIR = Path("/etc/mjtable/web")
DEFAULT_USERS = WEB_DIR / "users.json"
DEFAULT_CERT, DEFAULT_KEY = WEB_DIR / "tls.crt", WEB_DIR / "tls.key"
DEFAULT_PORT = 8443
LOOPBACK = ("127.0.0.1", "::1", "localhost")
ROLES = {"staff": N_("staff"), "technician": N_("technician")}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("web", help=_("the table's web page for technicians and staff; passwd, cert"),
                            description=_("Serve the table's web page (a client of the controller's socket)."),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=_("examples:\n  sudo mjtable web passwd ana --role technician\n"
                                     "  sudo mjtable web cert                 # the table's TLS certificate, once\n"
                                     "  mjtable web                           # what the unit mjtable-web runs\n"
                                     "  mjtable sim --web 8080 --speed 20      # the page of a simulated table"))
    parser.add_argument("--socket", type=Path, default=DEFAULT_SOCKET,
                        help=_("the controller's socket (default %(socket)s)") % {"socket": DEFAULT_SOCKET})
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE,
                        help=_("the table database, opened read-only (default %(state)s)")
                        % {"state": DEFAULT_STATE})
    parser.add_argument("--users", type=Path, default=DEFAULT_USERS, help=_("the users file (default %(users)s)")
                        % {"users": DEFAULT_USERS})
    parser.add_argument("--host", default="0.0.0.0", help=_("the address to listen on (default every address)"))
    parser.add_argument("--port", type=count(1, 65535), default=DEFAULT_PORT,
                        help=_("default %(port)s") % {"port": DEFAULT_PORT})
    parser.add_argument("--tls-cert", type=Path, help=_("the certificate (default %(cert)s, if there)")
                        % {"cert": DEFAULT_CERT})
    parser.add_argument("--tls-key", type=Path, help=_("its key (default %(key)s, if there)") % {"key": DEFAULT_KEY})
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help=_("another name the page answers to (besides addresses, localhost, the host name and "
                               "NAME.local); repeatable"))
    parser.add_argument("--table-name", help=_("the name the page shows (default the host name)"))
    parser.add_argument("--simulated", action="store_true", help=_("say on every page that the table is simulated"))
    parser.set_defaults(func=serve)
    tools = parser.add_subparsers(dest="web_command", metavar="TOOL")
    passwd = tools.add_parser("passwd", help=_("set (or --remove) a user's password and role"))
    passwd.add_argument("name", help=_("the user's name (lower-case letters, digits, . _ -)"))
    passwd.add_argument("--role", choices=("staff", "technician"), default="staff",
                        help=_("staff: looks; technician: also acknowledges and runs service tests (default staff)"))
    passwd.add_argument("--users", type=Path, default=argparse.SUPPRESS,
                        help=_("default %(users)s") % {"users": DEFAULT_USERS})
    passwd.add_argument("--password-stdin", action="store_true", help=_("read the password from standard input"))
    passwd.add_argument("--remove", action="store_true", help=_("remove the user"))
    passwd.set_defaults(func=set_password)
    cert = tools.add_parser("cert", help=_("make the table's TLS key and self-signed certificate (once)"))
    cert.add_argument("--dir", type=Path, default=WEB_DIR, help=_("where (default %(dir)s)") % {"dir": WEB_DIR})
    cert.add_argument("--name", action="append", default=[], help=_("a name for the certificate (default the host "
                                                                     "name and NAME.local); repeatable"))
    cert.set_defaults(func=make_cert)


def host_names() -> list[str]:
    name = socket.gethostname().split(".")[0].lower() or "mjtable"
    return [name, f"{name}.local"]


def set_password(args: argparse.Namespace) -> int:
    from firmware.web.users import Role, Users

    users = Users.load(args.users)
    if args.remove:
        users.remove(args.name)
        print(_("user %(name)s removed from %(file)s; restart the page: systemctl restart mjtable-web")
              % {"name": args.name, "file": args.users})
        return 0
    if args.password_stdin:
        line = sys.stdin.readline()
        if not line:
            raise TableError(_("web passwd: no password on standard input (it ended); %(file)s not changed")
                             % {"file": args.users})
        password = line.rstrip("\n")
    else:
        try:
            password = getpass.getpass(_("password for %(name)s: ") % {"name": args.name})
            again = getpass.getpass(_("the same again: "))
        except EOFError:                           # (Ctrl-D, or no terminal and nothing on standard input)
            print(file=sys.stderr)
            raise TableError(_("web passwd: no password given (end of input); %(file)s not changed "
                               "(--password-stdin reads it from a pipe)") % {"file": args.users}) from None
        if again != password:
            raise ValueError(_("the two passwords differ; nothing changed"))
    users.set_password(args.name, password, Role(args.role))
    print(_("user %(name)s (%(role)s) set in %(file)s; restart the page: systemctl restart mjtable-web")
          % {"name": args.name, "role": _(ROLES[args.role]), "file": args.users})
    return 0


def make_cert(args: argparse.Namespace) -> int:
    from firmware.web.tls import make_certificate
    from firmware.root.host import HOST_CLOCK

    names = args.name or host_names()
    cert, key = args.dir / DEFAULT_CERT.name, args.dir / DEFAULT_KEY.name
    print_fingerprint(make_certificate(cert, key, names + ["localhost"], HOST_CLOCK), cert, names)
    return 0


def print_fingerprint(fingerprint: str, cert: Path, names: list[str]) -> None:
    print(_("certificate %(file)s for %(names)s") % {"file": cert, "names": ", ".join(names)}
          + f"\n  SHA-256 {fingerprint}\n  "
          + _("(a phone asks to trust it once: compare this fingerprint with the one it shows)"))


def serve(args: argparse.Namespace) -> int:
    from firmware.web.app import create_app
    from firmware.web.state import WebSettings
    from firmware.web.control import SocketControl
    from firmware.web.guards import HostRules
    from firmware.web.records import TableRecords
    from firmware.web.users import Users
    from firmware.web.runtime import serve as serve_app, ticker
    from firmware.root.host import HOST_CLOCK

    cert = args.tls_cert or (DEFAULT_CERT if DEFAULT_CERT.exists() and not args.tls_key else None)
    key = args.tls_key or (DEFAULT_KEY if cert == DEFAULT_CERT else None)
    if (cert is None) != (key is None):
        raise ValueError(_("--tls-cert and --tls-key go together"))
    for path, option in ((cert, "--tls-cert"), (key, "--tls-key")):
        if path is not None and not path.is_file():
            raise ValueError(_("%(option)s %(file)s: no such file (mjtable web cert makes the table's pair)")
                             % {"option": option, "file": path})
    if cert is None and args.host not in LOOPBACK:
        raise ValueError(_("--host %(host)s: plain HTTP is served only on loopback (127.0.0.1); give --tls-cert "
                           "and --tls-key (mjtable web cert makes them) to serve the parlour's Wi-Fi")
                         % {"host": args.host})
    users = Users.load(args.users)
    if not users:
        log.warning("no user in %s: the page only says how to set a password (mjtable web passwd)", args.users)
    settings = WebSettings(users=users, hosts=HostRules.of(host_names() + args.allow_host), tls=cert is not None,
                           table_name=args.table_name or host_names()[0], simulated=args.simulated)
    app = create_app(settings, SocketControl(args.socket), TableRecords(args.state), HOST_CLOCK.monotonic_s,
                     ticker(HOST_CLOCK))
    scheme = "https" if cert else "http"
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host

    def listening() -> None:
        print(_("web page: %(url)s") % {"url": f"{scheme}://{shown}:{args.port}/"}, file=sys.stderr, flush=True)
    serve_app(app, args.host, args.port, cert, key, on_listening=listening)
    return 0
