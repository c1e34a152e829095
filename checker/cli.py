"""`gbcheck`: the learner's command line. It parses, calls the checker, and prints; nothing else.

    gbcheck                        every exercise, your progress, and the next one to do
    gbcheck list [--json]          the exercises (JSON: id, title, category, chapter, chapter_title, exercise,
                                   solution, entry)
    gbcheck check ID [--file PATH] [--json]
                                   grade one exercise; exit status 0 only when it passes
    gbcheck hint ID                the next hint for an exercise (they get more specific)
    gbcheck watch [ID]             re-check every time you save; moves on when an exercise passes
    gbcheck init [DIR]             make a workspace of exercise files to edit (default ./graph-breaks)
    gbcheck reset ID               put an exercise file back as it was shipped
    gbcheck history ID             every checked version of an exercise file; --restore N puts one back
    gbcheck verify                 for course authors: every exercise fails as declared, every solution passes
    gbcheck grade SUBMISSIONS --out OUT [-j N]
                                   for instructors: grade a class (CSV, Gradescope JSON, feedback per student)
    gbcheck gradescope OUT.zip     for instructors: build a Gradescope autograder zip
    gbcheck diagnose TARGET        every graph break in your own script or function, grouped, with fixes
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

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
                             "0 when it passes, 1 when it fails or errors, 2 on bad usage, 130 when interrupted "
                             "(Ctrl-C). Each check keeps the file's version in the history (gbcheck history ID).")
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

    reset = verbs.add_parser("reset", help="start an exercise again: restore its file as shipped",
                             description="Put an exercise file back as shipped. What it held is kept in the "
                             "history first: gbcheck history ID --restore N brings it back.")
    reset.add_argument("id")

    history = verbs.add_parser(
        "history", help="every checked version of an exercise file, and a way back to any of them",
        description="Each check of an exercise file in your workspace keeps that version (when it changed) "
        "in .gbcheck/history/, with its verdict. List them, print one, or put one back; putting one back "
        "keeps the current file as a version too, so nothing is lost either way.")
    history.add_argument("id")
    shown = history.add_mutually_exclusive_group()
    shown.add_argument("--show", type=int, metavar="N", help="print version N")
    shown.add_argument("--restore", type=int, metavar="N", help="put version N back as the exercise file")

    verify = verbs.add_parser("verify", help="check the course itself: exercises fail as declared, solutions pass",
                              description="For course authors: grade every unmodified exercise (it must show its "
                              "declared graph break) and every solution (it must pass), prove that fresh draws "
                              "reach every branch, and grade every mutant of each solution (one statement "
                              "deleted, or one `with` replaced by its body): a mutant that passes must be "
                              "declared `equivalent` in the manifest, with a reason. Exit 1 if any does not hold.")
    verify.add_argument("ids", nargs="*", help="only these exercises (default: all)")
    verify.add_argument("--no-mutants", action="store_true", help="skip the mutants (a quicker, weaker check)")
    verify.add_argument("-j", "--jobs", type=int, default=2, help="mutants graded at once (default 2)")
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
    grade.add_argument("--same-user", action="store_true",
                       help="as root, run every check as the grader's own user, not as a user of each student's own "
                       "(for a Python no other user can read; a student's checks can then read the others' files)")
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
    run.add_argument("--same-user", action="store_true")
    _add_limits(run)
    return parser


def _add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="wall-clock limit for each mode of a check: eager, fullgraph, default (default: 60)")
    parser.add_argument("--memory", type=int, default=4096, metavar="MB",
                        help="memory a check process may add (default: 4096)")


def _interrupted(signum, frame) -> None:
    """Ctrl-C: stop every check process and leave at once, whatever the grader was doing.

    Raising KeyboardInterrupt instead is not enough: it can land inside torch's import (which then
    cannot be repeated: "cannot load module more than once per process") or in a handler that keeps
    going, and the check runs on to its time limit."""
    if os.getpid() != _GRADER_PID:  # a child forked a moment ago, before it set its own handler
        os._exit(130)
    try:
        stop_all = getattr(sys.modules.get("checker.grading.sandbox"), "stop_all", None)  # None mid-import
        if stop_all is not None:
            stop_all()
        os.write(2, b"\ngbcheck: interrupted\n")
    finally:
        os._exit(130)


_GRADER_PID = os.getpid()


def console() -> None:
    """The `gbcheck` command: `main`, then leave without tearing the interpreter down once torch is loaded.

    Freeing every object torch and Dynamo made, and their exit handlers, takes about 0.8 s on 2 cores (a
    quarter of a check from nothing) and has nothing left to do: every file a verb writes is closed when
    `main` returns, and no learner code runs in this process (checks and diagnose run it in children)."""
    status = main()
    if "torch" not in sys.modules:
        sys.exit(status)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # output piped into `head`, or closed
            pass
    os._exit(status)


def main(argv: list[str] | None = None) -> int:
    global _GRADER_PID
    previous = signal.getsignal(signal.SIGINT)
    # Only over Python's own handler, in the main thread: a host with a handler of its own keeps it.
    ours = previous is signal.default_int_handler and threading.current_thread() is threading.main_thread()
    if ours:
        _GRADER_PID = os.getpid()
        signal.signal(signal.SIGINT, _interrupted)
    try:
        return _run(argv)
    finally:
        if ours:
            signal.signal(signal.SIGINT, previous)


def _run(argv: list[str] | None) -> int:
    from checker.course.manifest import ManifestError
    from checker.course.resolver import CourseError
    from checker.dynamo.torch_support import check_supported

    argv = sys.argv[1:] if argv is None else argv
    # Everything after `--` belongs to the diagnosed script (argparse mishandles `--` under subcommands).
    script_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = build_parser().parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.script_args = script_args
    if refusal := check_supported():  # an unsupported torch: one sentence, before anything imports it
        print(refusal, file=sys.stderr)
        return 2
    from checker.commands.instructor import cmd_grade, cmd_gradescope, cmd_gradescope_run, cmd_verify
    from checker.commands.learner import (cmd_check, cmd_diagnose, cmd_hint, cmd_history, cmd_init, cmd_list,
                                          cmd_overview, cmd_reset, cmd_watch)
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
        if args.verb == "history":
            return cmd_history(args)
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


def _version() -> str:
    from checker.course.resolver import course_version

    installed = course_version()
    return "gbcheck (source tree)" if installed == "unknown" else f"gbcheck {installed}"
