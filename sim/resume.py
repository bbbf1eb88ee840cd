"""Before a simulated run starts: can it resume the saved table it was given, and write where it was asked?

``mjtable sim --state FILE`` resumes the controller and the simulated tiles
from FILE (or, once, the tiles from an older release's ``FILE.world.json``);
both must be there, of this release, and agree with each other (the walls
the bookkeeping says are up are on the table, a set it says is stacked is in
the grooves).  Each
problem is one :class:`ResumeError` naming the file and what to do, raised
before the first simulated second, so nothing is played on a table that
cannot be what the files say.
"""

from __future__ import annotations

import json
from pathlib import Path

from firmware.store.score_rows import ScoreRows
from firmware.controller.bookkeeping import Bookkeeping
from firmware.controller.states import SetLocation
from firmware.store.table_store import StorageError, StoreUnreadable, TableStore
from firmware.file_checks import check_writable
from firmware.faults import TableError
from sim.world_state import WorldFileError, read_world_rows, world_file


class ResumeError(TableError):
    """A saved table that this run cannot resume, or a place it cannot write; the message says which."""


def check_resume(state: Path, rules: str, tile_set: int) -> None:
    """Raise :class:`ResumeError` unless ``state`` (with the simulated table it keeps) can be resumed by this
    run."""
    check_writable(state, "--state")
    legacy = world_file(state)
    if not state.exists():
        if legacy.exists():
            raise ResumeError(f"{legacy} has no table database beside it ({state}): delete it to start afresh")
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
    try:
        world = read_world_rows(state)
        where = str(state)
        if world is None and legacy.exists():
            world, where = json.loads(legacy.read_text(encoding="utf-8")), str(legacy)
    except WorldFileError as exc:
        raise ResumeError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise ResumeError(f"{legacy}: not a saved simulated table ({type(exc).__name__}); delete it and its "
                          f"database to start afresh") from None
    placed = {s: book.where(s) for s in book.sets if book.where(s) is not SetLocation.NONE}
    if world is None:
        if placed or book.hand:
            raise ResumeError(f"--state {state} keeps no simulated table (its tiles are gone): give another "
                              f"--state file to start afresh")
        return
    _check_world_agrees(world, where, book, tile_set)


def _check_world_agrees(data: dict, where: str, book: Bookkeeping, tile_set: int) -> None:
    try:
        if data.get("tile_set") != tile_set:
            raise WorldFileError(f"{where}: the saved table plays {data.get('tile_set')}-tile sets, this run "
                                 f"{tile_set} (another rule set?): use another --state file")
        on_table = {t[1] for side in data["walls"] for stack in side for t in stack}
        in_grooves = {t[1] for groove in data["grooves"] for stack in groove for t in stack}
        on_disk = {t[1] for t in data["disk"]}
    except WorldFileError as exc:
        raise ResumeError(str(exc)) from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ResumeError(f"{where}: not a saved simulated table ({type(exc).__name__}); delete it and its "
                          f"database to start afresh") from None
    said_table = set(book.sets_at(SetLocation.TABLE)) - {"?"}
    said_stacked = set(book.sets_at(SetLocation.STACKED)) - {"?"}
    # walls the players pushed into the open centre are on the disk until the centre closes and the table says so
    pushed = on_disk if book.hand_over else set()
    up = on_table & {"A", "B"}
    if not up <= said_table or not said_table <= up | pushed or not said_stacked <= in_grooves | on_table:
        raise ResumeError(f"{where}: the simulated tiles do not match the table database (the database says walls "
                          f"of {sorted(said_table) or 'no set'} are up and {sorted(said_stacked) or 'no set'} is "
                          f"stacked; the tiles say {sorted(on_table) or 'none'} up, {sorted(in_grooves) or 'none'} "
                          f"in the grooves): give another --state file")
