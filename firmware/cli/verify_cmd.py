"""``mjtable verify``: check every hand against the walls it committed to before the dice (a line each, a summary)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Iterator

from firmware.cli.words import N_, _, ngettext

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
MAX_LINE_CHARS = 200_000          # an exported hand is a few KB


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "verify", help=_("check each hand against its committed walls (a table database or exported hands)"),
        description=_("Check every hand: its reveal hashes to the commitment published before the dice,\n"
                      "electronic dice are the sealed seed's, and the revealed walls deal exactly the starting\n"
                      "hands and the draws of its record. One line per hand, then a summary; exit 1 if any\n"
                      "hand fails, 2 for a file that is neither a table database nor exported hands."),
        epilog=_("examples:\n  mjtable verify /var/lib/mjtable/table.db\n  mjtable sim --hands 20 --state t.db && "
                 "mjtable verify t.db\n  mjtable verify t.db --export hands.jsonl   (then: mjtable verify "
                 "hands.jsonl)"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help=_("a table database (mjtable sim --state, the service's), or a file of exported hands "
                               "(JSON lines, as --export writes them)"))
    parser.add_argument("--export", type=Path, metavar="FILE",
                        help=_("also write the hands read, one JSON object a line, for someone else to verify"))
    parser.add_argument("--config-dir", type=Path, metavar="DIR",
                        help=_("a table's configuration folder: its own copies of the rule sets deal (default: the "
                               "shipped rule sets)"))
    parser.add_argument("-q", "--quiet", action="store_true", help=_("only the failures and the summary"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from firmware.rules.fair_check import SealedHand, check_hand
    from firmware.rules.registry import load_ruleset

    cache: dict[str, object] = {}

    def rules_of(name: str):
        if name not in cache:
            cache[name] = load_ruleset(name, args.config_dir)
        return cache[name]

    hands: list[tuple[Path, SealedHand]] = []
    for path in args.paths:
        hands += [(path, h) for h in _read(path)]
    if args.export is not None:
        with args.export.open("w", encoding="utf-8") as fh:
            for _path, hand in hands:
                fh.write(json.dumps(hand.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n")
    passed = failed = pending = 0
    many = len(args.paths) > 1
    for path, hand in hands:
        where = f"{path}: " if many else ""
        check = check_hand(hand, rules_of)
        head = where + _("hand %(hand)s  set %(set)s") % {"hand": f"{hand.hand:>4}", "set": hand.set_id}
        if check.pending:
            pending += 1
            if not args.quiet:
                print(head + _("  pending  committed %(commitment)s, in play: not revealed yet")
                      % {"commitment": _short(hand.commitment)})
        elif check.ok:
            passed += 1
            if not args.quiet:
                print(head + ngettext("  ok       %(commitment)s  dice %(dice)s  deal and %(draws)s draw match the "
                                      "revealed walls",
                                      "  ok       %(commitment)s  dice %(dice)s  deal and %(draws)s draws match the "
                                      "revealed walls", check.draws)
                      % {"commitment": _short(hand.commitment), "dice": _dice(hand), "draws": check.draws})
        else:
            failed += 1
            print(head + _("  FAILED   %(problem)s") % {"problem": check.problems[0]})
            for problem in check.problems[1:]:
                print(f"{' ' * len(head)}           {problem}")
    print(ngettext("%(hands)s hand: %(passed)s verified, %(failed)s failed, %(pending)s not revealed yet",
                   "%(hands)s hands: %(passed)s verified, %(failed)s failed, %(pending)s not revealed yet", len(hands))
          % {"hands": len(hands), "passed": passed, "failed": failed, "pending": pending}
          + ("" if hands else _(" (nothing to verify)")))
    return 1 if failed else 0


def _short(commitment: str) -> str:
    return f"{commitment[:16]}…" if commitment else _("(none)")


DICE_BY = {"physical": N_("thrown"), "electronic": N_("electronic")}


def _dice(hand) -> str:
    """The dice in words: their faces and how they were thrown (by the players, or the sealed seed's)."""
    by = _(DICE_BY[hand.dice_by]) if hand.dice_by in DICE_BY else hand.dice_by
    return f"{'+'.join(map(str, hand.dice))} ({by})"


def _read(path: Path) -> Iterator:
    """The hands of a table database or of an export; ValueError (exit 2) when the file is neither."""
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    return _from_database(path) if head == SQLITE_HEADER else _from_export(path)


def _from_database(path: Path) -> Iterator:
    from firmware.faults import TableError
    from firmware.rules.fair_check import SealedHand
    from firmware.store.seal_rows import SealRows
    from firmware.store.table_store import TableStore
    from firmware.web.records import read_only_connect

    try:
        store = TableStore(path, connect=read_only_connect)     # (read only: a running table's file is never touched)
    except TableError as exc:
        raise ValueError(_("%(path)s: not a table database this release can read (%(problem)s)")
                         % {"path": path, "problem": exc}) from None
    try:
        rows = SealRows(store).sealed_hands()
    finally:
        store.close()
    out = []
    for row in rows:
        if row["commitment"] is None:           # dealt by an older release, or its seal row was removed
            row.update(commitment="", dice_by=row["dice_by"] or "physical")
        out.append(SealedHand.from_json(row))
    return iter(out)


def _from_export(path: Path) -> Iterator:
    from firmware.rules.fair_check import SealedHand

    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(_("%(path)s: not text (neither a table database nor exported hands)") % {"path": path}) \
            from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            raise ValueError(_("%(path)s:%(line)s: a line of %(chars)s characters is not an exported hand")
                             % {"path": path, "line": number, "chars": len(line)})
        try:
            out.append(SealedHand.from_json(json.loads(line)))
        except ValueError as exc:
            raise ValueError(_("%(path)s:%(line)s: not an exported hand (%(problem)s)")
                             % {"path": path, "line": number, "problem": exc}) from None
    return iter(out)
