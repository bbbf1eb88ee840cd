"""``mjtable score --jobs N``: a long file's lines answered by worker processes, in the input's order."""

# The reading, the cutting into lines and the writing stay in the command's process; workers answer chunks
# of CHUNK_LINES lines each (a chunk's answers come back as JSON text, in order).  At most IN_FLIGHT chunks
# per worker are out at a time, so memory stays bounded whatever the file's size.  A worker that dies (killed,
# out of memory) loses no line: the chunks it had, and every chunk after them, are answered in this process,
# and a line on standard error says so.

from __future__ import annotations

import ctypes
import logging
import os
import signal
import stat
import sys
from collections import deque
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from firmware.cli.words import _
from firmware.rules.case_scoring import Answered, TooLong, answer_chunk

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

log = logging.getLogger(__name__)

CHUNK_LINES = 256               # lines a worker answers per request (each request costs a round trip)
IN_FLIGHT = 2                   # chunks out per worker: one being answered, one queued behind it
AUTO_MIN_BYTES = 1024 * 1024    # ``--jobs auto``: files this long or longer are shared out (about 5,000 cases)
AUTO_MAX_JOBS = 4
PR_SET_PDEATHSIG = 1              # prctl(2): the signal a process gets when its parent dies


def jobs_for(path: Path | None, asked: int | str) -> int:
    """The worker processes for the input: one process for standard input, a pipe or anything else that is not a
    regular file (its answers go out as its lines come in: a chunk would wait for 256 lines a person may never
    type); for a file, ``asked`` (a number, or ``auto``: :func:`auto_jobs`)."""
    if path is None:
        return 1
    try:
        status = path.stat()
    except OSError:
        return 1                        # (the command says it cannot read it)
    if not stat.S_ISREG(status.st_mode):
        return 1
    return _auto_for(status.st_size) if asked == "auto" else int(asked)


def auto_jobs(path: Path | None) -> int:
    """``--jobs auto``: one process for standard input and for files under AUTO_MIN_BYTES (a worker's start costs
    more than it saves), else one per CPU this process may use, at most AUTO_MAX_JOBS."""
    try:
        return 1 if path is None else _auto_for(path.stat().st_size)
    except OSError:
        return 1


def _auto_for(size: int) -> int:
    if size < AUTO_MIN_BYTES:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, AUTO_MAX_JOBS))


def _worker_start(command_pid: int) -> None:
    """A worker leaves Ctrl-C to the command (a terminal sends it to every process of the job): the command
    stops handing out chunks and the workers stop when told, not midway through the pool's own locks.  Its
    answers go back through the pool, so it lets go of the command's standard output (a reader of it sees
    the end when the command ends).  On Linux the kernel kills it when the command dies, however it dies
    (killed, out of memory): a forked worker holds both ends of the pool's pipes, so it would never see the
    command go and would wait for work for ever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
            log.warning("a scoring worker cannot ask to end with the command: %s", os.strerror(ctypes.get_errno()))
    if os.getppid() != command_pid:      # the command died before the request took hold
        os._exit(1)


class WorkerAnswers:
    """The ``answers`` of :func:`~firmware.rules.case_scoring.score_input` over ``jobs`` worker processes."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.lost_workers = False       # a worker died; the rest was answered here

    def __call__(self, items: Iterator[bytes | TooLong], rules: str | None) -> Iterator[Answered]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        pending: deque[tuple[list[bytes | TooLong], Future[Answered]]] = deque()
        pool = ProcessPoolExecutor(self.jobs, mp_context=context, initializer=_worker_start,
                                   initargs=(os.getpid(),))
        try:
            while True:
                chunk = list(islice(items, CHUNK_LINES))
                if self.lost_workers:           # the chunks out first (answered here), then the rest, in order
                    while pending:
                        yield self._collect(*pending.popleft(), rules)
                    if not chunk:
                        return
                    yield answer_chunk(chunk, rules)
                    continue
                if chunk:
                    pending.append((chunk, self._submit(pool, chunk, rules)))
                if pending and (not chunk or len(pending) >= self.jobs * IN_FLIGHT):
                    yield self._collect(*pending.popleft(), rules)
                elif not chunk:
                    return
        finally:
            for _, future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, pool: ProcessPoolExecutor, chunk: list[bytes | TooLong], rules: str | None) -> Future[Answered]:
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        try:
            return pool.submit(_answer_chunk, chunk, rules)
        except BrokenProcessPool:
            future: Future[Answered] = Future()
            future.set_exception(BrokenProcessPool("the worker pool is broken"))
            return future

    def _collect(self, chunk: list[bytes | TooLong], future: Future[Answered], rules: str | None) -> Answered:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return future.result()
        except BrokenProcessPool as exc:
            if not self.lost_workers:
                self.lost_workers = True
                log.debug("a scoring worker died (%s): the remaining lines are answered in one process", exc)
                print("mjtable score: " + _("a worker process died; the remaining lines are answered in one "
                                            "process"), file=sys.stderr)
            return answer_chunk(chunk, rules)


def _answer_chunk(items: list[bytes | TooLong], rules: str | None) -> Answered:
    """A worker's job (:func:`~firmware.rules.case_scoring.answer_chunk`), looked up in this module when it runs
    (so a test can put a dying one in its place)."""
    return answer_chunk(items, rules)
