"""The learner's verbs: init, list, check, hint, the overview, watch, reset, and diagnose for their own code.

Each returns the command's exit status; printing is theirs, parsing is cli's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from checker.commands.common import grade, grade_and_keep, sandbox_limits, seed_from
from checker.course.manifest import Exercise, find_exercise, load_exercises
from checker.course.progress import Progress, file_digest
from checker.course.resolver import Course, find_course
from checker.grading.report import PASS, SKIP, paint, render_text, use_colour


def cmd_init(folder: Path) -> int:
    from checker.course.workspace import create_workspace

    exercises = create_workspace(folder)
    print(f"Made a workspace with {len(exercises)} exercises in {folder}.\n"
          f"Next: cd {folder} and run gbcheck (your progress, and the first exercise to fix).")
    return 0


def cmd_list(as_json: bool) -> int:
    exercises = load_exercises()
    if as_json:
        course = find_course()
        print(json.dumps([exercise_record(ex, course) for ex in exercises], indent=2))
        return 0
    for ex in exercises:
        print(f"{ex.id:28} {_chapter_column(ex, exercises)} {ex.title}" + (f"  (skipped: {ex.skip})" if ex.skip else ""))
    return 0


def _chapter_column(ex: Exercise, exercises: list[Exercise]) -> str:
    """The title of the exercise's chapter, padded to the longest among `exercises`."""
    return ex.chapter_title.ljust(max(len(other.chapter_title) for other in exercises))


def exercise_record(ex: Exercise, course: Course) -> dict:
    """The `list --json` object for one exercise (paths relative to the workspace or clone, else absolute)."""
    return {
        "id": ex.id, "title": ex.title, "category": ex.category, "chapter": ex.chapter,
        "chapter_title": ex.chapter_title,
        "exercise": course.shown(ex.exercise_path),
        "solution": course.shown(ex.solution_path),
        "entry": ex.entry, "points": ex.points, "expected_break": ex.expected_break,
        "allowed_config": list(ex.allowed_config), "task": ex.task,
        "skip": ex.skip or None,  # why the exercise cannot be done on the installed torch
    }


def cmd_check(args: argparse.Namespace) -> int:
    if args.file is not None and not args.file.is_file():  # bad usage (exit 2), said before torch is imported
        print(f"gbcheck check: there is no file at {args.file}", file=sys.stderr)
        return 2
    exercise = find_exercise(args.id)
    if args.file is None:
        find_course().require_editable(f"check {exercise.id}")
    path = args.file or exercise.exercise_path
    progress = Progress()
    if args.file is None:
        report = grade_and_keep(exercise, path, sandbox_limits(args), progress, seed_from(args.seed), warm=True)
    else:  # a file of the learner's own choosing: neither their progress nor the exercise's history
        report = grade(exercise, path, sandbox_limits(args), progress.hints_shown(exercise.id), seed_from(args.seed),
                       warm=True)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(render_text(report, colour=use_colour(), book_url=find_course().book_url))
    return 0 if report.status == PASS else 1


def cmd_hint(exercise_id: str) -> int:
    exercise = find_exercise(exercise_id)
    progress = Progress()
    shown = min(progress.hints_shown(exercise.id), len(exercise.hints) - 1)
    colour = use_colour()
    for number, hint in enumerate(exercise.hints[: shown + 1], start=1):
        print(paint(f"Hint {number}/{len(exercise.hints)}: ", "title", colour) + hint + "\n")
    if shown + 1 < len(exercise.hints):
        progress.show_hint(exercise.id)
        print(paint("Run `gbcheck hint` again for a more specific one.", "dim", colour))
    print(paint(f"Chapter: {find_course().chapter_link(exercise.chapter)}", "dim", colour))
    return 0


def cmd_overview() -> int:
    course = find_course()
    course.require_editable("")
    exercises = load_exercises(course)
    progress = Progress()
    colour = use_colour()
    statuses = {}
    # A file as shipped is not done (`gbcheck verify` proves each shipped file fails): no check needed, so
    # the overview of an untouched workspace is instant.
    from checker.course.workspace import shipped_unchanged

    untouched = shipped_unchanged(exercises, course)
    stale = [ex for ex in exercises if progress.remembered_status(ex.id, file_digest(ex.exercise_path)) is None
             and ex.id not in untouched]
    for number, ex in enumerate(stale, start=1):
        print(f"\rchecking {number}/{len(stale)}: {ex.id:40}", end="", file=sys.stderr, flush=True)
        grade_and_keep(ex, ex.exercise_path, sandbox_limits(), progress)
    if stale:
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    for ex in exercises:
        statuses[ex.id] = progress.remembered_status(ex.id, file_digest(ex.exercise_path))
    done = sum(status == PASS for status in statuses.values())
    points = sum(ex.points for ex in exercises if statuses[ex.id] == PASS)
    print(paint("torch.compile graph breaks: exercises", "bold", colour))
    for ex in exercises:
        status = statuses[ex.id]
        mark = paint("✓", "pass", colour) if status == PASS else paint("-" if ex.skip else "·", "dim", colour)
        skipped = paint(f"  (skipped: {ex.skip})", "dim", colour) if ex.skip else ""
        print(f" {mark} {ex.id:28} {paint(_chapter_column(ex, exercises), 'dim', colour)} {ex.title}{skipped}")
    exercises = [ex for ex in exercises if not ex.skip]  # progress counts the exercises this torch can do
    bar = "#" * round(30 * done / max(len(exercises), 1))
    print(f"\n[{bar:30}] {done}/{len(exercises)} done, {points}/{sum(e.points for e in exercises)} points")
    upcoming = next((ex for ex in exercises if statuses[ex.id] != PASS), None)
    if upcoming:
        print(f"\nNext: {paint(upcoming.id, 'bold', colour)} — {upcoming.title}")
        print(f"  edit {course.shown(upcoming.exercise_path)}, then run: gbcheck check {upcoming.id}")
    else:
        print(paint("\nEvery exercise passes. Well done!", "pass", colour))
        return 0
    from checker.commands import warm

    if warm.enabled(course):  # the check that usually follows finds a grader warm (commands/warm.py)
        warm.start(course)
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    if args.file is None:
        find_course().require_editable("watch")
    exercises = load_exercises()
    progress = Progress()
    if args.id:
        current = find_exercise(args.id, exercises)
    else:
        current = next((ex for ex in exercises
                        if progress.remembered_status(ex.id, file_digest(ex.exercise_path)) != PASS), exercises[0])
    colour = use_colour()
    path = args.file or current.exercise_path
    seen = None
    print(f"Watching {_shown(path)} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            digest = file_digest(path)
            if digest != seen:
                seen = digest
                if args.file is None:
                    report = grade_and_keep(current, path, sandbox_limits(args), progress)
                else:
                    report = grade(current, path, sandbox_limits(args), progress.hints_shown(current.id))
                print("\033[2J\033[H" if colour else "\n" + "-" * 100 + "\n", end="")
                print(render_text(report, colour=colour, book_url=find_course().book_url), flush=True)
                if report.status in (PASS, SKIP):
                    index = exercises.index(current)
                    if args.file is not None or index + 1 == len(exercises):
                        print("\nDone." if args.file else "\nThat was the last exercise.", flush=True)
                        return 0
                    upcoming = exercises[index + 1]
                    # The verdict stays on screen until the learner moves on (end of input moves on at once).
                    print(paint(f"\nPress Enter for the next exercise, {upcoming.id} (Ctrl-C to stop).", "bold",
                                colour), flush=True)
                    sys.stdin.readline()
                    current, seen = upcoming, None
                    path = current.exercise_path
                    print(f"Next: {current.id}. Watching {_shown(path)}", flush=True)
                else:
                    print(paint("\nwaiting for you to save the file…", "dim", colour), flush=True)
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _shown(path: Path) -> str:
    return find_course().shown(path)


def cmd_reset(exercise_id: str) -> int:
    from checker.course.history import History
    from checker.course.workspace import reset_exercise

    exercise = find_exercise(exercise_id)
    find_course().require_editable("reset")
    kept = History().keep(exercise.id, exercise.exercise_path)  # the work being replaced stays restorable
    print(reset_exercise(exercise))
    if kept:
        print(f"Your version before the reset is kept: gbcheck history {exercise.id} --restore {kept.number}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from checker.course.history import History

    exercise = find_exercise(args.id)
    course = find_course()
    course.require_editable("history")
    history = History(course)
    if args.show is not None:
        sys.stdout.write(history.version(exercise.id, args.show).path.read_text(encoding="utf-8", errors="replace"))
        return 0
    if args.restore is not None:
        version = history.restore(exercise.id, args.restore, exercise.exercise_path)
        print(f"Restored version {version.number} ({version.saved}) of {course.shown(exercise.exercise_path)}; "
              f"what was there is kept too (gbcheck history {exercise.id}).")
        return 0
    versions = history.versions(exercise.id)
    if not versions:
        print(f"No version of {exercise.id} has been checked yet: each `gbcheck check {exercise.id}` keeps one.")
        return 0
    colour = use_colour()
    print(paint(f"Checked versions of {course.shown(exercise.exercise_path)}", "bold", colour))
    for version in versions:
        verdict = version.status or "not finished"
        print(f"  {version.number:>3}  {version.saved.replace('T', ' ')[:19]}  {verdict:12} {version.lines} lines")
    print(paint(f"\nSee one: gbcheck history {exercise.id} --show N    put one back: "
                f"gbcheck history {exercise.id} --restore N", "dim", colour))
    return 0


def cmd_diagnose(args: argparse.Namespace) -> int:
    from checker.diagnose import render, run

    if args.compare:
        return _diagnose_compare(args)
    if not args.target:
        print("gbcheck diagnose: give a target (a script or path.py:name), or --compare BEFORE AFTER", file=sys.stderr)
        return 2
    result = run.diagnose_target(args.target, args.script_args, init=args.init, args=args.args,
                                 keep_backend=args.keep_backend, limits=sandbox_limits(args))
    if args.repro:
        run.write_repros(result, str(args.repro))
    if args.html:
        args.html.write_text(render.render_html(result), encoding="utf-8")
    print(json.dumps(result.to_dict(), indent=2) if args.json else render.render_text(result, args.verbose))
    if args.html and not args.json:
        print(f"\nReport written to {args.html}")
    return 1 if result.error and not result.groups else 0


def _diagnose_compare(args: argparse.Namespace) -> int:
    from checker.diagnose import compare, run

    try:
        runs = [run.run_or_load(side, args.script_args, init=args.init, args=args.args,
                                keep_backend=args.keep_backend, limits=sandbox_limits(args)) for side in args.compare]
    except ValueError as err:
        print(f"gbcheck diagnose: {err}", file=sys.stderr)
        return 2
    comparison = compare.compare(*runs)
    print(json.dumps(comparison.to_dict(), indent=2) if args.json else compare.render_comparison(comparison))
    return 1 if any(comparison.errors) and not (comparison.removed or comparison.remaining or comparison.new) else 0
