"""Callback lists that cannot leak: adding a listener returns a handle that removes exactly that listener.

Several parts of the firmware tell whoever listens (the reader driver of
every tag, the panel of every key).  A listener added for the duration of
one cycle (a wall read) must be gone after it, or every later cycle pays for
it and keeps its objects alive.  Removing by comparing callables misses a
freshly bound method (``self.method`` is a new object each time); the handle
returned by :meth:`Listeners.add` does not.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Listening:
    """One listener on one list, until :meth:`cancel` (idempotent)."""

    __slots__ = ("_owner", "callback")

    def __init__(self, owner: "Listeners", callback: Callable[..., Any]) -> None:
        self._owner: Listeners | None = owner
        self.callback = callback

    @property
    def active(self) -> bool:
        return self._owner is not None

    def cancel(self) -> None:
        if self._owner is not None:
            self._owner._remove(self)
            self._owner = None


class Listeners(Generic[F]):
    def __init__(self) -> None:
        self._listening: list[Listening] = []

    def add(self, callback: F) -> Listening:
        listening = Listening(self, callback)
        self._listening = [*self._listening, listening]     # (a new list: a notify under way keeps its own)
        return listening

    def _remove(self, listening: Listening) -> None:
        self._listening = [x for x in self._listening if x is not listening]

    def notify(self, *args: Any) -> None:
        """Call every listener, in the order added (one that cancels itself meanwhile is skipped; one added
        meanwhile is not called this time).  The list is never changed in place, so it needs no copy."""
        for listening in self._listening:
            if listening._owner is not None:
                listening.callback(*args)

    def __len__(self) -> int:
        return len(self._listening)
