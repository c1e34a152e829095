"""A Gradescope autograder for the course: `gbcheck gradescope autograder.zip`.

Gradescope unpacks the zip into /autograder/source, runs `setup.sh` once to build the image, then for
each submission runs `run_autograder`, which must write /autograder/results/results.json. Ours grades
/autograder/submission (the student's exercise files, any subset, in any folder layout) with the same
checker as `gbcheck grade`, one student at a time.

AUTOGRADER_ROOT (default /autograder) and GBCHECK_PYTHON (default the virtual environment setup.sh
makes) let the same script run in a test folder laid out like Gradescope's.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path

from checker.classroom.grade import FIRST_STUDENT_UID, Student, files_in_folder, gradescope_results, stage
from checker.classroom.users import require_student_users
from checker.course.manifest import by_file_name, load_exercises
from checker.course.resolver import CLONE, CourseError, find_course
from checker.grading import sandbox
from checker.grading.strict import check_file

# What of the project goes into the zip: the checker, the exercises and the reference solutions.
SOURCE_PARTS = ("pyproject.toml", "README.md", "checker", "exercises", "solutions")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu, as root, with network).
set -euo pipefail
apt-get update
apt-get install -y python3.11 python3.11-venv
python3.11 -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
# The CPU build of the torch release the course was written against.
/autograder/venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/pip install -e /autograder/source
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission; it writes $AUTOGRADER_ROOT/results/results.json.
set -euo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
python="${GBCHECK_PYTHON:-$root/venv/bin/python}"
cd "$root/source"
exec "$python" -m checker gradescope-run "$root/submission" --results "$root/results/results.json" "$@"
"""


def build_autograder_zip(target: Path) -> list[str]:
    """Write the autograder zip from a clone of the course repository; returns the names it holds."""
    course = find_course()
    if course.kind != CLONE or course.root is None:
        raise CourseError("`gbcheck gradescope` packs the course's source: run it in a clone of the course repository.")
    root = course.root
    names = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o755 << 16  # executable once unpacked
            bundle.writestr(info, text)
            names.append(name)
        for part in SOURCE_PARTS:
            path = root / part
            files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
            for file in files:
                if "__pycache__" in file.parts or file.suffix == ".pyc":
                    continue
                name = str(file.relative_to(root))
                bundle.write(file, name)
                names.append(name)
    return names


def grade_one_submission(submission: Path, results: Path, limits: sandbox.Limits = sandbox.Limits(),
                         same_user: bool = False) -> dict:
    """Grade one student's folder and write Gradescope's results.json to `results`. `same_user`: as in
    grade.grade_class (no results are written where the student's uid could not run a check)."""
    student_user = os.geteuid() == 0 and not same_user
    if student_user:
        require_student_users(FIRST_STUDENT_UID, "`gradescope-run --same-user`")
    exercises = [ex for ex in load_exercises() if not ex.skip]  # those the installed torch can run
    with tempfile.TemporaryDirectory(prefix="gbcheck-gs-") as staging:
        os.chmod(staging, 0o711)  # the student's checks may enter their own folder in it (stage makes it theirs)
        student = Student(name="submission", files={}, uid=FIRST_STUDENT_UID if student_user else None)
        found = {}
        if submission.is_dir():
            found = files_in_folder(submission, by_file_name(exercises))
        else:
            student.problem = f"no submission folder at {submission}"
        stage(student, found, Path(staging) / "files")
        for exercise in exercises:
            if exercise.id in student.files:
                # As root (Gradescope's container), the checks run as the student's uid, which owns only
                # the staged copies: not the results file, the course or the grader's process.
                report = check_file(exercise, student.files[exercise.id], limits, pristine=True, user=student.uid)
                student.reports[exercise.id] = replace(report, file=exercise.file)
        data = gradescope_results(student, exercises)
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return data
