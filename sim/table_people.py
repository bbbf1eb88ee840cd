"""The people around the simulated table, apart from the mahjong they play (``sim/players.py``).

They do what the table needs from people: pour the sets in at the start,
throw the dice when asked, push the used set into the open centre, take the
tiles the controller names out of rejected walls (E82) and return them to
their own set, pick stray tiles off a disk before pouring a set onto it, put
a missing tile back when the table asks (E62), resume after a hold (again,
a while later, when the table keeps holding because its cause is still
there: the lid, a stuck key), and, as a technician, fix what keeps the table
held or latched and acknowledge latched faults (``auto_ack_s`` None: no
technician comes).  A lift key that does not
work (stuck) makes them use the other one.  Without the game (``hand_s``) a
hand is a timed wait: after ``hand_s`` someone presses both lift keys, which
ends it recorded as a void hand (one lift key ends only a hand whose result
the referee has); a hand left in play by an earlier run is ended the same way.
Used only by the simulator and its tests.
"""

from __future__ import annotations

import logging

from firmware.controller.states import TableState
from firmware.events import Event
from sim.tileset import SPARE
from sim.world import TableWorld

log = logging.getLogger(__name__)

S = TableState
STRAY_TILES = 8          # at most this many tiles left on a disk are strays, not a set
CALL_TECHNICIAN_AFTER = 3  # holds in a row that resuming did not cure


class TablePeople:
    def __init__(self, world: TableWorld, hands: int, sets: tuple[str, ...] = ("A", "B"), hand_s: float | None = 60.0,
                 reaction_s: float = 2.0, push_s: float = 6.0, auto_ack_s: float | None = 60.0) -> None:
        self.world = world
        self.loop = world.loop
        self.hands_wanted = hands
        self.to_pour = list(sets)
        self.hand_s = hand_s
        self.reaction_s = reaction_s
        self.push_s = push_s
        self.auto_ack_s = auto_ack_s
        self.hands_started = 0
        self.hands_ended = 0
        self.dealer = 0
        self.finished = False
        self.state = S.BOOT
        self._gen = 0                 # invalidates reactions to an older state
        self.technician_visits = 0
        self.enter_dice = None        # the controller's enter_dice, set by the run
        self.rejected_set: str | None = None
        self.stale_hand = 0           # a hand left in play by an earlier run on the same database
        self.ending_stale = False     # that hand is being ended void (even when it was the last one wanted)
        self.hand_over_pending = False
        self.void_pending = False     # the hand ends without a result: both lift keys (a void hand)
        self.holds_in_a_row = 0       # holds that resuming did not cure: then they call the technician
        self.away = False             # nobody at the table (a test drives the keys itself)
        self.want_hand = None         # (await assignments) a round is in play or waits: else nobody presses at ready

    def on_event(self, event: Event) -> None:
        if self.away:
            return
        if event.topic == "controller.state":
            self.state = TableState(event.data["state"])
            if self.state is S.CENTER_UP:
                self.stale_hand = 0                 # (a hand left in play is ended)
                self.hand_over_pending = self.void_pending = False
                if self.ending_stale:
                    self.ending_stale = False
                    self.finished = self.hands_ended >= self.hands_wanted
            self._gen += 1
            self._react(self.state)
        elif event.topic == "deal":
            self.hands_started = event.data["hand"]
            self.dealer = event.data["dealer"]
        elif event.topic == "controller.boot":
            book = event.data["book"]
            self.dealer = book["dealer"]                    # (a table resumed from its database)
            if book["hand_open"] and self.hands_ended >= book["hand"] > 0:
                # the walls of a hand they had already ended are still up (the key went while the power was off)
                self.stale_hand = book["hand"]
        elif event.topic == "hand.settled" and self.void_pending and event.data["note"].startswith("void: "):
            self.hand_over_pending = self.void_pending = False     # (recorded void: the centre opens next)
        elif event.topic in ("stacking.done", "deal"):
            self.holds_in_a_row = 0
        elif event.topic == "walls.rejected":
            self.rejected_set = event.data["set_id"]
        elif event.topic == "dice.waiting":
            self._later(self.reaction_s, self._read_dice)
        elif event.topic == "hold.kept":
            self.holds_in_a_row += 1            # the cause is still there: look again a while later
            self._later(self.reaction_s * 3, self._resume_after_hold)
        elif event.topic == "assignment" and self.state is S.READY and self.want_hand is not None:
            self._later(self.reaction_s, self.look_again)       # (the round's players sit down)
        elif event.topic == "controller.ack_refused" and self.auto_ack_s is not None:
            self._later(self.auto_ack_s, self._technician_ack)

    def _later(self, delay_s: float, fn, *args) -> None:
        gen = self._gen
        self.loop.call_later(delay_s, lambda: fn(*args) if gen == self._gen and not self.away else None)

    def _react(self, state: TableState) -> None:
        if state is S.IDLE:
            if self.to_pour:
                self._later(self.reaction_s, self._press, "key_lift0")
        elif state is S.READY:
            if self.hands_started < self.hands_wanted and (self.want_hand is None or self.want_hand()):
                self._later(self.reaction_s, self._press, "key_lift0")
        elif state is S.OPEN:
            self._later(self.push_s, self._fill_center)
        elif state is S.DICE:
            self._later(self.reaction_s, lambda: self._press(f"key_dice{self._dealer_side()}"))
        elif state is S.IN_PLAY and self.stale_hand and self.hands_started <= self.stale_hand:
            self._later(self.reaction_s, self._end_stale_hand)
        elif state is S.IN_PLAY and self.hand_over_pending:
            self._later(self.reaction_s, self._end_hand)
        elif state is S.IN_PLAY and self.hand_s is not None:
            self._later(self.hand_s, self._timed_hand_over)
        elif state is S.REJECTED:
            self._later(self.reaction_s * 3, self._fix_rejected_walls)
        elif state is S.HOLD:
            self.holds_in_a_row += 1
            self._later(self.reaction_s * 3, self._resume_after_hold)
        elif state is S.LATCHED and self.auto_ack_s is not None:
            self._later(self.auto_ack_s, self._technician_ack)

    def _read_dice(self) -> None:
        if self.world.dice.result is not None and self.enter_dice is not None:
            self.enter_dice(self.world.dice.result)

    def _dealer_side(self) -> int:
        """The dealer, as the lamps show it: the first lamp of the lit run (a streak lights the next ones
        counter-clockwise); all four lit (a long streak): the dealer they remember."""
        lit = {s for s in range(4) if self.world.lamps.get(f"led_dealer{s}")}
        firsts = [s for s in sorted(lit) if (s - 1) % 4 not in lit]
        return firsts[0] if len(firsts) == 1 else self.dealer

    def _press(self, key: str) -> None:
        if key == "key_lift0" and self.world.keys[key].stuck is not None:
            key = "key_lift1"                   # that key does nothing: the other one
        self.world.press(key)

    def _fix_rejected_walls(self) -> None:
        """Take the named tiles out of the rejected walls: a tile of another set goes back to it,
        a tile of no set is put aside; then a lift key (the centre opens when the set below is done)."""
        world = self.world
        set_id = self.rejected_set
        if set_id not in world.physical.sets:      # the controller could not tell the set ("?"): the backs can
            set_id = world.set_of(world.wall_tiles())
        if set_id is not None:
            for tile in world.take_out_of_walls(set_id):
                self._return(tile)
        self._press("key_lift0")

    def _return(self, tile) -> None:
        entry = self.world.physical.lookup(tile.uid)
        if entry is None or tile.set_id == SPARE:
            self.world.set_aside.append(tile)       # (a spare copy goes back to the spare box, not into its set)
        elif entry.set_id in self.to_pour:
            self.world.sets[entry.set_id].append(tile)     # that set is still in its box
        else:
            self.world.found.append(tile)                   # kept until its set asks for it

    def _fill_center(self) -> None:
        world = self.world
        if not world.center_is_up():
            return
        pushed_set = world.set_of(world.wall_tiles())
        pushed = world.push_table_into_center()
        if pushed and pushed_set is not None:
            # tiles of this set found earlier go in with it
            mine = [t for t in world.found if self._set_of(t) == pushed_set]
            world.found = [t for t in world.found if self._set_of(t) != pushed_set]
            world.turntable.load(mine)
        hopper = world.turntable.hopper
        if not pushed and hopper and len(hopper) <= STRAY_TILES:
            # a few tiles left on the open disk are not a set: the players pick them up
            for tile in world.pick_up_from_disk():
                self._return(tile)
        # A new set goes in only onto an empty disk (people do not pour one set onto another).
        if not pushed and self.to_pour and not hopper:
            world.pour(self.to_pour.pop(0))
        self._later(self.reaction_s, self._press, "key_lift0")

    def _set_of(self, tile) -> str | None:
        entry = self.world.physical.lookup(tile.uid)
        return entry.set_id if entry is not None else None

    def lay_hand(self, side: int, kinds: list[int]) -> bool:
        """The player of ``side`` lays a hand (a declared win: its faces, exposed sets included) on the pad in
        front of the seat, where the table's referee reads it (``mjtable diag judge``, ``reader inventory`` of
        the pad); it stays there until the table top is pushed into the centre.  False if the table top lacks
        a tile of it (nothing is laid)."""
        try:
            self.world.lay_hand_on_pad(side, kinds)
        except ValueError as exc:
            log.warning("%s", exc)
            return False
        return True

    def finish_hand(self) -> None:
        """The hand was played out (a win or a drawn hand): someone presses a lift key (as soon as the
        table is back in play, if a hold or a fault interrupted it meanwhile)."""
        self.hand_over_pending = True
        self._later(self.reaction_s, self._end_hand)

    def look_again(self) -> None:
        """React to the table's state as it is now (after learning something new about it)."""
        self._gen += 1
        self._react(self.state)

    def _end_stale_hand(self) -> None:
        """The walls of a hand from an earlier run are up: nobody remembers it, so it is ended (both lift keys: a
        void hand when its result was not recorded, its money paid so far kept); again a while later if the
        keys did not make a chord (a key stuck meanwhile)."""
        self.hands_started = self.hands_ended = self.stale_hand
        self.hand_over_pending = self.void_pending = True
        self.ending_stale = True
        self._end_hand()

    def _timed_hand_over(self) -> None:
        self.hand_over_pending = True
        self.void_pending = True
        self._end_hand()

    def _end_hand(self) -> None:
        if not self.hand_over_pending or self.state is not S.IN_PLAY:
            return                      # (a key now would mean something else: release a hold, ...)
        self.hands_ended = self.hands_started
        if self.hands_started >= self.hands_wanted and not self.ending_stale:
            self.hand_over_pending = self.void_pending = False
            self.finished = True
            return
        if self.void_pending:
            # no result to record: both lift keys (a void hand); again a while later if they made no chord
            self._press_both()
            self._later(self.reaction_s * 3, self._end_hand)
            return
        self.hand_over_pending = False
        self._press("key_lift0")

    def _press_both(self) -> None:
        for key in ("key_lift0", "key_lift1"):
            self.world.press(key, hold_s=0.3)

    def _resume_after_hold(self) -> None:
        # E62: the players find the missing tile and put it back through the centre first.
        world = self.world
        if self.holds_in_a_row >= CALL_TECHNICIAN_AFTER and self.auto_ack_s is not None:
            # the same hold again and again: a sensor, not a tile; the technician finds it and, a moment
            # later (a key just freed needs to come up first), resumes
            world.repair()
            self.technician_visits += 1
            self.holds_in_a_row = 0
            self._later(self.reaction_s, self._press, "key_lift0")
            return
        missing = world.removed_tiles
        if missing:
            world.turntable.load([missing.pop(0)])
        stacking = world.set_of([t for groove in world.grooves() for stack in groove for t in stack])
        if stacking is None and not world.turntable.hopper and world.found:
            stacking = world.set_of(world.found)     # nothing stacked at all: the set itself was put aside
        if stacking is not None:
            mine = [t for t in world.found if self._set_of(t) == stacking]
            if mine:
                world.found = [t for t in world.found if self._set_of(t) != stacking]
                world.turntable.load(mine)
            # a tile of this set in the walls of the other (its back colour gives it away) is swapped out
            if world.set_of(world.wall_tiles()) not in (None, stacking):
                strays = world.take_out_of_walls(world.set_of(world.wall_tiles()))
                theirs = [t for t in strays if self._set_of(t) == stacking and t.set_id != SPARE]
                world.turntable.load(theirs)
                for tile in strays:
                    if tile not in theirs:
                        self._return(tile)
        self._press("key_lift0")

    def _technician_ack(self) -> None:
        if self.state is not S.LATCHED:
            return
        self.world.repair()
        self.technician_visits += 1
        self.world.keys["key_lift0"].set(True)
        self.world.keys["key_lift1"].set(True)
        self.loop.call_later(0.3, self.world.keys["key_lift0"].set, False)
        self.loop.call_later(0.3, self.world.keys["key_lift1"].set, False)
