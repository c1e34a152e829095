"""A learner's workspace: `gbcheck init` makes one, `gbcheck reset` puts an exercise in it back.

A workspace is a folder holding the learner's copies of the exercise files and their progress:

    graph-breaks/
      README.md                 what to do next
      exercises/01_cat_bug.py   … one file per exercise, the learner's to edit
      .gbcheck/workspace.toml   marks the folder (and records the course version it was made from)
      .gbcheck/progress.json    hints shown, last verdicts

The manifest and the reference solutions stay in the installed package (see checker.course).
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from checker.course.manifest import Exercise, load_exercises
from checker.course.resolver import (BOOK_URL, CLONE, WORKSPACE_MARKER, Course, CourseError, course_version,
                                     find_course, packaged_course)

DEFAULT_FOLDER = "graph-breaks"

README = """\
# torch.compile graph breaks: your exercises

Every file in `exercises/` is code with a graph break for you to find and fix. In this folder:

    gbcheck                     your progress and the next exercise
    gbcheck check ID            grade one exercise (its id is in `gbcheck list`)
    gbcheck hint ID             a hint, more specific each time you ask
    gbcheck watch               re-grade every time you save
    gbcheck reset ID            start an exercise again

The book that teaches each fix: {book}
"""


def create_workspace(folder: Path) -> list[Exercise]:
    """Make a workspace in `folder` (new, or empty) from the packaged course; returns its exercises.

    Refuses, with CourseError, a folder that is already a workspace or already holds files, so that no
    learner's work is overwritten.
    """
    folder = folder.expanduser().absolute()
    if (folder / WORKSPACE_MARKER).exists():
        raise CourseError(f"{folder} is already a course workspace: cd into it and run `gbcheck`.")
    enclosing = next((parent for parent in folder.parents if (parent / WORKSPACE_MARKER).is_file()), None)
    if enclosing is not None:  # a workspace inside another: its files would be two courses' at once
        raise CourseError(f"{folder} is inside the workspace {enclosing}: run gbcheck there, or make a new "
                          "workspace outside it (gbcheck init DIR).")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise CourseError(f"{folder} already exists and is not empty; choose a new folder: gbcheck init DIR")
    course = packaged_course()
    exercises = load_exercises(course)
    staging = folder.with_name(f".{folder.name}.partial")  # a crash half-way leaves no half workspace
    shutil.rmtree(staging, ignore_errors=True)
    try:
        (staging / "exercises").mkdir(parents=True)
        for exercise in exercises:
            shutil.copyfile(exercise.original_path, staging / "exercises" / exercise.file)
        (staging / "README.md").write_text(README.format(book=BOOK_URL), encoding="utf-8")
        marker = staging / WORKSPACE_MARKER
        marker.parent.mkdir()
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        marker.write_text(f'course_version = "{course_version()}"\ncreated = "{created}"\n', encoding="utf-8")
        if folder.exists():
            folder.rmdir()  # empty, checked above
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return exercises


def reset_exercise(exercise: Exercise, course: Course | None = None) -> str:
    """Put the learner's copy of `exercise` back as shipped; returns a sentence saying what was done.

    In a workspace the original comes from the installed package. In a clone of the repository the
    exercise file *is* the packaged original, so it is restored as last committed, with git.
    """
    course = course or find_course()
    course.require_editable("reset")
    shown = course.shown(exercise.exercise_path)
    if course.kind == CLONE:
        try:
            done = subprocess.run(["git", "-C", str(course.root), "checkout", "HEAD", "--", shown],
                                  capture_output=True, text=True)
        except FileNotFoundError as err:
            raise CourseError("reset in a clone of the repository needs git, which is not installed") from err
        if done.returncode != 0:
            raise CourseError(f"could not restore {shown} from git: {done.stderr.strip()}")
        return f"Restored {shown} as last committed."
    exercise.exercise_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exercise.original_path, exercise.exercise_path)
    return f"Restored {shown} as shipped with the course."


def shipped_unchanged(exercises: list[Exercise], course: Course | None = None) -> set[str]:
    """The ids whose exercise file is still as shipped: equal to the packaged original in a workspace, as
    last committed in a clone (one `git status`; none when git cannot tell)."""
    course = course or find_course()
    if course.kind != CLONE:
        return {ex.id for ex in exercises
                if ex.exercise_path.is_file() and ex.exercise_path.read_bytes() == ex.original_path.read_bytes()}
    try:
        done = subprocess.run(["git", "-C", str(course.root), "status", "--porcelain", "--", "exercises"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if done.returncode != 0:
        return set()
    changed = {line[3:].split(" -> ")[-1].strip() for line in done.stdout.splitlines()}  # a rename: its new name
    return {ex.id for ex in exercises if course.shown(ex.exercise_path) not in changed and ex.exercise_path.is_file()}

