"""The console's log for ``mjtable sim``: a traceback goes to a file (or to the console at -vv), a fault's line once.

In a simulated parlour (``--fleet``) each line logged while a table runs is
prefixed with that table's id (:func:`console_prefix`): twenty tables' faults
on one console say whose they are.

The controller logs a software error (E99) twice: the fault policy's line
with the traceback, then the fault's own line with its hint
(``firmware.faults``).  A bench tester needs the second; the firmware team
needs the traceback.  Below ``-vv`` the console therefore shows every line
without its traceback, which is written whole to a file (named on the
console: the fault's line says where), and leaves out the fault policy's
E99 line, which the fault's line repeats with the hint.  At ``-vv`` the
console is the log, tracebacks and all.  Other handlers (a test's capture,
a log file) are untouched: nothing here changes a record.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Callable, Iterator

from firmware.cli.words import _, ngettext

log = logging.getLogger(__name__)

POLICY_LOGGER = "firmware.controller.fault_policy"     # its E99 line carries the traceback
FAULTS_LOGGER = "firmware.faults"                      # the fault's own line, with its hint


def _is_e99(record: logging.LogRecord, name: str) -> bool:
    return record.name == name and record.getMessage().startswith("E99 ")


class TracebackFile:
    """Where the console's tracebacks go: a file made at the first one (in ``folder``, default the system's
    temporary folder), each record written whole, appended."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.path: Path | None = None
        self.written = 0
        self._formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")

    def write(self, record: logging.LogRecord) -> Path | None:
        """Write the record and its traceback; the file (None when it cannot be written: -vv prints them)."""
        try:
            if self.path is None:
                handle = tempfile.NamedTemporaryFile("w", prefix="mjtable-sim-", suffix="-tracebacks.log",
                                                     dir=self.folder, delete=False, encoding="utf-8")
                handle.close()
                self.path = Path(handle.name)
            text = self._formatter.format(_copy(record))
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(text + "\n\n")
            self.written += 1
            return self.path
        except OSError as exc:
            print("mjtable: " + _("the traceback could not be kept in a file (%(problem)s); mjtable sim -vv prints it")
                  % {"problem": exc}, file=sys.stderr)
            return None


def _copy(record: logging.LogRecord) -> logging.LogRecord:
    """A copy to format (formatting caches the traceback's text on the record it formats)."""
    return logging.makeLogRecord(record.__dict__)


class ConsoleTracebacks(logging.Filter):
    """On a console handler: a record with a traceback has it written to :class:`TracebackFile`; the fault
    policy's E99 line is left out (the fault's own line follows, with its hint)."""

    def __init__(self, tracebacks: TracebackFile) -> None:
        super().__init__()
        self.tracebacks = tracebacks
        self._seen: "weakref.WeakSet[logging.LogRecord]" = weakref.WeakSet()   # written already (by another handler)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info or record.exc_text or record.stack_info:
            if record not in self._seen:
                self._seen.add(record)
                self.tracebacks.write(record)
            if _is_e99(record, POLICY_LOGGER) and self.tracebacks.path is not None:
                return False
        return True


class ConsoleFormatter(logging.Formatter):
    """The console's lines without tracebacks; a line whose traceback is in the file (and the E99 fault's own
    line) says where."""

    def __init__(self, inner: logging.Formatter | None, tracebacks: TracebackFile) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter("%(levelname)s %(name)s: %(message)s")
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        had = bool(record.exc_info or record.exc_text or record.stack_info)
        if had and self.tracebacks.path is None:           # (the file could not be written: the console has it)
            return self.inner.format(_copy(record))
        bare = _copy(record)
        bare.exc_info = bare.exc_text = bare.stack_info = None
        line = self.inner.format(bare)
        where = self.tracebacks.path
        if where is not None and (had or _is_e99(record, FAULTS_LOGGER)):
            line += f" (the traceback: {where}; mjtable sim -vv prints it here)"
        return line


def _console_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers
            if isinstance(h, logging.StreamHandler) and getattr(h, "stream", None) in (sys.stdout, sys.stderr)]


@contextlib.contextmanager
def console_tracebacks(keep: bool, folder: Path | None = None) -> Iterator[TracebackFile]:
    """For the run's length, the root logger's console handlers keep tracebacks off the console (see the
    module's docstring); ``keep`` (-vv): the console shows them."""
    tracebacks = TracebackFile(folder)
    handlers = [] if keep else _console_handlers()
    undo = []
    for handler in handlers:
        keep_filter = ConsoleTracebacks(tracebacks)
        formatter = handler.formatter
        handler.addFilter(keep_filter)
        handler.setFormatter(ConsoleFormatter(formatter, tracebacks))
        undo.append((handler, keep_filter, formatter))
    try:
        yield tracebacks
    finally:
        for handler, keep_filter, formatter in undo:
            handler.removeFilter(keep_filter)
            handler.setFormatter(formatter)
        if tracebacks.path is not None:
            print("mjtable sim: " + ngettext("%(n)s traceback of the run is in %(file)s",
                                             "%(n)s tracebacks of the run are in %(file)s", tracebacks.written)
                  % {"n": tracebacks.written, "file": tracebacks.path}, file=sys.stderr)


class PrefixFormatter(logging.Formatter):
    """The console's lines, each prefixed with ``prefix()`` when it names something (``t002: ...``)."""

    def __init__(self, inner: logging.Formatter | None, prefix: Callable[[], str | None]) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter("%(levelname)s %(name)s: %(message)s")
        self.prefix = prefix

    def format(self, record: logging.LogRecord) -> str:
        line = self.inner.format(record)
        who = self.prefix()
        return f"{who}: {line}" if who else line


@contextlib.contextmanager
def console_prefix(prefix: Callable[[], str | None]) -> Iterator[None]:
    """For its length, the root logger's console lines start with ``prefix()`` (when not None)."""
    undo = []
    for handler in _console_handlers():
        undo.append((handler, handler.formatter))
        handler.setFormatter(PrefixFormatter(handler.formatter, prefix))
    try:
        yield
    finally:
        for handler, formatter in undo:
            handler.setFormatter(formatter)
