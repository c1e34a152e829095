"""The course author's and the instructor's verbs: verify, grade a class, build and run a Gradescope autograder."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from checker.commands.common import grade, sandbox_limits
from checker.course.manifest import find_exercise, load_exercises
from checker.grading.report import PASS, paint, use_colour


def cmd_verify(args: argparse.Namespace) -> int:
    from checker.grading import coverage

    exercises = load_exercises()
    if args.ids:
        exercises = [find_exercise(exercise_id, exercises) for exercise_id in args.ids]
    colour = use_colour()
    broken = 0
    started = time.monotonic()
    survivors = {} if args.no_mutants else _surviving_mutants([ex for ex in exercises if not ex.skip], args)
    for ex in exercises:
        if ex.skip:  # declared in the manifest: holds
            print(f" {paint('-', 'skip', colour)} {ex.id:28} skip: {ex.skip}")
            continue
        unfixed = grade(ex, ex.original_path, sandbox_limits(args), 0)
        fixed = grade(ex, ex.solution_path, sandbox_limits(args), 0)
        shown = sorted({gb["gb_id"] or gb["gb_type"] for gb in unfixed.graph_breaks})
        problems = coverage.draw_problems(ex, sandbox_limits(args))  # fresh draws reach every branch
        if ex.expected_break and ex.expected_break not in shown:
            problems.append(f"exercise shows {', '.join(shown) or 'no graph break'}, not {ex.expected_break}")
        recompiles = next((c for c in unfixed.checks if c.name == "no-recompilation"), None)
        if ex.max_compilations and (recompiles is None or recompiles.status == PASS):
            problems.append(f"exercise compiles at most {ex.max_compilations} times: no recompilation to fix")
        if unfixed.status == PASS:
            problems.append("exercise already passes")
        if fixed.status != PASS:
            problems.append(f"solution does not pass: {fixed.message}")
        problems += survivors.get(ex.id, [])
        broken += bool(problems)
        mark = paint("✗", "fail", colour) if problems else paint("✓", "pass", colour)
        shows = ", ".join(shown) or ("recompiles" if ex.max_compilations else "")
        print(f" {mark} {ex.id:28} exercise: {unfixed.status:5} {shows:16} solution: {fixed.status}")
        for problem in problems:
            print(f"     {problem}")
    seconds = time.monotonic() - started
    mutants = "" if args.no_mutants else ", mutants of every solution included"
    print(f"\n{len(exercises) - broken}/{len(exercises)} exercises hold the invariant, fresh draws of "
          f"{len(coverage.SEEDS)} seeds{mutants} ({seconds:.1f} s)")
    return 1 if broken else 0


def _surviving_mutants(exercises: list, args: argparse.Namespace) -> dict[str, list[str]]:
    """Per exercise: every mutant of its solution that passes without an `equivalent` declaration. A
    declaration no passing mutant needs is printed as a note: the statement is graded after all."""
    from checker.grading import mutation, sandbox

    sandbox.prepare()
    work = [(ex, mutation.mutants(ex.solution_path.read_text(encoding="utf-8"))) for ex in exercises]
    total = sum(len(found) for _, found in work)
    print(f"grading {total} mutants of {len(work)} solutions ({max(1, args.jobs)} at a time)...", flush=True)
    reports = mutation.grade_mutants(work, sandbox_limits(args), max(1, args.jobs))
    problems: dict[str, list[str]] = {}
    for ex, found in work:
        declared = dict(ex.equivalent)
        passing = {m.key for m in found if reports[(ex.id, m)].status == PASS}
        for mutant in sorted((m for m in found if m.key in passing - set(declared)), key=lambda m: m.line):
            problems.setdefault(ex.id, []).append(
                f"mutant passes (line {mutant.line}, {mutant.key}): a check is missing, or declare it equivalent")
        for key in sorted(set(declared) - passing):
            print(f"note: {ex.id}: declared equivalent, but no passing mutant is ({key})")
    return problems


def cmd_grade(args: argparse.Namespace) -> int:
    from checker.classroom import grade
    from checker.classroom.pristine import GradingStopped
    from checker.classroom.users import StudentUsersUnavailable
    from checker.grading import sandbox

    sandbox.prepare()
    if not args.submissions.is_dir():
        print(f"gbcheck: {args.submissions} is not a folder of student submissions", file=sys.stderr)
        return 2
    limits = sandbox_limits(args)
    started = time.monotonic()

    interactive = sys.stderr.isatty()
    tenths_shown = -1

    def progress(counts: dict[str, int], done: int, total: int) -> None:
        nonlocal tenths_shown
        bar = "#" * round(24 * done / max(total, 1))
        line = (f"grading [{bar:24}] {done}/{total} submissions  pass {counts['pass']}  fail {counts['fail']}"
                f"  error {counts['error']}  {time.monotonic() - started:.0f} s")
        if interactive:
            print("\r" + line, end="", file=sys.stderr, flush=True)
        elif done * 10 // max(total, 1) > tenths_shown:  # a log file gets a line per tenth, not one per check
            tenths_shown = done * 10 // max(total, 1)
            print(line, file=sys.stderr, flush=True)

    try:
        result = grade.grade_class(args.submissions, args.out, parallel=max(1, args.jobs), limits=limits,
                                   progress=progress, same_user=args.same_user)
    except StudentUsersUnavailable as refused:
        print(f"gbcheck: {refused}", file=sys.stderr)
        return 2
    except GradingStopped as stopped:
        print(f"\ngbcheck: {stopped}", file=sys.stderr)
        return 1
    if interactive:
        print(file=sys.stderr)
    print(grade.summary_table(result))
    kept = f", {result.skipped} kept from an earlier run" if result.skipped else ""
    print(f"\n{len(result.students)} students graded in {result.seconds:.1f} s{kept}. "
          f"Grades: {args.out / 'grades.csv'}")
    return 0


def cmd_gradescope(target: Path) -> int:
    from checker.classroom.gradescope import build_autograder_zip

    names = build_autograder_zip(target)
    print(f"Wrote {target} ({len(names)} files). Upload it as the autograder of a Gradescope programming "
          "assignment; students submit their exercise files.")
    return 0


def cmd_gradescope_run(args: argparse.Namespace) -> int:
    from checker.classroom.gradescope import grade_one_submission
    from checker.classroom.users import StudentUsersUnavailable
    from checker.grading import sandbox

    sandbox.prepare()
    try:
        data = grade_one_submission(args.submission, args.results, sandbox_limits(args), same_user=args.same_user)
    except StudentUsersUnavailable as refused:  # no results.json: Gradescope shows the autograder's failure
        print(f"gbcheck: {refused}", file=sys.stderr)
        return 2
    print(f"score {data['score']}: {data['output']}")
    return 0
