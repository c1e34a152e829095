"""Run untrusted code in a forked child: its own process group, a timeout, a memory cap, captured output.

The grader process imports torch once and forks one child per job, so each job starts warm (torch and
Dynamo already imported) yet shares no state with the grader or with other jobs: a config a learner sets,
a function they monkeypatch, a crash or an `os._exit` stays in that child.

Forking is only safe before torch's thread pool has started: a child forked after a parallel op hangs on
its first parallel op. `prepare()` pins the grader to one intra-op thread before any op runs; call it
first thing in any process that will fork jobs. The process that runs a learner's code and forks no more
takes a program's thread count back (`program_threads`).

A job returns one result, or yields several (one per stage of a check), each sent as soon as it is
ready and each given its own timeout: the stages finished before a crash or a hang are kept. A result
travels back over a pipe as a length-prefixed `torch.save` archive, read with `weights_only=True`, so
nothing the child sends can run code in the grader. What the child prints is kept as text for the
report and never read as a result.
"""

from __future__ import annotations

import atexit
import faulthandler
import gc
import inspect
import io
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from checker.grading import strays
from checker.grading.confine import confine
from checker.grading.limits import Limits  # noqa: F401 - part of this module's interface (sandbox.Limits)

_LENGTH_BYTES = 8  # each result is sent as its length, then its torch.save archive
_MAX_RESULT_BYTES = 64 * 1024 * 1024  # larger is no check's result: the child is stopped

# Saving a tensor caches `torch.Tensor.__slotnames__` on first use. Do it here, before any child exists,
# so that a child sending its first result does not add a member to torch.Tensor between two of a
# check's tamper snapshots.
torch.save(torch.zeros(1), io.BytesIO())

# What run_jobs freezes is put back in the collector's sight when the grader exits, so that its objects
# are freed as usual: a native extension that counts what is still alive at exit complains otherwise
# (triton's, loaded by CUDA builds of torch 2.15, prints hundreds of "nanobind: leaked" lines on stderr).
# Children leave with os._exit and never run it.
atexit.register(gc.unfreeze)


@dataclass(frozen=True)
class Outcome:
    """How a job ended: every result that came back whole, and whether the job finished."""

    results: list[Any]  # in the order sent; kept even when the child died afterwards
    complete: bool  # every expected result arrived and the child exited normally
    output: str  # stdout and stderr, interleaved, truncated to Limits.output_bytes
    exit_code: int | None  # None when killed by a signal
    signal_number: int | None
    timed_out: bool
    seconds: float
    refused: str = ""  # why the grader stopped reading what the child sent, and stopped the child

    @property
    def payload(self) -> Any:
        """A finished job's (last) result; None when the job did not finish."""
        return self.results[-1] if self.complete else None

    @property
    def problem(self) -> str | None:
        """Why the job did not finish, in words for the learner; None when it did."""
        if self.complete:
            return None
        if self.refused:
            return f"{self.refused}. Is an output far larger than it should be?"
        if self.timed_out:
            return (f"it did not finish within {self.seconds:.0f} s and was stopped. Look for a loop that "
                    "never ends or work that is far too large.")
        if self.signal_number is not None:
            name = signal.Signals(self.signal_number).name
            if self.signal_number == signal.SIGKILL:
                return (f"the process was killed ({name}), most likely for running out of memory.")
            return f"the process crashed ({name})."
        return (f"the process ended with exit code {self.exit_code} before the check finished: "
                "does the file call sys.exit(), os._exit() or close file descriptors?")


_LIVE: dict[int, str | None] = {}  # every running child of this process: its scratch folder


def stop_all() -> None:
    """Kill every running child's process group and remove its scratch folder (Ctrl-C in the CLI)."""
    for pid, scratch in list(_LIVE.items()):
        _kill_group(pid)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    strays.kill_strays(_LIVE)  # and whatever they left outside their groups (the checks are reaped by their waiter)


_PROGRAM_THREADS: list[int] = []  # torch's intra-op thread count in a program of its own, read before prepare()


def program_threads() -> int:
    """How many intra-op threads torch gives a program of its own here: what the process that runs a learner's
    code runs with, so that no reading of it (a float sum's rounding, split over the threads) tells the checked
    process from the learner's program. A process that forks keeps one (prepare)."""
    return _PROGRAM_THREADS[0] if _PROGRAM_THREADS else torch.get_num_threads()


def prepare() -> None:
    """Make this process safe to fork jobs from: one intra-op thread, set before any torch op; and not
    dumpable, so that no other process of this user (a check's included) can read its memory, environment
    or descriptors through /proc or attach to it. Children inherit it. And a subreaper, so that every
    process a check leaves behind is killed when it ends (strays.py)."""
    if not _PROGRAM_THREADS:  # torch's default, before this process sets its own (no thread is started by asking)
        _PROGRAM_THREADS.append(torch.get_num_threads())
    torch.set_num_threads(1)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    strays.become_subreaper()  # what a check leaves orphaned comes back here, to be killed (strays.py)


@dataclass(frozen=True)
class Job:
    """What a child runs, and as whom."""

    run: Callable[[], Any]  # returns the result, or is a generator that yields one result per stage
    # With a grader running as root: the uid (and gid) the child switches to, so that it can read
    # neither the grader's files nor another student's private folder. Ignored otherwise.
    user: int | None = None
    workdir: str | None = None  # the child's working directory
    results: int = 1  # how many results `run` sends; each has Limits.timeout to arrive
    # Writes confined to a scratch folder made for the job and removed after it (confine.py): what a check
    # runs can lose none of the learner's files. Off only for a learner's own script (diagnose).
    confine: bool = True
    # Folders the job may not read beneath (the reference solutions, for a job that runs learner code).
    hidden: tuple[str, ...] = ()


@dataclass
class _Running:
    pid: int
    pidfd: int
    result_fd: int
    output_file: Any
    scratch: str | None
    started: float
    deadline: float
    expected: int
    index: int
    received: bytearray = field(default_factory=bytearray)  # bytes of a result still arriving
    frames: list[bytes] = field(default_factory=list)  # results that arrived whole, not yet loaded
    refused: str = ""  # why the rest of what the child sent was ignored
    result_closed: bool = False  # the child closed its end: stop polling the pipe, wait for the exit


def run_jobs(jobs: list[Job | Callable[[], Any]], limits: Limits = Limits(), parallel: int = 1,
             on_done: Callable[[int, Outcome], None] | None = None,
             meanwhile: Callable[[], None] | None = None) -> list[Outcome]:
    """Run each job in its own forked child, at most `parallel` at once; outcomes in job order.

    A job is a `Job` or a plain callable. `on_done(index, outcome)` is called in the grader as each
    job finishes (to save results or show progress). `meanwhile` runs in the grader once the first children
    have started, while they run (work of the grader's own that no child may see); a child that runs past
    its deadline meanwhile is killed when it returns.
    """
    jobs = [job if isinstance(job, Job) else Job(job) for job in jobs]
    # Move the grader's objects out of the garbage collector's sight: a child's first collection would
    # otherwise walk (and so copy, page by page) every object torch created, doubling a check's cost.
    gc.freeze()  # undone when the grader exits (the atexit at the top of this module)
    outcomes: list[Outcome | None] = [None] * len(jobs)
    pending = list(range(len(jobs)))
    running: dict[int, _Running] = {}  # keyed by pidfd
    try:
        while pending or running:
            while pending and len(running) < max(1, parallel):
                index = pending.pop(0)
                child = _start(jobs[index], index, limits, others=list(running.values()))
                running[child.pidfd] = child
            if meanwhile is not None:
                meanwhile, then = None, meanwhile
                then()
            _wait_some(running, limits, outcomes, on_done)
    finally:
        for child in running.values():  # interrupted: leave no child behind
            _kill_group(child.pid)
            _reap(child)
    return outcomes  # type: ignore[return-value]


def run_job(job: Job | Callable[[], Any], limits: Limits = Limits(),
            meanwhile: Callable[[], None] | None = None) -> Outcome:
    return run_jobs([job], limits, meanwhile=meanwhile)[0]


def _start(job: Job, index: int, limits: Limits, others: list[_Running]) -> _Running:
    read_fd, write_fd = os.pipe()
    output_file = tempfile.TemporaryFile()
    scratch = _scratch_folder(job) if job.confine else None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child: never returns
        os.close(read_fd)
        for other in others:  # another check's result pipe and output are none of this one's business
            for fd in (other.result_fd, other.pidfd, other.output_file.fileno()):
                os.close(fd)
        _child(job, write_fd, output_file.fileno(), limits, scratch)
    _LIVE[pid] = scratch
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    now = time.monotonic()
    return _Running(pid=pid, pidfd=os.pidfd_open(pid), result_fd=read_fd, output_file=output_file,
                    scratch=scratch, started=now, deadline=now + limits.timeout, expected=job.results, index=index)


def _scratch_folder(job: Job) -> str:
    folder = tempfile.mkdtemp(prefix="gbcheck-scratch-")
    if job.user is not None and os.geteuid() == 0:
        os.chown(folder, job.user, job.user)
    return folder


def _child(job: Job, result_fd: int, output_fd: int, limits: Limits, scratch: str | None) -> None:
    status = 0
    try:
        os.setpgid(0, 0)  # own process group: a timeout kills whatever the job started too
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        # Nothing else the grader had open reaches the job: a warm grader's connection to the CLI, the
        # notebook service's answer stream, a class worker's report pipe would each take a forged verdict.
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        os.closerange(3, result_fd)
        os.closerange(result_fd + 1, soft if 0 < soft != resource.RLIM_INFINITY else 1 << 20)
        # Fresh Python streams on the redirected descriptors: the grader's own sys.stdout may be a
        # capture object (pytest, Jupyter) whose buffer would swallow what the job prints.
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        faulthandler.enable(file=sys.stderr)  # a crash's Python stack goes into the report, not the grader's tty
        # Rebuild torch's intra-op thread pool here, on the one thread a forked child has, before any job
        # starts threads: it is marked corrupted by the fork, and autograd's device threads (several on
        # CUDA builds) that rebuild it at once can abort in set_num_threads.
        torch.set_num_threads(1)
        _limit_resources(limits, job.results)
        if job.workdir:
            os.chdir(job.workdir)
        if job.user is not None and os.geteuid() == 0:
            os.setgroups([])
            os.setgid(job.user)
            os.setuid(job.user)
        if scratch is not None:
            sys.dont_write_bytecode = True  # no cache of the learner's module for a later process to find
            confine(scratch, job.hidden)
        result = job.run()
        for part in result if inspect.isgenerator(result) else (result,):
            _send(result_fd, part)
    except BaseException:  # noqa: BLE001 - a job's failure must become an outcome, never escape the child
        try:
            traceback.print_exc()
        finally:
            status = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _send(result_fd: int, result: Any) -> None:
    buffer = io.BytesIO()
    torch.save(result, buffer)
    data = len(buffer.getbuffer()).to_bytes(_LENGTH_BYTES, "big") + buffer.getvalue()
    while data:
        data = data[os.write(result_fd, data):]


def limit_this_process(limits: Limits, results: int) -> None:
    """A check's limits on the calling process itself, for one that ends after its last job (a class worker)."""
    _limit_resources(limits, results)


def _limit_resources(limits: Limits, results: int) -> None:
    inherited = _address_space_bytes()
    cap = inherited + limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    cpu = int(limits.timeout) * results + 5  # a backstop if the grader itself is stopped
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a job that prints gigabytes gets write errors
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024 * 1024,) * 2)


def _address_space_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _wait_some(running: dict[int, _Running], limits: Limits, outcomes: list, on_done) -> None:
    poller = select.poll()
    for child in running.values():
        poller.register(child.pidfd, select.POLLIN)
        if not child.result_closed:
            poller.register(child.result_fd, select.POLLIN)
    nearest = min(child.deadline for child in running.values())
    timeout_ms = max(0, int((nearest - time.monotonic()) * 1000)) + 10
    events = poller.poll(timeout_ms)
    by_result_fd = {child.result_fd: child for child in running.values()}
    for fd, _ in events:
        if fd in by_result_fd:
            _drain(by_result_fd[fd], limits)
    now = time.monotonic()
    for pidfd, child in list(running.items()):
        exited = any(fd == pidfd for fd, _ in events)
        timed_out = not exited and now >= child.deadline
        if not (exited or timed_out):
            continue
        _kill_group(child.pid)  # a job out of time, or whatever a finished job left running
        status = _reap(child)
        _drain(child, limits)
        del running[pidfd]
        outcome = _outcome(child, status, timed_out, limits)
        outcomes[child.index] = outcome
        if on_done:
            on_done(child.index, outcome)


def _drain(child: _Running, limits: Limits) -> None:
    while True:
        try:
            chunk = os.read(child.result_fd, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            child.result_closed = True
            return
        if child.refused:
            continue
        child.received += chunk
        while len(child.received) >= _LENGTH_BYTES:
            size = _LENGTH_BYTES + int.from_bytes(child.received[:_LENGTH_BYTES], "big")
            if size > _MAX_RESULT_BYTES:  # not a result a check sends: stop the child, keep what came
                child.refused = (f"it sent back a result of {size / 2**20:.0f} MiB, over the "
                                 f"{_MAX_RESULT_BYTES / 2**20:.0f} MiB limit, and was stopped")
                _kill_group(child.pid)
                break
            if len(child.received) < size:
                break
            child.frames.append(bytes(child.received[_LENGTH_BYTES:size]))
            del child.received[:size]
            child.deadline = time.monotonic() + limits.timeout  # the next stage gets a timeout of its own


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(child: _Running) -> int:
    _, status = os.waitpid(child.pid, 0)
    _LIVE.pop(child.pid, None)
    os.close(child.pidfd)
    strays.kill_strays(_LIVE)  # what it left outside its group (setsid, a double fork)
    if child.scratch:
        shutil.rmtree(child.scratch, ignore_errors=True)
    return status


def _outcome(child: _Running, status: int, timed_out: bool, limits: Limits) -> Outcome:
    os.close(child.result_fd)
    child.output_file.seek(0)
    output = child.output_file.read(limits.output_bytes + 1)
    child.output_file.close()
    text = output[: limits.output_bytes].decode("utf-8", errors="replace")
    if len(output) > limits.output_bytes:
        text += "\n[output truncated]"
    results = []
    for frame in child.frames:
        try:
            results.append(torch.load(io.BytesIO(frame), weights_only=True))
        except Exception as err:  # noqa: BLE001 - unreadable result: reported, never trusted
            text += f"\n[a result could not be read: {err}]"
            break
    exited = not timed_out and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    complete = exited and len(results) == child.expected and not child.received
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) and not timed_out else None
    seconds = time.monotonic() - child.started
    return Outcome(results=results, complete=complete, output=text, exit_code=exit_code,
                   signal_number=signal_number, timed_out=timed_out,
                   seconds=limits.timeout if timed_out else seconds,  # a timeout is reported as the limit
                   refused=child.refused)
