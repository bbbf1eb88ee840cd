"""``mjtable``: the command line of the table firmware.

Every subcommand prints one clear line and exits non-zero on bad input; no
traceback reaches the user.  Subcommands live in their own modules and
register themselves here.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import NoReturn

from firmware import __version__
from firmware.cli import argparse_words, error_words, words
from firmware.cli.words import N_, _
from firmware.faults import TableError

log = logging.getLogger(__name__)

EPILOG = N_("""examples:
  mjtable sim                          a 16-hand MCR game on the simulated table, with a summary
  mjtable sim --rules competition --speed 10 --hands 2   watch it at 10x real time
  mjtable sim --seed 7 --inject jam:stacker2@stacking1 --report run.json
  mjtable config check                 validate every shipped config file
  mjtable config check my_table.toml
  mjtable deal --rules mcr --seed 3 --dice 3,4,2,5 --dealer 1
  mjtable score tests/data/mcr-random.jsonl   score hands (JSON lines in, JSON lines out)
  mjtable diag faults                  fault history of the running table, with hints
  mjtable diag --sim --service test stackers   a service test on the simulated table
  mjtable diag --sim reader ping       talk to the (simulated) tile reader board
  mjtable diag enroll --set A --antenna 0 --out set-a.csv
  mjtable run --sim --seconds 60       the service against the simulated table at real time (a dry run)
  mjtable verify table.db              check every hand against the walls it committed to before the dice
  mjtable run                          the service on a table (/etc/mjtable, /var/lib/mjtable/table.db)
  mjtable install --bundle mjtable-0.2.0.bundle.tar --root /    install or update a table from a release bundle
  mjtable release list                 the releases on this table; activate, rollback
  mjtable sim --web 8080 --speed 20    the web page of a simulated table: open http://127.0.0.1:8080/
  mjtable web passwd ana --role technician   a user of the table's web page (mjtable web serves it)
  mjtable fleet watch --broker mqtt://127.0.0.1:1883 --site hall1   every table of a site, live
  mjtable tourney new --db cup.db --name cup --rules mcr --players players.csv --rounds 5 --hands-per-round 8
                                       a tournament across the tables (the hall's side: mjtable tourney --help)
""")


# commands other packages add (their register(sub)), so that the table's firmware never imports them
COMMANDS_GROUP = "mjtable.commands"
# the firmware's own commands' modules (in firmware.cli), in the order --help lists them
COMMAND_MODULES = ("sim_cmd", "config_cmd", "deal_cmd", "diag_cmd", "reader_sim_cmd", "score_cmd", "run_cmd",
                   "install_cmd", "release_cmd", "web_cmd", "fleet_cmd", "verify_cmd")
# commands whose start-up counts, ``mjtable score ...`` (run in a pipeline) and ``mjtable sim ...`` (its CPU per
# simulated second counts the start-up): each builds its own parser alone, without importing the other commands'
# modules (the same parser, arguments, help and errors as in the whole)
ALONE = {"score": "score_cmd", "sim": "sim_cmd"}


class CommandLine(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line naming the argument (subcommands inherit it)."""

    table_commands: frozenset[str] = frozenset()       # the table's own commands (not other packages')

    def format_help(self) -> str:
        """argparse's help, each section's heading ending as the language ends it (位置参数：, options:)."""
        text = super().format_help()
        for group in self._action_groups:
            if group.title:
                text = text.replace(f"\n{group.title}:\n", "\n" + _("%(heading)s:") % {"heading": group.title} + "\n")
        return text

    def error(self, message: str) -> NoReturn:
        self.exit(2, _("%(prog)s: %(message)s (see %(prog)s --help)") % {"prog": self.prog, "message": message}
                  + "\n")


def build_parser(alone: str | None = None, plugins: bool = True) -> CommandLine:
    """The command line's parser; ``alone``: one of :data:`ALONE`, the only command registered; ``plugins``: with
    the commands other packages add (``COMMANDS_GROUP``)."""
    parser = CommandLine(prog="mjtable", description=_("Automatic mahjong table firmware."),
                         epilog=_(EPILOG), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0, help=_("more log output"))
    parser.add_argument("--version", action="version", version=f"mjtable {__version__}",
                        help=_("show the version and exit"))
    parser.add_argument("--lang", type=_language, metavar="zh-CN|en",
                        help=_("the language of the messages (default: the environment's, LANGUAGE, LC_ALL, "
                               "LC_MESSAGES or LANG: zh* is Chinese, any other English)"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (ALONE[alone],) if alone in ALONE else COMMAND_MODULES:
        __import__(f"firmware.cli.{name}", fromlist=["register"]).register(sub)
    parser.table_commands = frozenset(sub.choices)
    if alone in ALONE:
        return parser
    for plugin in entry_points(group=COMMANDS_GROUP) if plugins else ():    # e.g. tourney, the hall's side (parlour/)
        try:
            register = plugin.load()
        except ImportError as exc:          # a plugin installed half (or removed): the table's commands go on
            log.warning("mjtable %s is not available: %s (reinstall the package that provides it)", plugin.name, exc)
            continue
        register(sub)
    return parser


def entry_points(group: str) -> list:
    """The installed entry points of ``group`` (importlib.metadata imported only when a parser needs them)."""
    from importlib.metadata import entry_points as installed

    return list(installed(group=group))


def _language(value: str) -> str:
    try:
        return words.language(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def lang_asked(argv: list[str]) -> str | None:
    """``--lang``'s locale, read before the parser is built (its help and its errors are in that language), or None
    when it is not given or not one the table speaks (the parser then refuses it)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else (
            arg.split("=", 1)[1] if arg.startswith("--lang=") else None)
        if value is not None:
            try:
                return words.language(value)
            except ValueError:
                return None
    return None


def command_asked(argv: list[str]) -> str | None:
    """The command named in ``argv`` (its first word that is not an option nor ``--lang``'s value); None: none."""
    after_lang = False
    for arg in argv:
        if arg == "--":
            return None
        if not after_lang and not arg.startswith("-"):
            return arg
        after_lang = arg == "--lang"
    return None


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    words.use(words.choose(lang_asked(arguments)))
    with argparse_words.speaking():
        if arguments and arguments[0] in ALONE:
            parser = build_parser(arguments[0])
        else:
            # the table's own command (``sim``, ``run`` ...): the parser without the other packages' commands
            parser = build_parser(plugins=False)
            if command_asked(arguments) not in parser.table_commands:
                parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
    args.own_process = argv is None       # the command line's own process (not a caller in Python, e.g. a test)
    verbose = args.verbose - 1 if args.command == "sim" else args.verbose   # sim: -v = hands
    logging.basicConfig(level=logging.WARNING - 10 * min(max(verbose, 0), 2),
                        format="%(levelname)s %(name)s: %(message)s")
    # the state machine library narrates every callback at INFO and DEBUG: the controller's state changes are
    # logged by the commands themselves (sim -vv, run); the library's lines only one level past DEBUG (sim -vvvv)
    logging.getLogger("transitions").setLevel(logging.WARNING if verbose < 3 else logging.DEBUG)
    try:
        return int(args.func(args) or 0)
    except TableError as exc:
        print(f"mjtable: {error_words.said(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"mjtable: {error_words.said(exc)}", file=sys.stderr)
        return 2
    except EOFError:                  # a prompt's input ended (Ctrl-D, no terminal): nothing was done with it
        print("mjtable: " + _("end of input before an answer was given; nothing changed"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into head, less ...
        return 0
    except OSError as exc:            # a file named on the command line: missing, a folder, not allowed
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        if getattr(exc, "template", None):          # (the firmware's own words about a file: said in them)
            print(f"mjtable: {error_words.said(exc)}", file=sys.stderr)
            return 2
        print(f"mjtable: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
