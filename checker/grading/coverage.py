"""Proof for `gbcheck verify` that fresh draws reach every branch the examples reach.

A check grades on fresh draws (draws.py), so the manifest's promise that its inputs "run every branch of
the original code" must hold for the draws too. For the solution, and for the original exercise where it
runs eagerly, this records the lines of the file each call executes (line coverage, traced in a sandboxed
child): the lines of each fresh draw of a case must be exactly those of the case's example. A draw that
misses a line of its example, or reaches one its example does not, took another branch: the course fails
until its generator is constrained (a `draw` table, a `scale` or `shift`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from checker.course import draws
from checker.course.manifest import Exercise, build_call
from checker.grading import sandbox

SEEDS = tuple(range(1, 21))  # checks draw their seeds at random; these twenty stand for them, reproducibly


def draw_problems(exercise: Exercise, limits: sandbox.Limits = sandbox.Limits()) -> list[str]:
    """Why the exercise's fresh draws do not reach what its examples reach; empty when they do."""
    files = [exercise.solution_path] + ([] if exercise.fails_eagerly else [exercise.exercise_path])
    outcome = sandbox.run_job(lambda: [_problems(exercise, str(path)) for path in files], limits)
    if outcome.payload is None:
        return [f"the coverage of fresh draws could not be measured: {outcome.problem}\n{outcome.output[-500:]}"]
    return [problem for problems in outcome.payload for problem in problems]


def _problems(exercise: Exercise, path: str) -> list[str]:
    import torch

    from checker.grading.trial import import_file

    entry = getattr(import_file(path, prefix="coverage_"), exercise.entry)
    shown = os.path.relpath(path, exercise.solution_path.parent.parent)
    problems = []
    # Examples and draws run under the same stance: torch.cond and torch.while_loop compile themselves when
    # called eagerly, and their branch and body functions only report lines where that compile runs eagerly.
    with torch.compiler.set_stance("force_eager"):
        examples = [_lines(entry, path, *build_call(case, index)) for index, case in enumerate(exercise.inputs)]
        for seed in SEEDS:
            for number, draw in enumerate(draws.draws(exercise, seed)):
                lines = _lines(entry, path, draw.args, draw.kwargs)
                want = examples[draw.case]
                if lines != want:
                    missed = ", ".join(str(n) for n in sorted(want - lines)) or "none"
                    extra = ", ".join(str(n) for n in sorted(lines - want)) or "none"
                    problems.append(f"{shown}: fresh draw {number + 1} of seed {seed} (input {draw.case + 1}: "
                                    f"{exercise.inputs[draw.case].note}) misses lines {missed} and reaches "
                                    f"lines {extra} that its example does not")
                    break  # one draw per seed is enough to show a generator that strays
    return problems


def _lines(entry: Any, path: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> frozenset[int]:
    """The lines of `path` one call of `entry` executes."""
    seen: set[int] = set()

    def local(frame, event, arg):  # noqa: ANN001 - sys.settrace's signature
        if event == "line":
            seen.add(frame.f_lineno)
        return local

    def on_call(frame, event, arg):  # noqa: ANN001
        return local if frame.f_code.co_filename == path else None

    sys.settrace(on_call)
    try:
        entry(*args, **kwargs)
    finally:
        sys.settrace(None)
    return frozenset(seen)
