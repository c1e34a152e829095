"""Every process a check leaves behind is killed when the check ends, not only its process group.

A checked file can start a process that leaves the check's group (`setsid`, a double fork) and outlives
the check, to act after the verdict (rewrite a results file, wait for the next student's check). The
grader makes itself a child subreaper (Linux 3.4+): whatever a check's processes leave orphaned is
re-parented to the grader instead of to init, so the grader can see it. When a check ends, the grader
kills every child of its own that is neither a running check nor a helper it started itself (the warm
grader, which `keep` records), and again for what those leave orphaned, until none is left. No
privilege is needed; elsewhere (macOS) nothing is done, and the process group kill is all there is.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Collection

_kept: set[int] = set()  # helpers this process started on purpose: never taken for a check's leftovers
ROUNDS = 50  # a leftover that keeps forking is re-parented again after each kill; bound the chase


def become_subreaper() -> None:
    """Orphans of this process's descendants come to it (PR_SET_CHILD_SUBREAPER), not to init."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)


def keep(pid: int) -> None:
    """A child this process started itself and means to leave running (the warm grader)."""
    _kept.add(pid)


def kill_strays(running: Collection[int]) -> list[int]:
    """Kill and reap every child of this process but the running checks and the kept helpers; returns their pids."""
    killed: list[int] = []
    for _ in range(ROUNDS):
        strays = [pid for pid in children() if pid not in running and pid not in _kept]
        if not strays:
            break
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError, PermissionError):
                pass
            killed.append(pid)
    return killed


def children() -> list[int]:
    """The pids whose parent is this process, read from /proc (empty where there is none)."""
    me, found = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # fields after the command name: state, ppid, ...
            found.append(int(entry))
    return found
