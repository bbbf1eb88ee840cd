"""A frozen dataclass made as fast as a plain one: its ``__init__`` writes the instance's ``__dict__`` directly.

``@dataclass(frozen=True)`` makes an ``__init__`` that stores each field
through ``object.__setattr__`` (its own ``__setattr__`` refuses), a call per
field: a 13-field :class:`~firmware.rules.win.Win` took some 5 us to make,
twice a line of ``mjtable score``.  :func:`quick_init` makes the same
``__init__`` (the same parameters, defaults, default factories and
``__post_init__`` call, derived from the class's fields) storing into
``__dict__`` instead; the instance is frozen as before (assignment after
``__init__`` still raises), compares and hashes as before.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")
_FACTORY = object()             # the default of a parameter whose field has a default factory


def quick_init(cls: type[T]) -> type[T]:
    """``cls`` (a frozen dataclass without slots, init-only or keyword-only fields) with a faster ``__init__``."""
    params = cls.__dataclass_params__               # type: ignore[attr-defined]
    if not params.frozen or "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: quick_init is for frozen dataclasses without slots")
    names: dict[str, Any] = {"_FACTORY": _FACTORY}
    args: list[str] = []
    body: list[str] = ["    d = self.__dict__"]
    for f in dataclasses.fields(cls):               # type: ignore[arg-type]
        if f.kw_only:
            raise TypeError(f"{cls.__name__}.{f.name}: quick_init does not make keyword-only parameters")
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if not f.init:
            if has_default:
                names[f"_dflt_{f.name}"] = f.default
                body.append(f"    d[{f.name!r}] = _dflt_{f.name}")
            elif has_factory:
                names[f"_fac_{f.name}"] = f.default_factory
                body.append(f"    d[{f.name!r}] = _fac_{f.name}()")
            continue
        if has_default:
            names[f"_dflt_{f.name}"] = f.default
            args.append(f"{f.name}=_dflt_{f.name}")
            body.append(f"    d[{f.name!r}] = {f.name}")
        elif has_factory:
            names[f"_fac_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_FACTORY")
            body.append(f"    d[{f.name!r}] = _fac_{f.name}() if {f.name} is _FACTORY else {f.name}")
        else:
            args.append(f.name)
            body.append(f"    d[{f.name!r}] = {f.name}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(source, names)                             # (the way dataclasses makes its own __init__)
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)    # type: ignore[misc]
    cls.__init__ = init                                            # type: ignore[misc]
    return cls
