"""Grading a class: every student's exercise files, in parallel, isolated, resumable.

    grade_class(Path("submissions"), Path("out"), parallel=2)

SUBMISSIONS holds one folder (or one .zip) per student with that student's copies of exercise files,
under the same names as in exercises/ (any subset; a missing file is "not submitted"). For each student
the grader writes, as soon as that student is finished:
  OUT/<student>/results.json   Gradescope's results format (score, tests[] with name, score, max_score,
                               status, output, visibility)
  OUT/<student>/feedback.md    the explanations `gbcheck check` gives, per exercise
  OUT/grades.csv               one row per finished student: points per exercise and total
Every file is replaced atomically, so an interrupted run leaves complete files only; running again skips
every student whose results match their current files (same content digest).

Each check is a forked child (see sandbox.py), forked from a server that has read no submission
(pristine.py): no check finds another student's file or verdict in its memory. When the grader runs as root, each student's files are
staged in a private folder owned by a uid of that student's own, and the student's checks run as that
uid: they cannot read another student's files, nor the grades.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from checker.classroom.pristine import FileJob, PristineServer
from checker.classroom.users import require_student_users
from checker.course.manifest import Exercise, by_file_name, load_exercises
from checker.course.resolver import BOOK_URL
from checker.dynamo import engine
from checker.grading import sandbox
from checker.grading.report import ERROR, FAIL, PASS, Report, render_text
from checker.grading.strict import error_report

NOT_SUBMITTED = "not submitted"
FIRST_STUDENT_UID = 20000  # student n's checks run as uid FIRST_STUDENT_UID + n (grader running as root)
MAX_FILE_BYTES = 1024 * 1024  # larger "exercise files" are refused, not graded
WARM_UP_FROM = 5  # distinct files of one exercise from which warming the grader (with its shipped file) pays off


@dataclass
class Student:
    """One student's submission, staged for grading."""

    name: str
    files: dict[str, Path]  # exercise id -> staged copy of the student's file
    problem: str = ""  # why nothing could be read (a damaged zip, say); graded as an error everywhere
    digest: str = ""  # of every submitted file: a resumed run skips students whose digest is unchanged
    uid: int | None = None
    reports: dict[str, Report] = field(default_factory=dict)


# --- collecting submissions ------------------------------------------------------------------------

def collect(submissions: Path, exercises: list[Exercise], staging: Path, student_users: bool = False) -> list[Student]:
    """One Student per folder or .zip in `submissions`, with copies of their exercise files in `staging`;
    `student_users`: each student gets a uid of their own (a grader running as root), which owns their copies."""
    if not submissions.is_dir():
        raise FileNotFoundError(f"{submissions} is not a folder of student submissions")
    by_file = by_file_name(exercises)
    students = []
    for number, entry in enumerate(sorted(submissions.iterdir())):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            name, found, problem = entry.name, files_in_folder(entry, by_file), ""
        elif entry.suffix.lower() == ".zip":
            name = entry.stem
            found, problem = files_in_zip(entry, by_file)
        else:
            continue  # a stray file beside the student folders: not a student
        uid = FIRST_STUDENT_UID + number if student_users else None
        student = Student(name=name, files={}, problem=problem, uid=uid)
        stage(student, found, staging / f"student-{number}")
        students.append(student)
    return students


def files_in_folder(folder: Path, by_file: dict[str, Exercise]) -> dict[str, bytes]:
    found = {}
    for path in sorted(folder.rglob("*.py"), key=lambda p: len(p.parts)):  # shallowest copy wins
        if path.name in by_file and by_file[path.name].id not in found and path.is_file() and not path.is_symlink():
            found[by_file[path.name].id] = path.read_bytes()[: MAX_FILE_BYTES + 1]
    return found


def files_in_zip(archive: Path, by_file: dict[str, Exercise]) -> tuple[dict[str, bytes], str]:
    """Exercise files from a zip, by base name; nothing is extracted, so no path in it can escape."""
    found: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = sorted((m for m in bundle.infolist() if not m.is_dir()), key=lambda m: m.filename.count("/"))
            for member in members:
                base = member.filename.rsplit("/", 1)[-1]
                if base in by_file and by_file[base].id not in found and "__MACOSX" not in member.filename:
                    with bundle.open(member) as stream:
                        found[by_file[base].id] = stream.read(MAX_FILE_BYTES + 1)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as err:
        return {}, f"the zip file {archive.name} could not be read ({err})"
    return found, ""


def stage(student: Student, found: dict[str, bytes], folder: Path) -> None:
    folder.mkdir(parents=True)
    digest = hashlib.sha256(student.problem.encode())
    for exercise_id, content in sorted(found.items()):
        digest.update(exercise_id.encode() + b"\0" + content + b"\0")
        path = folder / f"{exercise_id}.py"
        path.write_bytes(content)
        student.files[exercise_id] = path
    student.digest = digest.hexdigest()
    if student.uid is not None and os.geteuid() == 0:  # private to the student's uid: no other student's check reads it
        for path in (folder, *folder.iterdir()):
            os.chown(path, student.uid, student.uid)
        folder.chmod(0o700)


# --- grading ---------------------------------------------------------------------------------------

@dataclass
class ClassResult:
    students: list[Student]
    exercises: list[Exercise]
    skipped: int  # students whose earlier results were kept
    seconds: float


def grade_class(submissions: Path, out: Path, parallel: int = 2, limits: sandbox.Limits = sandbox.Limits(),
                progress: Callable[[dict[str, int], int, int], None] | None = None,
                same_user: bool = False) -> ClassResult:
    """Grade every student in `submissions` into `out` (see the module docstring). `same_user`: a grader running as
    root runs every check as itself, not as each student's own uid (users.py: where no other user can read Python)."""
    started = time.monotonic()
    student_users = os.geteuid() == 0 and not same_user
    if student_users:  # before anything is written: a refusal leaves nothing behind
        require_student_users(FIRST_STUDENT_UID, "`gbcheck grade --same-user`")
    exercises = [ex for ex in load_exercises() if not ex.skip]  # those the installed torch can run
    out.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        out.chmod(0o700)  # the grades are the grader's: checks running as student uids cannot read them
    engine.warm_up()
    # Forked before any submission is read: every check is forked from it (pristine.py).
    with PristineServer(exercises, limits) as server, \
            tempfile.TemporaryDirectory(prefix="gbcheck-grade-") as staging_root:
        staging = Path(staging_root)
        os.chmod(staging, 0o711)  # students' checks may enter their own folder, not list the others
        students = collect(submissions, exercises, staging, student_users)
        kept = [s for s in students if _load_previous(s, out, exercises)]
        todo = [s for s in students if s not in kept]
        _run(server, todo, exercises, out, parallel, progress, finished=list(kept))
    return ClassResult(students=students, exercises=exercises, skipped=len(kept), seconds=time.monotonic() - started)


def _run(server: PristineServer, students: list[Student], exercises: list[Exercise], out: Path,
         parallel: int, progress, finished: list[Student]) -> None:
    by_id = {ex.id: ex for ex in exercises}
    # Byte-identical files (an unmodified exercise, a copied fix) are checked once, on one set of fresh
    # draws: the same file gets the same verdict, lines and messages for every copy.
    groups: dict[tuple[str, str], list[Student]] = {}
    for student in students:
        for exercise_id, path in student.files.items():
            content = path.read_bytes()
            if len(content) > MAX_FILE_BYTES:
                student.reports[exercise_id] = error_report(by_id[exercise_id], str(path), "The file is larger than 1 MB.")
                continue
            groups.setdefault((exercise_id, hashlib.sha256(content).hexdigest()), []).append(student)
    keys = list(groups)
    jobs = []
    for exercise_id, digest in keys:
        first = groups[(exercise_id, digest)][0]  # a group's file is checked as its first member's
        jobs.append(FileJob(exercise_id, str(first.files[exercise_id]), digest, first.uid))
    distinct = Counter(exercise_id for exercise_id, _ in groups)
    counts = Counter({PASS: 0, FAIL: 0, ERROR: 0})
    total_submissions = sum(len(members) for members in groups.values())
    for student in students:  # students with nothing to run (no files, a damaged zip) finish at once
        _maybe_finish(student, exercises, out, finished)
    warm = [ex.id for ex in exercises if distinct[ex.id] >= WARM_UP_FROM]
    for index, report in server.grade(jobs, parallel, warm):
        exercise, members = by_id[keys[index][0]], groups[keys[index]]
        for student in members:
            student.reports[exercise.id] = replace(report, file=f"{student.name}/{exercise.file}")
            counts[report.status] += 1
        if progress:
            progress(dict(counts), sum(counts.values()), total_submissions)
        for student in members:
            _maybe_finish(student, exercises, out, finished)


def _maybe_finish(student: Student, exercises: list[Exercise], out: Path, finished: list[Student]) -> None:
    if student in finished or any(ex_id not in student.reports for ex_id in student.files):
        return
    finished.append(student)
    write_student(student, exercises, out)
    write_grades_csv(finished, exercises, out)


# --- outputs ---------------------------------------------------------------------------------------

def gradescope_results(student: Student, exercises: list[Exercise]) -> dict[str, Any]:
    """Gradescope's results.json for one student: one test per exercise."""
    tests = []
    for ex in exercises:
        report = student.reports.get(ex.id)
        if report is None:
            output = student.problem or f"{ex.file} was not submitted."
            status_word = ERROR if student.problem else NOT_SUBMITTED
            score = 0
        else:
            output = render_text(report, book_url=BOOK_URL)
            status_word = report.status
            score = report.points
        tests.append({
            "name": f"{ex.id}: {ex.title}",
            "number": str(exercises.index(ex) + 1),
            "score": score,
            "max_score": ex.points,
            "status": "passed" if status_word == PASS else "failed",
            "output": output,
            "visibility": "visible",
            "tags": [ex.category, status_word],
        })
    score = sum(test["score"] for test in tests)
    return {
        "score": score,
        "output": f"{sum(t['status'] == 'passed' for t in tests)}/{len(tests)} exercises fixed.",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"student": student.name, "digest": student.digest},
    }


def feedback_markdown(student: Student, exercises: list[Exercise]) -> str:
    lines = [f"# Feedback for {student.name}", ""]
    if student.problem:
        lines += [f"**Your submission could not be read:** {student.problem}", ""]
    for ex in exercises:
        report = student.reports.get(ex.id)
        lines.append(f"## {ex.id}: {ex.title}")
        lines.append("")
        if report is None:
            lines += [f"Not submitted ({ex.file}).", ""]
            continue
        lines += [f"**{report.status}**, {report.points}/{report.max_points} points", "", "```text",
                  render_text(report, book_url=BOOK_URL), "```", ""]
    return "\n".join(lines)


def write_student(student: Student, exercises: list[Exercise], out: Path) -> None:
    folder = out / _safe_name(student.name)
    folder.mkdir(parents=True, exist_ok=True)
    _write_atomic(folder / "feedback.md", feedback_markdown(student, exercises))
    _write_atomic(folder / "results.json", json.dumps(gradescope_results(student, exercises), indent=1))


def write_grades_csv(students: list[Student], exercises: list[Exercise], out: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["student", *(ex.id for ex in exercises), "total"])
    for student in sorted(students, key=lambda s: s.name):
        points = [student.reports[ex.id].points if ex.id in student.reports else 0 for ex in exercises]
        writer.writerow([student.name, *points, sum(points)])
    _write_atomic(out / "grades.csv", buffer.getvalue())


def _load_previous(student: Student, out: Path, exercises: list[Exercise]) -> bool:
    """Take a finished student's earlier results when their files have not changed since."""
    path = out / _safe_name(student.name) / "results.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if results.get("extra_data", {}).get("digest") != student.digest:
        return False
    for ex, test in zip(exercises, results.get("tests", [])):
        status = test["tags"][1] if len(test.get("tags", [])) > 1 else ""
        if ex.id in student.files:
            student.reports[ex.id] = Report(id=ex.id, status=status, checks=(), graph_breaks=(),
                                            message=test["output"], file=f"{student.name}/{ex.file}",
                                            points=test["score"], max_points=ex.points)
    return all(ex_id in student.reports for ex_id in student.files)


def _safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name).lstrip(".")
    return cleaned or "student"


def _write_atomic(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
        stream.write(text)
    os.replace(temporary, path)


# --- summary ---------------------------------------------------------------------------------------

def summary_table(result: ClassResult) -> str:
    """Per exercise: how many submitted, passed, failed, errored, and the break that stopped most."""
    rows = [f"{'exercise':28} {'submitted':>9} {'pass':>5} {'fail':>5} {'error':>5}  most common graph break"]
    for ex in result.exercises:
        reports = [s.reports[ex.id] for s in result.students if ex.id in s.reports]
        statuses = Counter(r.status for r in reports)
        breaks = Counter(f"{gb.get('gb_id') or ''} {gb['gb_type']}" for r in reports if r.status != PASS
                         for gb in r.graph_breaks)
        common = breaks.most_common(1)[0][0] if breaks else "-"
        rate = f"{100 * statuses[PASS] / len(reports):.0f}%" if reports else "-"
        rows.append(f"{ex.id:28} {len(reports):>9} {statuses[PASS]:>5} {statuses[FAIL]:>5} {statuses[ERROR]:>5}"
                    f"  {common[:60]}   (pass rate {rate})")
    return "\n".join(rows)
