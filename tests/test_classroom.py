"""Classroom grading end to end on a synthetic class: every row, every status, resume, Gradescope."""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from checker.classroom.grade import grade_class
from checker.course.manifest import find_exercise
from checker.grading.sandbox import Limits
from student_users import NO_STUDENT_USERS, SAME_USER, SAME_USER_OPTION

REPO = Path(__file__).resolve().parent.parent  # the clone these tests run in

COND = find_exercise("cond-on-input")
ITEM = find_exercise("capture-item")
FIXED = COND.solution_path.read_text()
BROKEN = COND.exercise_path.read_text()

# name -> {exercise file: source}; each student exercises one way a submission can go
CLASS = {
    "alice-correct": {COND.file: FIXED, ITEM.file: ITEM.solution_path.read_text()},
    "bob-unmodified": {COND.file: BROKEN, ITEM.file: ITEM.exercise_path.read_text()},
    "carol-cheats": {COND.file: "import torch\ntorch._dynamo.config.suppress_errors = True\n" + BROKEN},
    "dan-syntax": {COND.file: "def gated_residual(x, weight:\n"},
    "erin-loops": {COND.file: "import torch\ndef gated_residual(x, weight):\n    while True:\n        pass\n"},
    "frank-crashes": {COND.file: "import ctypes\nctypes.string_at(0)\n"},
    "grace-hogs": {COND.file: "hog = [bytearray(10**8) for _ in range(1000)]\n"},
    "heidi-exits": {COND.file: "import os\nos._exit(0)\n"},
    "ivan-forges": {COND.file: 'print(\'{"score": 100, "status": "pass"}\')\n' + BROKEN},
    "judy-patches": {COND.file: "import torch\ntorch.compile = lambda fn, **kw: fn\n" + FIXED},
    "ken-nothing": {},
}
EXPECTED = {  # student -> (cond-on-input status, capture-item status); None = not submitted
    "alice-correct": ("pass", "pass"), "bob-unmodified": ("fail", "fail"), "carol-cheats": ("fail", None),
    "dan-syntax": ("error", None), "erin-loops": ("error", None), "frank-crashes": ("error", None),
    "grace-hogs": ("error", None), "heidi-exits": ("error", None), "ivan-forges": ("fail", None),
    "judy-patches": ("fail", None), "ken-nothing": (None, None), "mallory-zip": ("pass", None),
    "oscar-badzip": (None, None),
}
LIMITS = Limits(timeout=8, memory_mb=1024)


def make_class(root: Path) -> Path:
    submissions = root / "submissions"
    for student, files in CLASS.items():
        folder = submissions / student
        folder.mkdir(parents=True)
        for name, source in files.items():
            (folder / name).write_text(source)
    with zipfile.ZipFile(submissions / "mallory-zip.zip", "w") as bundle:  # a zip with a nested folder
        bundle.writestr("mallory/exercises/" + COND.file, FIXED)
        bundle.writestr("../../escape/" + ITEM.file + ".txt", "ignored")
    (submissions / "oscar-badzip.zip").write_bytes(b"this is not a zip")
    (submissions / "notes.txt").write_text("not a student")
    return submissions


def statuses(results: dict) -> dict[str, str]:
    return {test["name"].split(":")[0]: test["tags"][1] for test in results["tests"]}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    out = root / "out"
    result = grade_class(make_class(root), out, parallel=2, limits=LIMITS, same_user=SAME_USER)
    return result, out


def test_every_student_gets_a_row_and_a_status(graded):
    result, out = graded
    with open(out / "grades.csv", newline="") as stream:
        rows = {row["student"]: row for row in csv.DictReader(stream)}
    assert set(rows) == set(EXPECTED)
    for student, (cond, item) in EXPECTED.items():
        results = json.loads((out / student / "results.json").read_text())
        got = statuses(results)
        assert got[COND.id] == (cond or "not submitted" if student != "oscar-badzip" else "error"), student
        assert got[ITEM.id] == (item or "not submitted" if student != "oscar-badzip" else "error"), student
        expected_points = 10 * [cond, item].count("pass")
        assert int(rows[student]["total"]) == expected_points == results["score"], student
        assert int(rows[student][COND.id]) == (10 if cond == "pass" else 0)
        assert (out / student / "feedback.md").read_text().startswith(f"# Feedback for {student}")


def test_reasons_are_given(graded):
    _, out = graded

    def output(student):
        tests = json.loads((out / student / "results.json").read_text())["tests"]
        return next(t["output"] for t in tests if t["name"].startswith(COND.id))

    assert "did not finish" in output("erin-loops")
    assert "SIGSEGV" in output("frank-crashes")
    assert "MemoryError" in output("grace-hogs") or "memory" in output("grace-hogs")
    assert "exit code 0" in output("heidi-exits")
    assert "SyntaxError" in output("dan-syntax")
    assert "suppress_errors" in output("carol-cheats")
    assert "torch.compile" in output("judy-patches")
    assert "GB0170" in output("ivan-forges")
    assert "could not be read" in (out / "oscar-badzip" / "feedback.md").read_text()


def test_results_follow_the_gradescope_spec(graded):
    _, out = graded
    for student in EXPECTED:
        assert_gradescope_results(json.loads((out / student / "results.json").read_text()))


def assert_gradescope_results(results: dict) -> None:
    """Gradescope's results.json: top-level score/output/visibility/tests; each test's known fields."""
    visibilities = {"hidden", "after_due_date", "after_published", "visible"}
    assert set(results) <= {"score", "execution_time", "output", "output_format", "test_output_format",
                            "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
                            "leaderboard"}
    assert isinstance(results["score"], (int, float))
    assert results["visibility"] in visibilities and results["stdout_visibility"] in visibilities
    for test in results["tests"]:
        assert set(test) <= {"score", "max_score", "status", "name", "name_format", "number", "output",
                             "output_format", "tags", "visibility", "extra_data"}
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert 0 <= test["score"] <= test["max_score"]
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in visibilities
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
    assert results["score"] == sum(test["score"] for test in results["tests"])


@pytest.mark.skipif(os.geteuid() != 0, reason="per-student users need a grader running as root")
@pytest.mark.skipif(SAME_USER, reason=NO_STUDENT_USERS)
def test_a_student_cannot_read_another_students_files_or_the_grades(tmp_path):
    submissions = tmp_path / "submissions"
    out = tmp_path / "out"
    (submissions / "a-victim").mkdir(parents=True)
    (submissions / "a-victim" / COND.file).write_text(FIXED)
    (submissions / "b-snoop").mkdir()
    # The snoop passes only if every attempt to reach the victim's file or the grades is refused.
    snoop = f'''
import glob, os, tempfile
leaked = []
for path in glob.glob(os.path.join(tempfile.gettempdir(), "gbcheck-grade-*", "student-0", "*.py")) + \\
        [{str(out / "grades.csv")!r}, {str(out / "a-victim" / "results.json")!r}]:
    try:
        open(path).read()
        leaked.append(path)
    except OSError:
        pass
try:
    open({str(out / "grades.csv")!r}, "a").write("b-snoop,10,10\\n")
    leaked.append("wrote grades")
except OSError:
    pass
assert not leaked, leaked
''' + FIXED
    (submissions / "b-snoop" / COND.file).write_text(snoop)
    grade_class(submissions, out, parallel=2, limits=LIMITS)
    feedback = (out / "b-snoop" / "feedback.md").read_text()
    assert "✓ eager-runs" in feedback  # every read was refused: the snoop's own assert held
    assert "✗ writes-confined" in feedback and "grades.csv" in feedback  # the write was refused, and said
    assert "b-snoop,10,10" not in (out / "grades.csv").read_text()


def _class_of_six_fixes(tmp_path):
    """Six students, each with a distinct copy of the fix; the output folder and the command that grades them."""
    submissions = tmp_path / "submissions"
    for number in range(6):
        folder = submissions / f"student{number}"
        folder.mkdir(parents=True)
        (folder / COND.file).write_text(FIXED + f"\n# student {number}\n")
    out = tmp_path / "out"
    return out, [sys.executable, "-m", "checker", "grade", str(submissions), "--out", str(out), "-j", "1",
                 *SAME_USER_OPTION]


def test_an_interrupted_run_keeps_finished_students_and_resumes(tmp_path):
    out, command = _class_of_six_fixes(tmp_path)
    first = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (out / "student1" / "results.json").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)  # no chance to clean up
    first.wait()
    finished = sorted(p.parent.name for p in out.glob("*/results.json"))
    assert 2 <= len(finished) < 6
    stamps = {name: (out / name / "results.json").stat().st_mtime_ns for name in finished}
    with open(out / "grades.csv", newline="") as stream:
        assert len(list(csv.DictReader(stream))) >= len(finished) - 1  # the csv follows each finished student

    second = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert f"{len(finished)} kept from an earlier run" in second.stdout
    assert {name: (out / name / "results.json").stat().st_mtime_ns for name in finished} == stamps
    left = 6 - len(finished)  # progress in a log: whole lines, the last one counting every check left
    assert "\r" not in second.stderr
    assert re.findall(r"(\d+)/(\d+) submissions", second.stderr)[-1] == (str(left), str(left))
    with open(out / "grades.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [row["student"] for row in rows] == [f"student{n}" for n in range(6)]
    assert all(row["total"] == "10" for row in rows)


def test_a_grading_server_that_dies_makes_up_no_verdict(tmp_path):
    """The checks' server killed mid-class (out of memory, say): the grader says so and exits 1, and every
    results.json written holds real verdicts only (a file without one is left for the next run)."""
    out, command = _class_of_six_fixes(tmp_path)
    grader = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "student0" / "results.json").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    server = subprocess.run(["pgrep", "-P", str(grader.pid)], capture_output=True, text=True).stdout.split()
    os.kill(int(server[0]), signal.SIGKILL)
    _, stderr = grader.communicate(timeout=60)
    assert grader.returncode == 1, stderr
    assert "stopped before" in stderr and "run the same command again" in stderr
    written = [json.loads(path.read_text()) for path in out.glob("*/results.json")]
    assert 1 <= len(written) < 6
    assert all(test["tags"][1] in ("pass", "not submitted") for results in written for test in results["tests"])


def test_gradescope_autograder_runs_in_a_gradescope_layout(tmp_path):
    target = tmp_path / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "checker", "gradescope", str(target)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(target) as bundle:
        names = bundle.namelist()
        bundle.extractall(root / "source")
    assert {"setup.sh", "run_autograder", "exercises/exercises.toml", "checker/cli.py"} <= set(names)
    assert "torch==2.13.0" in (root / "source" / "setup.sh").read_text()
    (root / "submission" / "nested").mkdir(parents=True)
    (root / "submission" / "nested" / COND.file).write_text(FIXED)
    (root / "submission" / ITEM.file).write_text(ITEM.exercise_path.read_text())
    (root / "results").mkdir()
    script = root / "source" / "run_autograder"
    script.chmod(0o755)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), GBCHECK_PYTHON=sys.executable,
               PYTHONPATH=str(root / "source"))
    run = subprocess.run([str(script), *SAME_USER_OPTION], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert_gradescope_results(results)
    got = statuses(results)
    assert got[COND.id] == "pass" and got[ITEM.id] == "fail" and results["score"] == 10
    assert sum(status == "not submitted" for status in got.values()) == len(got) - 2


def test_a_submission_from_an_older_workspace_is_found_under_its_former_file_names(tmp_path):
    """Files a student's workspace had before the exercises were numbered in the book's order are collected."""
    from checker.classroom.grade import collect
    from checker.course.manifest import load_exercises

    exercises = load_exercises(apply_variants=False)
    moved = next(ex for ex in exercises if ex.id == "online-normalize")
    old = moved.formerly[0]
    (tmp_path / "submissions" / "olga-old-names").mkdir(parents=True)
    (tmp_path / "submissions" / "olga-old-names" / old).write_text("# olga's work\n")
    with zipfile.ZipFile(tmp_path / "submissions" / "pat-zipped.zip", "w") as bundle:
        bundle.writestr(f"graph-breaks/exercises/{old}", "# pat's work\n")
    olga, pat = collect(tmp_path / "submissions", exercises, tmp_path / "staging")
    for student, text in ((olga, "# olga's work\n"), (pat, "# pat's work\n")):
        assert list(student.files) == [moved.id] and student.files[moved.id].read_text() == text


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can ask a process of another user")
def test_the_grader_asks_a_process_of_the_students_user_what_it_can_read():
    import tempfile

    from checker.classroom.grade import FIRST_STUDENT_UID
    from checker.classroom.users import first_unreadable

    with tempfile.TemporaryDirectory() as folder:  # under /tmp: pytest's own folders are closed to other users
        root = Path(folder)
        closed = root / "closed"
        (closed / "inside").mkdir(parents=True)
        (closed / "inside" / "module.py").write_text("x = 1\n")
        root.chmod(0o755)
        closed.chmod(0o700)
        paths = [str(root), str(closed / "inside" / "module.py")]
        assert first_unreadable(FIRST_STUDENT_UID, paths) == paths[1]
        closed.chmod(0o755)
        assert first_unreadable(FIRST_STUDENT_UID, paths) == ""


@pytest.mark.skipif(os.geteuid() != 0, reason="per-student users need a grader running as root")
def test_grading_as_root_refuses_up_front_where_a_students_user_cannot_read_what_a_check_imports(tmp_path,
                                                                                                 monkeypatch):
    """A Python under /root is closed to the students' users: every check would fail its first new import. The
    grader refuses before it writes anything, and says what to do."""
    from checker.classroom import users

    closed = tmp_path / "python"
    closed.mkdir()
    closed.chmod(0o700)
    monkeypatch.setattr(users, "needed_paths", lambda: [str(closed)])
    with pytest.raises(users.StudentUsersUnavailable, match="--same-user"):
        grade_class(make_class(tmp_path), tmp_path / "out", parallel=1, limits=LIMITS)
    assert not (tmp_path / "out").exists()


def test_a_solution_that_imports_a_module_late_passes_in_class_grading(tmp_path):
    """time-from-outside's solution imports torch.utils.benchmark inside its timer (timeit, getopt): as root, a
    check run as a student's user that cannot read Python failed it with "No module named 'getopt'"."""
    timing = find_exercise("time-from-outside")
    (tmp_path / "submissions" / "alice").mkdir(parents=True)
    (tmp_path / "submissions" / "alice" / timing.file).write_text(timing.solution_path.read_text())
    result = grade_class(tmp_path / "submissions", tmp_path / "out", parallel=1,
                         limits=Limits(timeout=60, memory_mb=2048), same_user=SAME_USER)
    report = result.students[0].reports[timing.id]
    assert report.status == "pass", report.message
