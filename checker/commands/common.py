"""What the verbs share: grading one file, and the sandbox limits and seed a command line asks for."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from checker.course.manifest import Exercise

if TYPE_CHECKING:
    from checker.grading.limits import Limits


def grade(exercise: Exercise, path: Path, limits: Limits, hint_level: int, seed=None, warm: bool = False):
    """One check of `path`. With `warm`, asked of the workspace's warm grader where one is up (and one
    is started for the next check where none is): see warm.py."""
    from checker.commands import warm as warm_grader
    from checker.course.resolver import find_course

    course = find_course()
    warm = warm and warm_grader.enabled(course)
    if warm:
        request = {"id": exercise.id, "file": str(Path(path).absolute()), "timeout": limits.timeout,
                   "memory": limits.memory_mb, "hint_level": hint_level, "seed": str(seed) if seed else None}
        # Three modes and the audit, each within the limit, and a grader still warming up.
        answer = warm_grader.ask(course, request, wait=4 * limits.timeout + 60)
        if answer is not None:
            from checker.grading.report import Report

            return Report.from_dict(answer)
    from checker.grading import sandbox
    from checker.grading.strict import check_file

    sandbox.prepare()
    report = check_file(exercise, path, limits, hint_level=hint_level, seed=seed)
    if warm:
        warm_grader.start(course)
    return report


def grade_and_keep(exercise: Exercise, path: Path, limits: Limits, progress, seed=None, warm: bool = False):
    """Grade the learner's own exercise file: kept in the history first (nothing lost, even on a crash or
    Ctrl-C during the check), its verdict remembered after."""
    from checker.course.history import History
    from checker.course.progress import file_digest

    history = History()
    version = history.keep(exercise.id, path)
    report = grade(exercise, path, limits, progress.hints_shown(exercise.id), seed, warm)
    history.record_verdict(exercise.id, version, report.status)
    # The verdict belongs to the content read before the check, not to a save made while it ran.
    progress.remember(exercise.id, version.digest if version else file_digest(path), report.status)
    return report


def seed_from(text: str | None):
    """--seed as the checker's Seed; a malformed one is a usage error."""
    from checker.course.draws import Seed

    if text is None:
        return None
    try:
        return Seed.parse(text)
    except ValueError as err:  # bad usage: exit status 2, as for argparse's own errors
        print(f"gbcheck: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def sandbox_limits(args: argparse.Namespace | None = None) -> Limits:
    """The sandbox limits of --timeout and --memory; the defaults without arguments."""
    from checker.grading.limits import Limits

    return Limits(timeout=args.timeout, memory_mb=args.memory) if args else Limits()
