"""The course as a learner gets it: a wheel, installed in a fresh virtual environment outside the checkout.

One environment serves every test here. It starts as Colab does, with torch and Jupyter but no course;
a chapter notebook opened alone installs the course from its setup cell (a folder holding the wheel
stands in for the package index). Then every other chapter notebook runs alone, and a learner works
through `gbcheck init` in a folder of their own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BOOK = REPO / "book"
CHAPTERS = sorted(path.stem for path in BOOK.glob("*.ipynb"))
COLAB_CHAPTER = "incorrect-code"  # has check(...) cells, so the packaged course is used as well as installed
VERDICT = re.compile(r"<b style='color:#\w+'>(Passed|Not yet|Error)</b> — <code>([\w-]+)</code>")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="builds a Linux virtual environment")


def _run(command, cwd, env, timeout=900):
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A venv with torch, numpy and Jupyter's runner, the course not installed; and a folder of wheels."""
    root = tmp_path_factory.mktemp("learner")
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "GBCHECK_WORKSPACE", "GBCHECK_PROGRESS")}
    env.update(XDG_STATE_HOME=str(root / "state"), JUPYTER_DATA_DIR=str(root / "jupyter"), NO_COLOR="1")
    wheels = root / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(REPO)], root, env)
    _run([sys.executable, "-m", "venv", str(root / "venv")], root, env)
    python = root / "venv" / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--quiet", "torch==2.13.0", "numpy", "ipykernel", "nbconvert"],
         root, env)
    return {"root": root, "env": env, "wheels": wheels, "python": python, "bin": python.parent}


def _torch_state(learner) -> tuple[str, int]:
    """torch's version and when its files were written: a reinstall changes the second even at one version."""
    probe = ("import importlib.metadata, importlib.util, os; "
             "print(importlib.metadata.version('torch'), os.stat(importlib.util.find_spec('torch').origin).st_mtime_ns)")
    version, stamp = _run([str(learner["python"]), "-c", probe], learner["root"], learner["env"]).stdout.split()
    return version, int(stamp)


def _run_alone(learner, chapter: str, env: dict | None = None) -> dict:
    """Copy one chapter notebook into an empty folder and run it top to bottom; returns the executed notebook."""
    folder = learner["root"] / f"alone-{chapter}"
    folder.mkdir()
    shutil.copy(BOOK / f"{chapter}.ipynb", folder)
    # Cells tagged raises-exception may raise; any other error fails the run (nbconvert's own rule).
    _run([str(learner["bin"] / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "--output", "executed",
          "--ExecutePreprocessor.timeout=900", f"{chapter}.ipynb"], folder, env or learner["env"], timeout=1800)
    return json.loads((folder / "executed.ipynb").read_text(encoding="utf-8"))


def _verdicts(notebook: dict) -> list[tuple[str, str]]:
    """(verdict, exercise id) of every check(...) cell's report."""
    found = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and "check(" in "".join(cell["source"]):
            for output in cell.get("outputs", []):
                found += VERDICT.findall("".join(output.get("data", {}).get("text/html", "")))
    return found


@pytest.fixture(scope="module")
def colab(learner):
    """Open one notebook alone where torch is installed and the course is not, as in Colab."""
    before = _torch_state(learner)
    env = dict(learner["env"], PIP_NO_INDEX="1", PIP_FIND_LINKS=str(learner["wheels"]))
    notebook = _run_alone(learner, COLAB_CHAPTER, env)
    return {"before": before, "after": _torch_state(learner), "notebook": notebook}


def test_colab_setup_cell_installs_the_course_and_keeps_torch(learner, colab):
    installed = subprocess.run([str(learner["python"]), "-m", "pip", "show", "graph-break-course"],
                               capture_output=True, text=True, env=learner["env"])
    assert installed.returncode == 0, "the setup cell did not install the course"
    assert colab["after"] == colab["before"], "installing the course replaced torch"
    stored = json.loads((BOOK / f"{COLAB_CHAPTER}.ipynb").read_text(encoding="utf-8"))
    assert _verdicts(colab["notebook"]) == _verdicts(stored) and _verdicts(stored)


@pytest.mark.parametrize("chapter", [name for name in CHAPTERS if name != COLAB_CHAPTER])
def test_chapter_notebook_runs_alone_and_every_check_gives_its_verdict(learner, colab, chapter):
    executed = _run_alone(learner, chapter)
    stored = json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    # The same verdict as the one recorded in the repository, never the Error of a checker without its course.
    assert _verdicts(executed) == _verdicts(stored)


def test_a_learner_workspace_from_the_installed_package(learner, colab):
    gbcheck = str(learner["bin"] / "gbcheck")
    env, home = learner["env"], learner["root"] / "home"
    home.mkdir()
    outside = subprocess.run([gbcheck, "check", "cond-on-input"], cwd=home, env=env, capture_output=True, text=True)
    assert outside.returncode == 2 and "gbcheck init" in outside.stderr and "Traceback" not in outside.stderr

    _run([gbcheck, "init", "ws"], home, env)
    workspace = home / "ws"
    again = subprocess.run([gbcheck, "init", "ws"], cwd=home, env=env, capture_output=True, text=True)
    assert again.returncode == 2 and "already a course workspace" in again.stderr

    below = workspace / "exercises"  # every verb finds the workspace from a folder below it too
    records = json.loads(_run([gbcheck, "list", "--json"], below, env).stdout)
    record = next(r for r in records if r["id"] == "cond-on-input")
    assert record["exercise"] == "exercises/03_cond_on_input.py"
    exercise = workspace / record["exercise"]
    original = exercise.read_text(encoding="utf-8")

    unfixed = subprocess.run([gbcheck, "check", "cond-on-input", "--json"], cwd=below, env=env,
                             capture_output=True, text=True, timeout=600)
    assert unfixed.returncode == 1 and json.loads(unfixed.stdout)["status"] == "fail"
    shutil.copy(record["solution"], exercise)  # the packaged reference solution, copied in
    fixed = subprocess.run([gbcheck, "check", "cond-on-input", "--json"], cwd=below, env=env,
                           capture_output=True, text=True, timeout=600)
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["status"] == "pass"

    _run([gbcheck, "reset", "cond-on-input"], below, env)
    assert exercise.read_text(encoding="utf-8") == original
    assert (workspace / ".gbcheck" / "progress.json").is_file()
