"""The CLI's warm grader: a grader kept up for the workspace between `gbcheck check` runs.

A cold `gbcheck check` spends most of its time importing torch and Dynamo and compiling the exercise's
reference. The first check of a session grades in its own process as always and then starts a grader in
the background (`python -m checker.service --socket ...`, in a session of its own, its log in
`.gbcheck/grader.log`); later checks send it the request and print its answer. It leaves by itself after
ten minutes without a request, when the checker, the course or torch change under it (the request's code
key differs), or when the workspace is gone.

It answers only this user: the socket is in a folder only they can open. Its verdicts are the same
checks `gbcheck check` runs itself; a learner's own progress is theirs to keep honest (classroom grading
never uses it). GBCHECK_WARM_GRADER=0 turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from checker.course.resolver import CLONE, WORKSPACE, Course
from checker.grading import strays

IDLE_SECONDS = 600


def enabled(course: Course) -> bool:
    return course.kind in (WORKSPACE, CLONE) and os.environ.get("GBCHECK_WARM_GRADER", "1") != "0"


def socket_path(course: Course) -> Path:
    """Short (a socket's path has ~100 bytes at most) and private: in a folder of this user's, mode 0700."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"gbcheck-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    if base.stat().st_uid != os.getuid() or base.stat().st_mode & 0o077:
        raise OSError(f"{base} is not a private folder of this user")
    name = hashlib.sha256(str(course.root.resolve()).encode()).hexdigest()[:16]
    return base / f"{name}.sock"


def ask(course: Course, request: dict, wait: float) -> dict | None:
    """The warm grader's answer to `request`; None when there is none to ask (then grade here)."""
    from checker.service import code_key

    try:
        path = socket_path(course)
    except OSError:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        try:
            connection.settimeout(2)
            connection.connect(str(path))
            connection.settimeout(wait)
            connection.sendall(json.dumps({**request, "key": code_key()}).encode() + b"\n")
            line = connection.makefile("rb").readline()
        except (OSError, TimeoutError):
            return None
    try:
        data = json.loads(line or b"{}")
    except ValueError:
        return None
    return None if not data or data.get("stale") or "problem" in data else data


def start(course: Course) -> None:
    """Start a warm grader for the workspace in the background; a second one for it leaves at once."""
    try:
        path = socket_path(course)
    except OSError:
        return
    if path.exists():
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.connect(str(path))
            return  # one is up (or warming)
        except OSError:
            path.unlink(missing_ok=True)  # left by a grader that was killed
    log_path = course.progress_path.parent / "grader.log"
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(log_path, "ab")
    except OSError:
        return
    with log:
        grader = subprocess.Popen([sys.executable, "-m", "checker.service", "--socket", str(path), "--workspace",
                                   str(course.root), "--idle", str(IDLE_SECONDS)], cwd=course.root,
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    strays.keep(grader.pid)  # this process's own helper, not a check's leftover
