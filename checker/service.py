"""A grader that stays up between checks: `python -m checker.service`.

It reads one JSON request per line on stdin, {"id": exercise id, "file": path, "timeout": s, "memory": MB},
and answers each with one line on stdout: the report (`Report.to_dict()`), or {"problem": "..."} when the
request itself cannot be graded (an unknown id, say). It grades exactly as `gbcheck check` does, forking
one sandboxed child per check, so learner code never runs in this process.

The notebook's `check(...)` starts one per kernel. A notebook kernel must not fork graders itself (its
torch thread pool is up, and a child forked after a parallel op hangs) and its own edits to torch must
not reach the grader, so the grader is a process of its own; staying up means torch, Dynamo and the
exercise's reference are warm after the first check, and a re-check takes about a second.
"""

from __future__ import annotations

import json
import os
import sys


def serve(requests, answers) -> None:
    """Answer every request line of `requests` on `answers` until end of input."""
    from checker.course.manifest import ManifestError, find_exercise
    from checker.course.resolver import CourseError
    from checker.grading import sandbox
    from checker.grading.strict import check_file

    sandbox.prepare()
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            exercise = find_exercise(str(request["id"]))
            limits = sandbox.Limits(timeout=float(request.get("timeout", 60.0)),
                                    memory_mb=int(request.get("memory", 4096)))
            answer = check_file(exercise, request["file"], limits).to_dict()
        except (ValueError, KeyError, TypeError, ManifestError, CourseError) as err:
            answer = {"problem": f"{type(err).__name__}: {err}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def main() -> None:
    # Answers go out on a private copy of stdout; whatever else writes to fd 1 (torch, a warning) lands on
    # stderr, so it can never be mistaken for an answer.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin, answers)


if __name__ == "__main__":
    main()
