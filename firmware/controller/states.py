"""The controller's states and its transition table, as data (drawn by ``make diagrams``).

The table-top cycle of a double-set table: while one set is played, the
other is stacked underneath (a background job, not a state); when the hand
ends the centre opens for the used set, closes, the ready set rises, the
dealer throws the dice and the next hand is dealt.  States where the table
waits for people (IN_PLAY, REJECTED, OPEN, DICE, HOLD, LATCHED, PAUSED) end on a key;
the others end when their operation reports done.
"""

from __future__ import annotations

import enum


class TableState(enum.Enum):
    BOOT = "boot"                    # power on, nothing known yet
    SERVICE = "service"              # technician's test mode (both lift keys at power on)
    HOMING = "homing"                # every mechanism to its home, reader link up
    IDLE = "idle"                    # decide the next step from the set bookkeeping
    STACKING = "stacking"            # players wait while a set is shuffled and stacked
    PAUSED = "paused"                # stacking paused, centre up, to add forgotten tiles (补牌)
    READY = "ready"                  # a set stacked, nothing on the table: a lift key raises it
    RAISING = "raising"              # the four wall lifts push the ready set up
    DICE = "dice"                    # waiting for the dealer's dice key, then the roll and the deal
    IN_PLAY = "in_play"              # a hand is being played (the other set may be stacking below)
    REJECTED = "rejected"            # walls up that verification rejected (E82): not dealt; the players take
                                     # out the tiles named and a lift key opens the centre to restack them
    CENTER_UP = "center_up"          # hand over: the centre rises
    OPEN = "open"                    # centre up: players push the used set in; a lift key closes
    CENTER_DOWN = "center_down"      # the centre goes down
    HOLD = "hold"                    # a holding fault: stopped until its cause is gone and a lift key resumes
    LATCHED = "latched"              # a latched fault: every output safe until a technician acknowledges


class SetLocation(enum.Enum):
    NONE = "none"           # not in the table (or not yet loaded)
    DISK = "disk"           # on the turntable: to be shuffled and stacked
    STACKING = "stacking"   # being stacked into the grooves
    STACKED = "stacked"     # walls ready under the table top
    TABLE = "table"         # walls up, being played


S = TableState
_MAY_HOLD = [s.value for s in S if s not in (S.LATCHED, S.HOLD, S.SERVICE)]   # service mode stays in service

# One row per transition: trigger, sources, destination, and what it means.
TRANSITIONS: list[dict] = [
    {"trigger": "power_on", "source": S.BOOT.value, "dest": S.HOMING.value},
    {"trigger": "service", "source": S.BOOT.value, "dest": S.SERVICE.value},
    {"trigger": "leave_service", "source": S.SERVICE.value, "dest": S.HOMING.value},
    {"trigger": "homed", "source": S.HOMING.value, "dest": S.IDLE.value},
    {"trigger": "stack", "source": S.IDLE.value, "dest": S.STACKING.value},
    {"trigger": "set_ready", "source": S.IDLE.value, "dest": S.READY.value},
    {"trigger": "stacking_over", "source": S.STACKING.value, "dest": S.IDLE.value},
    {"trigger": "resume_play", "source": S.IDLE.value, "dest": S.IN_PLAY.value},
    {"trigger": "pause", "source": S.STACKING.value, "dest": S.PAUSED.value},
    {"trigger": "resume", "source": S.PAUSED.value, "dest": S.STACKING.value},
    {"trigger": "raise_walls", "source": S.IDLE.value, "dest": S.RAISING.value},
    {"trigger": "raised", "source": S.RAISING.value, "dest": S.DICE.value},
    {"trigger": "reject", "source": S.RAISING.value, "dest": S.REJECTED.value},
    {"trigger": "resume_rejected", "source": S.IDLE.value, "dest": S.REJECTED.value},
    {"trigger": "dealt", "source": S.DICE.value, "dest": S.IN_PLAY.value},
    {"trigger": "resume_dice", "source": S.IDLE.value, "dest": S.DICE.value},
    {"trigger": "open_center", "source": [S.IN_PLAY.value, S.REJECTED.value, S.IDLE.value, S.READY.value],
     "dest": S.CENTER_UP.value},
    {"trigger": "opened", "source": S.CENTER_UP.value, "dest": S.OPEN.value},
    {"trigger": "close_center", "source": S.OPEN.value, "dest": S.CENTER_DOWN.value},
    {"trigger": "closed", "source": S.CENTER_DOWN.value, "dest": S.IDLE.value},
    {"trigger": "hold", "source": _MAY_HOLD, "dest": S.HOLD.value},
    {"trigger": "release", "source": S.HOLD.value, "dest": S.HOMING.value},
    {"trigger": "latch", "source": [s.value for s in S if s is not S.LATCHED], "dest": S.LATCHED.value},
    {"trigger": "acknowledge", "source": S.LATCHED.value, "dest": S.HOMING.value},
    {"trigger": "acknowledge_service", "source": S.LATCHED.value, "dest": S.SERVICE.value},
]


def mermaid() -> str:
    """The transition table as a mermaid state diagram."""
    lines = ["stateDiagram-v2", f"    [*] --> {S.BOOT.value}"]
    for row in TRANSITIONS:
        sources = row["source"] if isinstance(row["source"], list) else [row["source"]]
        if len(sources) > 6:
            lines.append(f"    note right of {row['dest']}: {row['trigger']} from any active state")
            continue
        for source in sources:
            lines.append(f"    {source} --> {row['dest']}: {row['trigger']}")
    return "\n".join(lines) + "\n"
