"""The learner CLI, run as a learner runs it: `python -m checker ...` in a subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checker.course.manifest import load_exercises

REPO = Path(__file__).resolve().parent.parent  # the clone these tests run in


@pytest.fixture
def gbcheck(tmp_path):
    env = dict(os.environ, GBCHECK_PROGRESS=str(tmp_path / "progress.json"), NO_COLOR="1")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True,
                              cwd=REPO, env=env, timeout=300)
    return run


def test_list_json_contract(gbcheck):
    done = gbcheck("list", "--json")
    assert done.returncode == 0
    records = json.loads(done.stdout)
    assert [r["id"] for r in records] == [ex.id for ex in load_exercises()]
    for record in records:
        assert {"id", "title", "category", "chapter", "exercise", "solution", "entry"} <= record.keys()
        assert (REPO / record["exercise"]).is_file() and (REPO / record["solution"]).is_file()
        assert not os.path.isabs(record["exercise"])


def test_check_json_contract_and_exit_status(gbcheck):
    failing = gbcheck("check", "cond-on-input", "--json")
    assert failing.returncode == 1
    report = json.loads(failing.stdout)
    assert report["id"] == "cond-on-input" and report["status"] == "fail"
    assert {c["name"] for c in report["checks"]} >= {"eager-runs", "fullgraph-compiles", "no-graph-breaks"}
    assert all({"name", "status", "message"} <= c.keys() for c in report["checks"])
    assert report["graph_breaks"][0]["gb_id"] == "GB0170" and report["graph_breaks"][0]["line"] > 0
    assert "gb_type" in report["graph_breaks"][0] and report["message"]

    passing = gbcheck("check", "cond-on-input", "--file", "solutions/03_cond_on_input.py", "--json")
    assert passing.returncode == 0
    assert json.loads(passing.stdout)["status"] == "pass"


def test_check_text_names_break_line_hint_and_chapter(gbcheck):
    done = gbcheck("check", "cond-on-input")
    assert done.returncode == 1
    assert done.stdout.startswith("NOT YET  cond-on-input")
    assert "GB0170" in done.stdout and "line 17" in done.stdout
    assert "Hint:" in done.stdout and "data-dependent" in done.stdout


def test_hints_get_more_specific(gbcheck):
    hints = load_exercises()[2].hints
    first = gbcheck("hint", "cond-on-input").stdout
    second = gbcheck("hint", "cond-on-input").stdout
    assert hints[0] in first and hints[1] not in first
    assert hints[1] in second


def test_unknown_exercise_is_a_usage_error(gbcheck):
    done = gbcheck("check", "no-such-exercise")
    assert done.returncode == 2
    assert "known exercises" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv, said", [
    (["check", "cond-on-inptu"], "no exercise named 'cond-on-inptu' (did you mean cond-on-input?)"),
    (["hint", "mask-wher"], "(did you mean mask-where?)"),
    (["check", "cond-on-input", "--file", "no/such/file.py"], "there is no file at no/such/file.py"),
])
def test_a_usage_error_is_answered_before_torch_is_imported(argv, said):
    probe = ("import sys\nfrom checker.cli import main\n"
             f"status = main({argv!r})\nprint(status, 'torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.stdout.split() == ["2", "False"], done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_help_teaches(gbcheck):
    done = gbcheck("--help")
    assert done.returncode == 0
    for verb in ("list", "check", "hint", "watch", "reset"):
        assert verb in done.stdout
    assert "fullgraph=True" in done.stdout


def test_overview_shows_progress_and_next(gbcheck):
    done = gbcheck()
    assert done.returncode == 0
    assert f"0/{len(load_exercises())} done" in done.stdout
    assert "Next: cat-bug" in done.stdout or "Next:" in done.stdout


def test_reset_restores_the_committed_file(gbcheck):
    exercise = load_exercises()[2]
    relative = exercise.exercise_path.relative_to(REPO)
    status = subprocess.run(["git", "status", "--porcelain", str(relative)], capture_output=True, text=True,
                            cwd=REPO)
    if status.returncode != 0 or status.stdout.strip():
        pytest.skip("needs a git checkout with the exercise file unmodified")
    original = exercise.exercise_path.read_text()
    try:
        exercise.exercise_path.write_text(original + "\n# my attempt\n")
        done = gbcheck("reset", exercise.id)
        assert done.returncode == 0
        assert exercise.exercise_path.read_text() == original
    finally:
        exercise.exercise_path.write_text(original)


def test_watch_regrades_on_save(tmp_path):
    from checker.course.manifest import find_exercise

    exercise = find_exercise("cond-on-input")
    attempt = tmp_path / "attempt.py"
    attempt.write_text(exercise.exercise_path.read_text())
    env = dict(os.environ, GBCHECK_PROGRESS=str(tmp_path / "progress.json"), NO_COLOR="1")
    watcher = subprocess.Popen([sys.executable, "-m", "checker", "watch", exercise.id, "--file", str(attempt),
                                "--interval", "0.2"], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in watcher.stdout:
            lines.append(line)
            if "waiting for you to save" in line:
                assert any(l.startswith("NOT YET") for l in lines)
                attempt.write_text(exercise.solution_path.read_text())  # the learner saves a fix
            if line.startswith("PASSED"):
                break
        assert watcher.wait(timeout=60) == 0
        assert any(l.startswith("PASSED") for l in lines)
    finally:
        watcher.kill()


def test_list_shows_each_exercise_under_its_chapter_title(gbcheck):
    done = gbcheck("list")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    exercises = load_exercises()
    assert [line.split()[0] for line in lines] == [ex.id for ex in exercises]
    for line, ex in zip(lines, exercises):
        assert ex.chapter_title and f" {ex.chapter_title} " in line, line
    assert "Recompilations" in next(l for l in lines if l.startswith("online-normalize "))
    records = json.loads(gbcheck("list", "--json").stdout)
    assert [r["chapter_title"] for r in records] == [ex.chapter_title for ex in exercises]


def test_a_workspace_with_the_file_names_of_an_earlier_version_keeps_its_work(tmp_path):
    """A workspace made when online-normalize was 19_running_mean_norm.py: the learner's file is renamed on use,
    with a line saying so, and a file whose new name is taken is left as it is."""
    env = dict(os.environ, GBCHECK_PROGRESS=str(tmp_path / "progress.json"), NO_COLOR="1")
    env.pop("GBCHECK_WORKSPACE", None)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True,
                              cwd=workspace, env=env, timeout=300)

    workspace = tmp_path
    assert run("init", "ws").returncode == 0
    workspace = tmp_path / "ws"
    folder = workspace / "exercises"
    by_id = {ex.id: ex for ex in load_exercises()}
    current, old = by_id["online-normalize"].file, "19_running_mean_norm.py"
    assert old in by_id["online-normalize"].formerly
    mine = (folder / current).read_text() + "\n# my work so far\n"
    (folder / current).unlink()
    (folder / old).write_text(mine)
    taken = by_id["mask-where"]  # an old copy beside a file that already has the new name
    stale = next(name for name in taken.formerly)
    (folder / stale).write_text("# an old copy\n")
    shipped = (folder / taken.file).read_text()

    done = run("hint", "online-normalize")
    assert done.returncode == 0, done.stderr
    assert (folder / current).read_text() == mine and not (folder / old).exists()
    said = [line for line in done.stderr.splitlines() if "renamed" in line]
    assert said == [f"gbcheck: renamed exercises/{old} to exercises/{current}, its name in this version of the "
                    "course (exercise online-normalize)"]
    assert (folder / stale).read_text() == "# an old copy\n" and (folder / taken.file).read_text() == shipped
    again = run("hint", "online-normalize")
    assert "renamed" not in again.stderr and (folder / current).read_text() == mine
