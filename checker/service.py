"""A grader that stays up between checks: `python -m checker.service`.

It reads one JSON request per line on stdin, {"id": exercise id, "file": path, "timeout": s, "memory": MB,
"hint_level": n, "seed": "TRIAL-REPLAY"} (all but the first two optional), and answers each with one line
on stdout: the report (`Report.to_dict()`), or {"problem": "..."} when the request itself cannot be
graded (an unknown id, say). It grades exactly as `gbcheck check` does, forking one sandboxed child per
check, so learner code never runs in this process.

With `--socket PATH` it answers on a Unix socket instead, one request per connection, for the CLI's warm
grader (commands/warm.py), and leaves when no request came for `--idle` seconds, when a request carries
another code fingerprint than its own (the course or torch changed under it), or when its workspace is
gone. A client that hangs up during a check has the check stopped.

The notebook's `check(...)` starts one per kernel. A notebook kernel must not fork graders itself (its
torch thread pool is up, and a child forked after a parallel op hangs) and its own edits to torch must
not reach the grader, so the grader is a process of its own; staying up means torch, Dynamo and the
exercise's reference are warm after the first check, and a re-check takes about a second.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path


def answer(line: str) -> dict:
    """The answer to one request line: a report as a dict, or {"problem": ...}."""
    from checker.course.draws import Seed
    from checker.course.manifest import ManifestError, find_exercise
    from checker.course.resolver import CourseError
    from checker.grading import sandbox
    from checker.grading.strict import check_file

    try:
        request = json.loads(line)
        exercise = find_exercise(str(request["id"]))
        limits = sandbox.Limits(timeout=float(request.get("timeout", 60.0)),
                                memory_mb=int(request.get("memory", 4096)))
        seed = Seed.parse(request["seed"]) if request.get("seed") else None
        # pristine: this grader stays up and forks later checks, so no reference stays in its memory.
        return check_file(exercise, request["file"], limits, hint_level=int(request.get("hint_level", 0)),
                          seed=seed, pristine=True).to_dict()
    except (ValueError, KeyError, TypeError, ManifestError, CourseError) as err:
        return {"problem": f"{type(err).__name__}: {err}"}


def serve(requests, answers) -> None:
    """Answer every request line of `requests` on `answers` until end of input."""
    from checker.grading import sandbox

    sandbox.prepare()
    for line in requests:
        if not line.strip():
            continue
        answers.write(json.dumps(answer(line)) + "\n")
        answers.flush()


def code_key() -> str:
    """What a warm grader's answers depend on: this Python, the checker's code and course files (path,
    size, time), and the torch installation. A grader whose key differs from its client's is stale."""
    from importlib import metadata

    root = Path(__file__).resolve().parent
    digest = hashlib.sha256(sys.executable.encode())
    for path in sorted(root.rglob("*")):
        if path.suffix in {".py", ".toml"} and "__pycache__" not in path.parts:
            stat = path.stat()
            digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    try:
        torch = metadata.distribution("torch")
        digest.update(f"{torch.version}|{torch._path}".encode())  # type: ignore[attr-defined]
    except (metadata.PackageNotFoundError, AttributeError):
        pass
    return digest.hexdigest()[:32]


def serve_socket(path: str, workspace: str, idle: float) -> None:
    """Answer one request per connection on the Unix socket at `path` (see the module's docstring)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)  # the address is the lock: a second grader for the workspace stops here
    except OSError:
        return
    try:
        os.chmod(path, 0o600)
        listener.listen(8)
        from checker.dynamo import engine
        from checker.grading import sandbox

        sandbox.prepare()
        engine.warm_up()
        key = code_key()
        listener.settimeout(min(idle, 5.0))  # wakes to see whether its workspace is still there
        last = time.monotonic()
        while Path(workspace).is_dir() and time.monotonic() - last < idle:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                if not _answer_connection(connection, key, sandbox):
                    break
            last = time.monotonic()
    finally:
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass


def _answer_connection(connection: socket.socket, key: str, sandbox) -> bool:
    """Grade the connection's one request; False when this grader is stale and must leave."""
    connection.settimeout(10)
    stream = connection.makefile("rwb")
    try:
        line = stream.readline().decode("utf-8", errors="replace")
        if json.loads(line or "{}").get("key") != key:
            stream.write(b'{"stale": true}\n')
            return False
        connection.settimeout(None)
        # A client that hangs up (Ctrl-C) has its check stopped: nothing it started goes on running.
        answered = threading.Event()
        threading.Thread(target=_stop_on_hang_up, args=(connection, sandbox, answered), daemon=True).start()
        report = answer(line)
        answered.set()
        stream.write(json.dumps(report).encode() + b"\n")
        stream.flush()
    except (OSError, ValueError):
        pass
    finally:
        stream.close()
    return True


def _stop_on_hang_up(connection: socket.socket, sandbox, answered: threading.Event) -> None:
    try:
        while connection.recv(1024):
            pass
    except OSError:
        return
    if not answered.is_set():  # hung up mid-check; after the answer, a hang-up is the normal end
        sandbox.stop_all()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m checker.service", description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", help="answer on this Unix socket instead of stdin and stdout")
    parser.add_argument("--workspace", default=os.getcwd(), help="leave when this folder is gone")
    parser.add_argument("--idle", type=float, default=600.0, help="leave after this many seconds without a request")
    options = parser.parse_args()
    if options.socket:
        serve_socket(options.socket, options.workspace, options.idle)
        return
    # Answers go out on a private copy of stdout; whatever else writes to fd 1 (torch, a warning) lands on
    # stderr, so it can never be mistaken for an answer.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin, answers)


if __name__ == "__main__":
    main()
