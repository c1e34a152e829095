"""A class's checks, forked from a process that has read no submission.

A check's child is forked, so it holds a copy of its parent's memory, and a process can always read its
own (ctypes needs no permission). The class grader reads every student's files (to stage them, group identical
ones and read their text) and keeps every finished report: a check forked from it could find another
student's fix, or their verdict, in its own memory. So the grader starts this server first, once it has
warmed up and before it reads anything of any student. The server forks one worker per distinct file;
the worker reads that file alone and grades it exactly as `gbcheck check` does (strict.check_file:
the trials in a sandboxed child of the worker; then the audit in the worker itself, under a check's limits,
since it forks nothing more and ends). Its report goes straight to the
grader through a pipe the server hands over unread (SCM_RIGHTS), so no report passes through the
server's memory either.

    with PristineServer(exercises, limits) as server:
        for index, report in server.grade(jobs, parallel, warm=[...]): ...

Linux only, as the sandbox is (pidfd). Ctrl-C or the grader's death ends the server, which ends its
workers, which stop their checks (PR_SET_PDEATHSIG at each step).
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import socket
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from checker.course.manifest import Exercise
from checker.grading import sandbox, strays
from checker.grading.report import Report
from checker.grading.strict import check_file, error_report
from checker.grading.warmup import warm_up

_MESSAGE_BYTES = 64 * 1024  # one job, one "start" or one "worker started" message


@dataclass(frozen=True)
class FileJob:
    """One distinct file to grade: where it is staged, the digest the grader read, and as whom it runs."""

    exercise: str  # its exercise's id
    path: str
    digest: str  # sha256 of the bytes the grader read: a file changed since is not graded
    user: int | None  # the student's uid (grader running as root)


class PristineServer:
    """The fork server: start it before reading any submission."""

    def __init__(self, exercises: list[Exercise], limits: sandbox.Limits):
        self._grader, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        grader = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the server: never returns
            self._grader.close()
            _serve(server_end, {ex.id: ex for ex in exercises}, limits, grader)
        server_end.close()

    def __enter__(self) -> PristineServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def grade(self, jobs: list[FileJob], parallel: int, warm: list[str]) -> Iterator[tuple[int, Report]]:
        """Each job's report as it finishes: (index in `jobs`, report). `warm`: exercise ids to warm up on
        their shipped files first (strict's warm-up: worth it from a few files of an exercise on)."""
        for job in jobs:
            self._grader.send(json.dumps(asdict(job)).encode())
        self._grader.send(json.dumps({"start": True, "parallel": parallel, "warm": warm}).encode())
        reading: dict[int, tuple[int, bytearray]] = {}  # a worker's pipe: its job, what it has sent so far
        unreported = set(range(len(jobs)))
        server_open = True
        try:
            while server_open or reading:
                for source in select.select([self._grader] * server_open + list(reading), [], [])[0]:
                    if source is self._grader:
                        message, fds, _, _ = socket.recv_fds(self._grader, _MESSAGE_BYTES, 1)
                        if fds:  # a worker started: the pipe its report comes through
                            reading[fds[0]] = (json.loads(message)["index"], bytearray())
                        else:  # {"done": true}, or nothing: the server was killed
                            server_open = False
                        continue
                    chunk = os.read(source, 1 << 20)
                    if chunk:
                        reading[source][1].extend(chunk)
                        continue
                    index, data = reading.pop(source)
                    os.close(source)
                    report = _report(data)
                    if report is not None:
                        unreported.discard(index)
                        yield index, report
        finally:
            for fd in reading:
                os.close(fd)
        if unreported:
            raise GradingStopped(f"the grading processes stopped before {len(unreported)} of {len(jobs)} files had a "
                                 "verdict; run the same command again: the students who finished are kept")

    def close(self) -> None:
        """End the server (at once, if it is still grading) and wait for it."""
        self._grader.close()
        try:
            os.kill(self.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        strays.kill_strays(())  # workers of a server that was killed come here (the grader is a subreaper)


class GradingStopped(RuntimeError):
    """The server or a worker ended before every file had its verdict (killed, or out of memory). Nothing
    is made up for the files left: the students who finished are written, and a new run grades the rest."""


def _report(data: bytes) -> Report | None:
    try:
        return Report.from_dict(json.loads(data))
    except (ValueError, TypeError, KeyError):  # the worker died before it wrote its whole report
        return None


# --- the server and its workers (forked processes) --------------------------------------------------

def _serve(connection: socket.socket, exercises: dict[str, Exercise], limits: sandbox.Limits,
           grader: int) -> None:
    status = 0
    try:
        _end_with_parent(grader)
        strays.become_subreaper()  # what a worker leaves behind comes back here, to be killed
        jobs: list[FileJob] = []
        while True:
            message = json.loads(connection.recv(_MESSAGE_BYTES) or b'{"start": false}')
            if "start" in message:
                break
            jobs.append(FileJob(**message))
        if message["start"]:
            warm_up([exercises[ex_id] for ex_id in message["warm"]], references=False)
            _run_workers(connection, jobs, exercises, limits, max(1, message["parallel"]))
            connection.send(b'{"done": true}')
    except BaseException:  # noqa: BLE001 - the grader sees the workers' pipes close and reports each file
        status = 70
    finally:
        os._exit(status)


def _run_workers(connection: socket.socket, jobs: list[FileJob], exercises: dict[str, Exercise],
                 limits: sandbox.Limits, parallel: int) -> None:
    running: set[int] = set()
    for index, job in enumerate(jobs):
        while len(running) >= parallel:
            running.discard(os.wait()[0])
            strays.kill_strays(running)
        read_fd, write_fd = os.pipe()
        server = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            connection.close()
            os.close(read_fd)
            _work(job, exercises[job.exercise], limits, write_fd, server)
        os.close(write_fd)
        socket.send_fds(connection, [json.dumps({"index": index}).encode()], [read_fd])
        os.close(read_fd)
        running.add(pid)
    while running:
        running.discard(os.wait()[0])
        strays.kill_strays(running)


def _work(job: FileJob, exercise: Exercise, limits: sandbox.Limits, write_fd: int, server: int) -> None:
    status = 0
    try:
        _end_with_parent(server)
        strays.become_subreaper()  # as the grader is, for the checks this worker forks
        with open(job.path, "rb") as file:
            unchanged = hashlib.sha256(file.read()).hexdigest() == job.digest
        if not unchanged:
            report = error_report(exercise, job.path, "The file changed while the class was being graded.")
        else:  # no other file was read here: the checks forked below find none in memory
            try:
                report = check_file(exercise, job.path, limits, user=job.user, last=True)  # it ends after
            except Exception as err:  # noqa: BLE001 - one file's trouble is that file's error, not the class's
                report = error_report(exercise, job.path, f"The grader could not grade this file ({type(err).__name__}: "
                                      f"{str(err)[:300]}).")
        data = json.dumps(report.to_dict(), default=str).encode()
        while data:
            data = data[os.write(write_fd, data):]
    except BaseException:  # noqa: BLE001 - the grader reports a file without a verdict as an error
        status = 70
    finally:
        os._exit(status)


def _end_with_parent(parent: int) -> None:
    """SIGINT when the parent dies, and on SIGINT stop this process's checks and leave (not the inherited
    handler: the CLI's leaves at once, before the checks are stopped)."""
    def stop(signum, frame):
        sandbox.stop_all()
        os._exit(130)

    signal.signal(signal.SIGINT, stop)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGINT, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the line above (its children went to a subreaper)
        stop(None, None)
