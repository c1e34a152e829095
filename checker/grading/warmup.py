"""Warm the grader's Dynamo before it forks many checks (a class, or verify's mutants)."""

from __future__ import annotations

import contextlib
import io

from checker.course.manifest import Exercise
from checker.grading.trial import ProcessState, registers_operators, run_trial


def warm_up(exercises: list[Exercise], references: bool) -> None:
    """Compile a file of each exercise once in this (grader) process, so that checks forked later start warm.

    Dynamo fills caches on first use (fake-tensor results per operator and shape, the function names of
    source lines, sympy facts) that each check of the exercise would otherwise fill again in its own
    child: a tenth of a class's grading time. Worth it from a few files per exercise on (a class, not
    one file). With `references`, the reference solutions (for course authors: `gbcheck verify`);
    without, the shipped exercise files, which no student need be kept from: a reference compiled here
    would be in the memory of every check forked afterwards. What the files print is dropped and the
    settings they change are put back. A file that registers an operator or a Dynamo polyfill is left out:
    the registration would outlive the warm-up and let a learner's file call an operator it never defines,
    or trace a C function through a polyfill it never wrote.
    """
    state = ProcessState.save()
    for exercise in exercises:
        path = exercise.solution_path if references else exercise.original_path
        if registers_operators(str(path)):
            continue
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            # One mode is enough: in a check, the modes after the first find what that one filled.
            # watch=False: no tamper snapshot, graph records or contracts (whose probes could run a backward
            # pass here, which no later child could then do; see strict.finish).
            run_trial(exercise, str(path), "fullgraph", watch=False)  # reports errors, raises none
        state.restore()
