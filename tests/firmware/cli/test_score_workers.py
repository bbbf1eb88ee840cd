"""``mjtable score --jobs N``: worker processes give the same answers, in order, as one process; a dead worker
loses no line; ``auto`` shares out long files only; what is read ahead stays bounded.

The runs are processes of their own (``python -c``): a worker pool is forked from the scoring process, never
from the test runner's."""

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from firmware.cli import score_workers
from firmware.cli.score_workers import AUTO_MAX_JOBS, AUTO_MIN_BYTES, CHUNK_LINES, IN_FLIGHT, auto_jobs

ROOT = Path(__file__).parents[3]
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def long_file(tmp_path_factory) -> tuple[Path, bytes]:
    """6,300 cases and their answers from one process."""
    path = tmp_path_factory.mktemp("score") / "long.jsonl"
    path.write_bytes((DATA / "mcr-curated.jsonl").read_bytes() * 30)
    return path, _score(path, "--jobs", "1").stdout


def _mixed_file(tmp_path: Path) -> Path:
    """Several chunks of lines of every kind: cases of every rule set (some paying), bad JSON, invalid cases,
    a line over the limit, bytes that are not UTF-8, blank lines, a record case."""
    cases = []
    for name in ("mcr-random.jsonl", "mcr-curated.jsonl", "mcr-negative.jsonl"):
        cases += (DATA / name).read_bytes().splitlines()
    oddities = [b"{not json", b"", b"   ", b'{"id": 9, "rules": "mcr", "hand": "1111m1m", "win_tile": "1m", '
                b'"seat_wind": "E", "round_wind": "E"}', b'{"id": "x\xff"}', b"[1, 2]",
                b'{"id": "long", "hand": "' + b"1" * (70 * 1024) + b'"}',
                b'{"id": "r1", "record": {"rules": "mcr", "dealer": 0, "actions": ["wall_end"]}}']
    lines = []
    for i, case in enumerate(cases * 2):
        lines.append(case)
        if i % 97 == 0:
            lines.append(oddities[i // 97 % len(oddities)])
    assert len(lines) > 3 * CHUNK_LINES
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _score(path: Path, *options: str, script: str = "") -> subprocess.CompletedProcess:
    prelude = textwrap.dedent(script)
    code = prelude + "\nimport sys\nfrom firmware.cli.main import main\nsys.exit(main())\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, "score", *options, str(path)], capture_output=True,
                          cwd=ROOT, env=env, timeout=120)


def test_workers_answer_every_line_as_one_process_does_in_order(tmp_path):
    path = _mixed_file(tmp_path)
    one = _score(path, "--jobs", "1")
    two = _score(path, "--jobs", "2")
    assert one.returncode == two.returncode == 1            # (some lines cannot be read)
    assert two.stdout == one.stdout
    assert two.stderr == one.stderr
    answers = [json.loads(line) for line in two.stdout.splitlines()]
    assert any("error" in a for a in answers) and sum("total" in a for a in answers) > 500


def test_a_dead_worker_loses_no_line(tmp_path):
    """A worker killed (as the kernel's out-of-memory killer would) while answering a chunk: that chunk, the
    ones out with it and the rest are answered in the command's process, in order, and a line says so."""
    path = _mixed_file(tmp_path)
    one = _score(path, "--jobs", "1")
    kill = """
        import os, signal
        from firmware.cli import score_workers
        answer = score_workers.answer_chunk
        def dying(items, rules):
            if os.getpid() != PARENT and any(b'"id": "upstream-0150"' in i for i in items if isinstance(i, bytes)):
                os.kill(os.getpid(), signal.SIGKILL)
            return answer(items, rules)
        PARENT = os.getpid()
        score_workers.answer_chunk = dying
    """
    two = _score(path, "--jobs", "2", script=kill)
    assert b'"id": "upstream-0150"' in path.read_bytes()
    assert two.stdout == one.stdout
    assert two.returncode == one.returncode
    assert "a worker process died" in two.stderr.decode()


def test_what_is_read_ahead_stays_bounded(tmp_path):
    """However long the input, the lines read but not yet answered are at most the chunks out (IN_FLIGHT per
    worker) and the one being cut."""
    probe = f"""
        import itertools
        from firmware.cli.score_workers import WorkerAnswers
        line = open({str(DATA / 'mcr-random.jsonl')!r}, 'rb').readline().rstrip(b'\\n')
        read = 0
        def lines():
            global read
            for _ in range(6_000):
                read += 1
                yield line
        worst = answered = 0
        for text, count, unreadable, invalid in WorkerAnswers(2)(lines(), None):
            answered += count
            worst = max(worst, read - answered)
        print(answered, worst)
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=True)
    answered, worst = map(int, done.stdout.split())
    assert answered == 6_000
    assert worst <= (2 * IN_FLIGHT + 1) * CHUNK_LINES


def test_auto_shares_out_long_files_only(tmp_path, monkeypatch):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(b"{}\n" * 10)
    big.write_bytes(b"{}\n" * (AUTO_MIN_BYTES // 3 + 1))
    monkeypatch.setattr(score_workers.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert auto_jobs(None) == 1                         # standard input: answers as lines come in
    assert auto_jobs(small) == 1
    assert auto_jobs(tmp_path / "missing.jsonl") == 1   # (the command says it cannot read it)
    assert auto_jobs(big) == AUTO_MAX_JOBS
    monkeypatch.setattr(score_workers.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert auto_jobs(big) == 1


@pytest.mark.parametrize("value", ["0", "x", "65"])
def test_jobs_must_be_a_count_or_auto(value, capsys):
    from firmware.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["score", "--jobs", value, os.devnull])
    assert exit_.value.code == 2
    assert "--jobs" in capsys.readouterr().err


@pytest.mark.parametrize("after_lines", [1, 2_000, 10_000])
def test_ctrl_c_stops_the_command_and_its_workers(tmp_path, after_lines):
    """Ctrl-C at a terminal goes to every process of the job: the command stops (status 130) at once, with no
    traceback from a worker, and no worker is left behind.  (Sent once so many answers have come out.)"""
    path = tmp_path / "long.jsonl"
    path.write_bytes((DATA / "mcr-random.jsonl").read_bytes() * 150)          # 30,000 lines: seconds of work
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli.main", "score", "--jobs", "2", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(after_lines):
            assert proc.stdout.readline()
        os.killpg(proc.pid, signal.SIGINT)
        proc.stdout.read()
        assert proc.wait(timeout=10) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert b"Traceback" not in proc.stderr.read()
    with pytest.raises(ProcessLookupError):                 # the whole group is gone
        os.killpg(proc.pid, 0)


def _ends_within(pid: int, timeout_s: float) -> bool:
    """Does process ``pid`` (not a child of ours) end within ``timeout_s``?  (Its pidfd becomes readable.)"""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_workers_end_with_the_command_however_it_dies(tmp_path, how):
    """The command killed midway (a service manager's stop, the out-of-memory killer): its workers end too, and
    whoever reads its output sees the end (a forked worker would otherwise wait for work for ever, holding the
    pipes)."""
    path = tmp_path / "long.jsonl"
    path.write_bytes((DATA / "mcr-random.jsonl").read_bytes() * 150)
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli.main", "score", "--jobs", "2", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    try:
        for _ in range(2_000):
            assert proc.stdout.readline()
        workers = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        assert len(workers) == 2
        os.kill(proc.pid, how)
        proc.communicate(timeout=10)        # both pipes end: the workers (which hold standard error) are gone
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == -how
    assert all(_ends_within(pid, 10) for pid in workers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the workers from /proc")
@pytest.mark.parametrize("after_lines, how", [(1, signal.SIGKILL), (2_345, signal.SIGTERM), (4_999, signal.SIGSEGV)])
def test_a_worker_killed_at_any_instant_loses_no_line(long_file, after_lines, how):
    """Whichever worker dies, however, after however many answers have come out (idle, answering, sending its
    answers back): every line is answered, in order, as one process answers it."""
    path, reference = long_file
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli.main", "score", "--jobs", "2", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        head = [proc.stdout.readline() for _ in range(after_lines)]
        workers = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        os.kill(int(workers[after_lines % len(workers)]), how)
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"".join(head) + rest == reference
    assert "a worker process died" in proc.stderr.read().decode()


def test_standard_input_and_pipes_are_answered_line_by_line(tmp_path):
    """Whatever --jobs says, a line on standard input or a pipe is answered as it comes (a chunk would wait for
    lines a person may never type): one line in, its answer out, the input still open."""
    from firmware.cli.score_workers import jobs_for

    fifo = tmp_path / "lines"
    os.mkfifo(fifo)
    assert jobs_for(None, 4) == jobs_for(fifo, 4) == jobs_for(fifo, "auto") == 1
    regular = tmp_path / "file.jsonl"
    regular.write_bytes(b"{}\n")
    assert jobs_for(regular, 3) == 3 and jobs_for(regular, "auto") == 1
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli.main", "score", "--jobs", "4", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        proc.stdin.write((DATA / "mcr-random.jsonl").read_bytes().splitlines(keepends=True)[0])
        proc.stdin.flush()
        assert select.select([proc.stdout], [], [], 30)[0], "no answer while the input stays open"
        answer = json.loads(proc.stdout.readline())          # (before the input ends)
        assert answer["id"] == "mcr-0001" and "total" in answer
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
