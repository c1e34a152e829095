"""`gbcheck`: the learner's command line. It parses, calls the checker, and prints; nothing else.

    gbcheck                        every exercise, your progress, and the next one to do
    gbcheck list [--json]          the exercises (JSON: id, title, category, chapter, exercise, solution, entry)
    gbcheck check ID [--file PATH] [--json]
                                   grade one exercise; exit status 0 only when it passes
    gbcheck hint ID                the next hint for an exercise (they get more specific)
    gbcheck watch [ID]             re-check every time you save; moves on when an exercise passes
    gbcheck init [DIR]             make a workspace of exercise files to edit (default ./graph-breaks)
    gbcheck reset ID               put an exercise file back as it was shipped
    gbcheck verify                 for course authors: every exercise fails as declared, every solution passes
    gbcheck grade SUBMISSIONS --out OUT [-j N]
                                   for instructors: grade a class (CSV, Gradescope JSON, feedback per student)
    gbcheck gradescope OUT.zip     for instructors: build a Gradescope autograder zip
    gbcheck diagnose TARGET        every graph break in your own script or function, grouped, with fixes
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from checker.course import Course, CourseError, find_course
from checker.manifest import Exercise, ManifestError, find_exercise, load_exercises
from checker.progress import Progress, file_digest
from checker.report import PASS, SKIP, paint, render_text, use_colour
from checker.torch_support import check_supported

if TYPE_CHECKING:
    from checker.sandbox import Limits  # the module imports torch: cli imports it only when a check runs

EPILOG = """\
examples:
  gbcheck init && cd graph-breaks  start: a folder with every exercise file to edit
  gbcheck                          where am I? (checks changed exercise files, shows what is next)
  gbcheck check cond-on-input      grade exercises/03_cond_on_input.py
  gbcheck check cond-on-input --file my_try.py --json
  gbcheck watch                    edit the file in your editor; every save is graded

A submission passes when it runs eagerly with the reference's results, compiles with fullgraph=True,
shows zero graph breaks in default mode, gives the same results compiled, and switches nothing off.
Your code runs in a separate process with a time limit and a memory cap.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gbcheck", description="Find and fix torch.compile graph breaks: exercises and a strict checker.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    init = verbs.add_parser("init", help="make a workspace: the exercise files to edit, and your progress",
                            description="Copy every exercise into a new folder, your workspace. Run gbcheck "
                            "inside it (or in a folder below it) and every verb uses it.")
    init.add_argument("folder", nargs="?", type=Path, default=Path("graph-breaks"), metavar="DIR",
                      help="a new or empty folder (default: ./graph-breaks)")

    listing = verbs.add_parser("list", help="list the exercises")
    listing.add_argument("--json", action="store_true", help="print a JSON array (a stable contract)")

    check = verbs.add_parser("check", help="grade one exercise", description="Grade one exercise. Exit status "
                             "0 when it passes, 1 when it fails or errors, 2 on bad usage.")
    check.add_argument("id", help="exercise id (see `gbcheck list`) or its file name")
    check.add_argument("--file", type=Path, help="grade this file instead of exercises/<its file>")
    check.add_argument("--json", action="store_true", help="print one JSON object (a stable contract)")
    check.add_argument("--seed", help="draw the inputs of an earlier check again (its report's seed)")
    _add_limits(check)

    hint = verbs.add_parser("hint", help="show the next hint for an exercise")
    hint.add_argument("id")

    watch = verbs.add_parser("watch", help="re-check on every save")
    watch.add_argument("id", nargs="?", help="exercise to start with (default: the first not yet passed)")
    watch.add_argument("--file", type=Path, help="watch this file instead (stops when it passes)")
    watch.add_argument("--interval", type=float, default=0.5, help="seconds between looks at the file")
    _add_limits(watch)

    reset = verbs.add_parser("reset", help="start an exercise again: restore its file as shipped")
    reset.add_argument("id")

    verify = verbs.add_parser("verify", help="check the course itself: exercises fail as declared, solutions pass",
                              description="For course authors: grade every unmodified exercise (it must show its "
                              "declared graph break) and every solution (it must pass). Exit 1 if any does not.")
    verify.add_argument("ids", nargs="*", help="only these exercises (default: all)")
    _add_limits(verify)

    grade = verbs.add_parser(
        "grade", help="grade a class of submissions", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Grade every student in SUBMISSIONS: one folder (or .zip) per student holding their copies "
        "of exercise files, named as in exercises/ (any subset).",
        epilog="writes:\n  OUT/grades.csv              one row per student: points per exercise, total\n"
        "  OUT/<student>/results.json  Gradescope's results format\n"
        "  OUT/<student>/feedback.md   the explanations gbcheck check gives\n\n"
        "Students are written as they finish. Run the same command again after an interruption: "
        "finished students whose files are unchanged are kept, the rest are graded.")
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS")
    grade.add_argument("--out", type=Path, required=True, metavar="OUT", help="folder for the results")
    grade.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                       help="checks run at once (default: the number of CPUs)")
    _add_limits(grade)

    diagnose = verbs.add_parser(
        "diagnose", help="find every graph break in your own code", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run your own code under torch.compile and list every graph break, grouped by id, most "
        "frequent first, with what it means, the fixes that apply and the chapter to read. Breaks inside an "
        "installed library are grouped by package, one line each: which call of yours led there, who can fix it, "
        "what you can do meanwhile and how to reproduce it for an upstream report.",
        epilog="examples:\n"
        "  gbcheck diagnose train.py -- --epochs 1     run a script; every torch.compile in it is recorded\n"
        "  gbcheck diagnose model.py:Block --init 64 --args \"torch.randn(8, 64, 32, 32)\"\n"
        "                                             compile and call a function or an nn.Module class\n"
        "  gbcheck diagnose train.py --html report.html  also write a page to share\n"
        "  gbcheck diagnose train.py --repro repro/     write a script per library break, for an upstream report\n"
        "  gbcheck diagnose --compare before.py after.py  which breaks a change removed, kept or added\n"
        "                                             (either side may be the JSON of an earlier run)")
    diagnose.add_argument("target", nargs="?", help="a script (path.py), or path.py:name / module:name; "
                          "arguments for a script follow `--`")
    diagnose.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                          help="diagnose two targets (or read two runs' --json output) and compare them")
    diagnose.add_argument("--verbose", action="store_true",
                          help="every detail of breaks inside libraries (default: one line per library group)")
    diagnose.add_argument("--repro", type=Path, metavar="DIR",
                          help="write a minimal repro script for each library break into DIR")
    diagnose.add_argument("--args", default="", metavar="EXPR",
                          help="call arguments for a callable target, a Python expression (torch is imported)")
    diagnose.add_argument("--init", default="", metavar="EXPR", help="constructor arguments when the target is a class")
    diagnose.add_argument("--keep-backend", action="store_true",
                          help="compile with the script's own backend (default: Dynamo only, much faster)")
    diagnose.add_argument("--json", action="store_true", help="print one JSON object")
    diagnose.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML report")
    diagnose.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS", help="limit for the run (default: 600)")
    diagnose.add_argument("--memory", type=int, default=8192, metavar="MB", help="memory cap (default: 8192)")

    gradescope = verbs.add_parser("gradescope", help="build a Gradescope autograder zip")
    gradescope.add_argument("zip", type=Path, metavar="OUT.zip")

    run = verbs.add_parser("gradescope-run", help=argparse.SUPPRESS)  # what the autograder zip calls
    run.add_argument("submission", type=Path)
    run.add_argument("--results", type=Path, required=True)
    _add_limits(run)
    return parser


def _add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="wall-clock limit for each mode of a check: eager, fullgraph, default (default: 60)")
    parser.add_argument("--memory", type=int, default=4096, metavar="MB",
                        help="memory a check process may add (default: 4096)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Everything after `--` belongs to the diagnosed script (argparse mishandles `--` under subcommands).
    script_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = build_parser().parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.script_args = script_args
    if refusal := check_supported():  # an unsupported torch: one sentence, before anything imports it
        print(refusal, file=sys.stderr)
        return 2
    try:
        if args.verb == "init":
            return cmd_init(args.folder)
        if args.verb == "list":
            return cmd_list(args.json)
        if args.verb == "check":
            return cmd_check(args)
        if args.verb == "hint":
            return cmd_hint(args.id)
        if args.verb == "watch":
            return cmd_watch(args)
        if args.verb == "reset":
            return cmd_reset(args.id)
        if args.verb == "verify":
            return cmd_verify(args)
        if args.verb == "grade":
            return cmd_grade(args)
        if args.verb == "diagnose":
            return cmd_diagnose(args)
        if args.verb == "gradescope":
            return cmd_gradescope(args.zip)
        if args.verb == "gradescope-run":
            return cmd_gradescope_run(args)
        return cmd_overview()
    except (ManifestError, CourseError) as err:
        print(f"gbcheck: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ngbcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


# --- verbs -----------------------------------------------------------------------------------------

def cmd_init(folder: Path) -> int:
    from checker.workspace import create_workspace

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
        print(f"{ex.id:28} {ex.category:18} {ex.title}" + (f"  (skipped: {ex.skip})" if ex.skip else ""))
    return 0


def exercise_record(ex: Exercise, course: Course) -> dict:
    """The `list --json` object for one exercise (paths relative to the workspace or clone, else absolute)."""
    return {
        "id": ex.id, "title": ex.title, "category": ex.category, "chapter": ex.chapter,
        "exercise": course.shown(ex.exercise_path),
        "solution": course.shown(ex.solution_path),
        "entry": ex.entry, "points": ex.points, "expected_break": ex.expected_break,
        "allowed_config": list(ex.allowed_config), "task": ex.task,
        "skip": ex.skip or None,  # why the exercise cannot be done on the installed torch
    }


def cmd_check(args: argparse.Namespace) -> int:
    exercise = find_exercise(args.id)
    if args.file is None:
        find_course().require_editable(f"check {exercise.id}")
    path = args.file or exercise.exercise_path
    progress = Progress()
    report = _grade(exercise, path, _limits(args), progress.hints_shown(exercise.id), _seed(args.seed))
    if args.file is None:
        progress.remember(exercise.id, file_digest(path), report.status)
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
    stale = [ex for ex in exercises if progress.remembered_status(ex.id, file_digest(ex.exercise_path)) is None]
    for number, ex in enumerate(stale, start=1):
        print(f"\rchecking {number}/{len(stale)}: {ex.id:40}", end="", file=sys.stderr, flush=True)
        report = _grade(ex, ex.exercise_path, _limits(), 0)
        progress.remember(ex.id, file_digest(ex.exercise_path), report.status)
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
        print(f" {mark} {ex.id:28} {paint(f'{ex.category:18}', 'dim', colour)} {ex.title}{skipped}")
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
                report = _grade(current, path, _limits(args), progress.hints_shown(current.id))
                if args.file is None:
                    progress.remember(current.id, digest, report.status)
                print("\033[2J\033[H" if colour else "\n" + "-" * 100 + "\n", end="")
                print(render_text(report, colour=colour, book_url=find_course().book_url), flush=True)
                if report.status in (PASS, SKIP):
                    index = exercises.index(current)
                    if args.file is not None or index + 1 == len(exercises):
                        print("\nDone." if args.file else "\nThat was the last exercise.", flush=True)
                        return 0
                    current, seen = exercises[index + 1], None
                    path = current.exercise_path
                    print(f"\nNext: {current.id}. Watching {_shown(path)}", flush=True)
                else:
                    print(paint("\nwaiting for you to save the file…", "dim", colour), flush=True)
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _shown(path: Path) -> str:
    return find_course().shown(path)


def cmd_reset(exercise_id: str) -> int:
    from checker.workspace import reset_exercise

    print(reset_exercise(find_exercise(exercise_id)))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from checker import coverage

    exercises = load_exercises()
    if args.ids:
        exercises = [find_exercise(exercise_id, exercises) for exercise_id in args.ids]
    colour = use_colour()
    broken = 0
    started = time.monotonic()
    for ex in exercises:
        if ex.skip:  # declared in the manifest: holds
            print(f" {paint('-', 'skip', colour)} {ex.id:28} skip: {ex.skip}")
            continue
        unfixed = _grade(ex, ex.original_path, _limits(args), 0)
        fixed = _grade(ex, ex.solution_path, _limits(args), 0)
        shown = sorted({gb["gb_id"] or gb["gb_type"] for gb in unfixed.graph_breaks})
        problems = coverage.draw_problems(ex, _limits(args))  # fresh draws reach every branch
        if ex.expected_break not in shown:
            problems.append(f"exercise shows {', '.join(shown) or 'no graph break'}, not {ex.expected_break}")
        if unfixed.status == PASS:
            problems.append("exercise already passes")
        if fixed.status != PASS:
            problems.append(f"solution does not pass: {fixed.message}")
        broken += bool(problems)
        mark = paint("✗", "fail", colour) if problems else paint("✓", "pass", colour)
        print(f" {mark} {ex.id:28} exercise: {unfixed.status:5} {', '.join(shown):16} solution: {fixed.status}")
        for problem in problems:
            print(f"     {problem}")
    seconds = time.monotonic() - started
    print(f"\n{len(exercises) - broken}/{len(exercises)} exercises hold the invariant, fresh draws of "
          f"{len(coverage.SEEDS)} seeds included ({seconds:.1f} s)")
    return 1 if broken else 0


def cmd_grade(args: argparse.Namespace) -> int:
    from checker import classroom, sandbox

    sandbox.prepare()
    if not args.submissions.is_dir():
        print(f"gbcheck: {args.submissions} is not a folder of student submissions", file=sys.stderr)
        return 2
    limits = _limits(args)
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

    result = classroom.grade_class(args.submissions, args.out, parallel=max(1, args.jobs), limits=limits,
                                   progress=progress)
    if interactive:
        print(file=sys.stderr)
    print(classroom.summary_table(result))
    kept = f", {result.skipped} kept from an earlier run" if result.skipped else ""
    print(f"\n{len(result.students)} students graded in {result.seconds:.1f} s{kept}. "
          f"Grades: {args.out / 'grades.csv'}")
    return 0


def cmd_diagnose(args: argparse.Namespace) -> int:
    from checker import diagnose, diagnose_render

    if args.compare:
        return _diagnose_compare(args)
    if not args.target:
        print("gbcheck diagnose: give a target (a script or path.py:name), or --compare BEFORE AFTER", file=sys.stderr)
        return 2
    result = diagnose.diagnose_target(args.target, args.script_args, init=args.init, args=args.args,
                                      keep_backend=args.keep_backend, limits=_limits(args))
    if args.repro:
        diagnose.write_repros(result, str(args.repro))
    if args.html:
        args.html.write_text(diagnose_render.render_html(result), encoding="utf-8")
    print(json.dumps(result.to_dict(), indent=2) if args.json else diagnose_render.render_text(result, args.verbose))
    if args.html and not args.json:
        print(f"\nReport written to {args.html}")
    return 1 if result.error and not result.groups else 0


def _diagnose_compare(args: argparse.Namespace) -> int:
    from checker import diagnose, diagnose_compare

    try:
        runs = [diagnose.run_or_load(side, args.script_args, init=args.init, args=args.args,
                                     keep_backend=args.keep_backend, limits=_limits(args)) for side in args.compare]
    except ValueError as err:
        print(f"gbcheck diagnose: {err}", file=sys.stderr)
        return 2
    comparison = diagnose_compare.compare(*runs)
    print(json.dumps(comparison.to_dict(), indent=2) if args.json else diagnose_compare.render_comparison(comparison))
    return 1 if any(comparison.errors) and not (comparison.removed or comparison.remaining or comparison.new) else 0


def cmd_gradescope(target: Path) -> int:
    from checker.gradescope import build_autograder_zip

    names = build_autograder_zip(target)
    print(f"Wrote {target} ({len(names)} files). Upload it as the autograder of a Gradescope programming "
          "assignment; students submit their exercise files.")
    return 0


def cmd_gradescope_run(args: argparse.Namespace) -> int:
    from checker import sandbox
    from checker.gradescope import grade_one_submission

    sandbox.prepare()
    data = grade_one_submission(args.submission, args.results, _limits(args))
    print(f"score {data['score']}: {data['output']}")
    return 0


# --- helpers ---------------------------------------------------------------------------------------

def _grade(exercise: Exercise, path: Path, limits: Limits, hint_level: int, seed=None):
    from checker import sandbox
    from checker.strict import check_file

    sandbox.prepare()
    return check_file(exercise, path, limits, hint_level=hint_level, seed=seed)


def _seed(text: str | None):
    """--seed as the checker's Seed; a malformed one is a usage error."""
    from checker.draws import Seed

    if text is None:
        return None
    try:
        return Seed.parse(text)
    except ValueError as err:  # bad usage: exit status 2, as for argparse's own errors
        print(f"gbcheck: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def _limits(args: argparse.Namespace | None = None) -> Limits:
    """The sandbox limits of --timeout and --memory; the defaults without arguments."""
    from checker import sandbox

    return sandbox.Limits(timeout=args.timeout, memory_mb=args.memory) if args else sandbox.Limits()


def _version() -> str:
    try:
        from importlib.metadata import version

        return f"gbcheck {version('graph-break-course')}"
    except Exception:  # noqa: BLE001 - running from a source tree without installing
        return "gbcheck (source tree)"
