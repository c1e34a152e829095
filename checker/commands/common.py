"""What the verbs share: grading one file, and the sandbox limits and seed a command line asks for."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from checker.course.manifest import Exercise

if TYPE_CHECKING:
    from checker.grading.sandbox import Limits  # the module imports torch: imported only when a check runs


def grade(exercise: Exercise, path: Path, limits: Limits, hint_level: int, seed=None):
    from checker.grading import sandbox
    from checker.grading.strict import check_file

    sandbox.prepare()
    return check_file(exercise, path, limits, hint_level=hint_level, seed=seed)


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
    from checker.grading import sandbox

    return sandbox.Limits(timeout=args.timeout, memory_mb=args.memory) if args else sandbox.Limits()
