"""An error of the hall's side made with its English template and values, said by the CLI in its language."""

from __future__ import annotations

from typing import Any, TypeVar

E = TypeVar("E", bound=BaseException)


def worded(kind: type[E], template: str, **values: Any) -> E:
    """An error of ``kind`` whose message is ``template`` (English, a ``%(name)s`` for each value) with ``values``.

    The same shape as :func:`firmware.i18n.worded` (parlour's core imports no
    firmware): its str() is the English (the log's, the service's), it keeps
    ``template`` and ``values``, and ``mjtable tourney`` says the template in
    its language (``firmware.cli.error_words.said``); ``make i18n`` extracts
    it where it is written (``-k worded:2``, ``babel-cli.cfg``).
    """
    exc = kind(template % values)
    exc.template, exc.values = template, values           # type: ignore[attr-defined]
    return exc
