"""Before a simulated run starts: can it resume the saved table it was given, and write where it was asked?

``mjtable sim --state FILE`` resumes the controller from FILE and the
simulated tiles from ``FILE.world.json``; both must be there, of this
release, and agree with each other (the walls the bookkeeping says are up
are on the table, a set it says is stacked is in the grooves).  Each
problem is one :class:`ResumeError` naming the file and what to do, raised
before the first simulated second, so nothing is played on a table that
cannot be what the files say.
"""

from __future__ import annotations

from pathlib import Path

from firmware.controller.score_rows import ScoreRows
from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.states import SetLocation
from firmware.controller.store import StorageError, StoreUnreadable, TableStore
from firmware.cli.arg_types import check_writable
from firmware.faults import TableError
from sim.world_state import WorldFileError, world_file


class ResumeError(TableError):
    """A saved table that this run cannot resume, or a place it cannot write; the message says which."""


def check_resume(state: Path, rules: str, tile_set: int) -> None:
    """Raise :class:`ResumeError` unless ``state`` (with its world file) can be resumed by this run."""
    check_writable(state, "--state")
    world = world_file(state)
    if not state.exists():
        if world.exists():
            raise ResumeError(f"{world} has no table database beside it ({state}): delete it to start afresh")
        return
    try:
        store = TableStore(state)
    except (StoreUnreadable, StorageError) as exc:
        raise ResumeError(f"--state {state}: not a table database this release can resume ({exc}); "
                          f"give another file to start afresh") from None
    try:
        book = Bookkeeping.from_record(store.book(), store.walls())
        saved_rules = ScoreRows(store).last_game_rules()
    finally:
        store.close()
    if saved_rules is not None and saved_rules != rules:
        raise ResumeError(f"--state {state}: the saved table plays {saved_rules}; run it with --rules "
                          f"{saved_rules}, or give another file for {rules}")
    placed = {s: book.where(s) for s in book.sets if book.where(s) is not SetLocation.NONE}
    if not world.exists():
        if placed or book.hand:
            raise ResumeError(f"{world} is missing: the simulated tiles of this table are gone; give another "
                              f"--state file to start afresh")
        return
    _check_world_agrees(world, book, tile_set)


def _check_world_agrees(world_path: Path, book: Bookkeeping, tile_set: int) -> None:
    import json

    try:
        data = json.loads(world_path.read_text(encoding="utf-8"))
        if data.get("tile_set") != tile_set:
            raise WorldFileError(f"{world_path}: the saved table plays {data.get('tile_set')}-tile sets, this run "
                                 f"{tile_set} (another rule set?): use another --state file")
        on_table = {t[1] for side in data["walls"] for stack in side for t in stack}
        in_grooves = {t[1] for groove in data["grooves"] for stack in groove for t in stack}
    except WorldFileError as exc:
        raise ResumeError(str(exc)) from None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ResumeError(f"{world_path}: not a saved simulated table ({type(exc).__name__}); delete it and its "
                          f"database to start afresh") from None
    said_table = set(book.sets_at(SetLocation.TABLE)) - {"?"}
    said_stacked = set(book.sets_at(SetLocation.STACKED)) - {"?"}
    if said_table != on_table & {"A", "B"} or not said_stacked <= in_grooves | on_table:
        raise ResumeError(f"{world_path} does not match its table database (the database says walls of "
                          f"{sorted(said_table) or 'no set'} are up and {sorted(said_stacked) or 'no set'} is stacked; "
                          f"the tiles say {sorted(on_table) or 'none'} up, {sorted(in_grooves) or 'none'} in the "
                          f"grooves): use the pair as it was written, or another --state file")
