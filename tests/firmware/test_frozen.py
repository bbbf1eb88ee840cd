"""quick_init: a frozen dataclass's faster __init__ takes the same arguments and makes the same frozen object."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from firmware.rules.case_format import Case
from firmware.frozen import quick_init
from firmware.rules.hand_record import Action, Verb
from firmware.rules.money import WIN, Item, Payment, Reason
from firmware.rules.win import Meld, MeldKind, Win


@pytest.mark.parametrize("cls", [Win, Meld, Action, Item, Reason, Payment, Case])
def test_the_same_parameters_as_the_dataclass_made(cls):
    made = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), {
        "__annotations__": {f.name: f.type for f in dataclasses.fields(cls)},
        **{f.name: dataclasses.field(default=f.default, default_factory=f.default_factory)
           for f in dataclasses.fields(cls)
           if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING}}))
    def shape(init) -> list[tuple]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(init).parameters.values()]

    assert shape(cls.__init__) == shape(made.__init__)


def test_the_object_is_the_same_and_stays_frozen():
    win = Win((0, 1, 2), (Meld(MeldKind.PUNG, 5, "left"),), 3, True, seat_wind=2)
    assert win == Win(hand=(0, 1, 2), melds=(Meld(MeldKind.PUNG, 5, "left", False),), win_tile=3, self_drawn=True,
                      seat_wind=2)
    assert hash(win) == hash(dataclasses.replace(win)) and win.round_wind == 0 and win.void is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        win.flowers = 3                                          # type: ignore[misc]
    assert Action(Verb.WIN, 1).flags == frozenset() and Action(Verb.WIN, 1).hand == ()


def test_post_init_still_checks():
    with pytest.raises(ValueError, match="a payment of 0"):
        Payment(0, 1, 0, WIN)


def test_default_factories_and_refusals():
    @quick_init
    @dataclasses.dataclass(frozen=True)
    class Box:
        items: list = dataclasses.field(default_factory=list)
        size: int = dataclasses.field(default=1, init=False)

    a, b = Box(), Box()
    assert a.items == [] and a.items is not b.items and a.size == 1 and Box([1]).items == [1]

    @dataclasses.dataclass
    class Plain:
        x: int

    with pytest.raises(TypeError, match="frozen"):
        quick_init(Plain)
