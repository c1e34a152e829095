"""The learner's loop in a workspace, run as a learner runs it: nothing lost, Ctrl-C, exit codes, watch."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checker.course.manifest import find_exercise, load_exercises
from checker.grading.confine import landlock_abi

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("GBCHECK_PROGRESS", None)
    env.pop("GBCHECK_WORKSPACE", None)
    made = subprocess.run([sys.executable, "-m", "checker", "init", str(folder)], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)
    assert made.returncode == 0, made.stderr

    def gbcheck(*args, cwd=folder, **options):
        return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=cwd,
                              env=env, timeout=300, **options)
    gbcheck.folder, gbcheck.env = folder, env
    return gbcheck


def _file(workspace, exercise_id: str) -> Path:
    return workspace.folder / "exercises" / find_exercise(exercise_id).file


HOSTILE = """\
import ctypes, os, pathlib
here = pathlib.Path(__file__).resolve().parent
for name in os.listdir(here):
    if name.endswith(".py") and name != pathlib.Path(__file__).name:
        try:
            os.remove(here / name)
        except OSError:
            pass
        try:
            (here / name).write_text("overwritten")
        except OSError:
            pass
try:
    open({outside!r}, "w").write("escaped")
except OSError:
    pass
# Past Python: straight to the C library, which the audit hook never sees.
libc = ctypes.CDLL(None, use_errno=True)
libc.open({kernel!r}.encode(), os.O_WRONLY | os.O_CREAT, 0o644)
"""


def test_a_checked_file_loses_nothing_and_the_attempt_is_reported(workspace, tmp_path):
    exercises = load_exercises()
    before = {ex.file: _file(workspace, ex.id).read_bytes() for ex in exercises[1:]}
    target = _file(workspace, exercises[0].id)
    outside, kernel = tmp_path / "outside.txt", tmp_path / "kernel.txt"
    target.write_text(HOSTILE.format(outside=str(outside), kernel=str(kernel)) + target.read_text())
    done = workspace("check", exercises[0].id, "--json")
    assert done.returncode == 1, done.stderr
    after = {ex.file: _file(workspace, ex.id).read_bytes() for ex in exercises[1:]}
    assert after == before  # no sibling deleted or overwritten
    assert not outside.exists()
    if landlock_abi():  # the kernel's layer: a write that never passes through Python is refused too
        assert not kernel.exists()
    report = json.loads(done.stdout)
    refused = [check for check in report["checks"] if check["name"] == "writes-confined"]
    assert refused and refused[0]["status"] == "fail" and str(outside) in refused[0]["message"]
    assert "os.remove" in refused[0]["message"]


def test_every_checked_version_is_kept_and_any_can_be_restored(workspace):
    exercise = find_exercise("cond-on-input")
    path = _file(workspace, exercise.id)
    first = path.read_text() + "\n# first try\n"
    path.write_text(first)
    assert workspace("check", exercise.id).returncode == 1
    path.write_text(exercise.solution_path.read_text())
    assert workspace("check", exercise.id).returncode == 0
    listing = workspace("history", exercise.id)
    assert listing.returncode == 0
    rows = [line.split() for line in listing.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert [(row[0], row[3]) for row in rows] == [("1", "fail"), ("2", "pass")], listing.stdout
    assert workspace("history", exercise.id, "--show", "1").stdout == first

    path.write_text("# unsaved thought, never checked\n")
    restored = workspace("history", exercise.id, "--restore", "1")
    assert restored.returncode == 0 and path.read_text() == first
    assert workspace("history", exercise.id, "--show", "3").stdout == "# unsaved thought, never checked\n"
    missing = workspace("history", exercise.id, "--restore", "9")
    assert missing.returncode == 2 and "no version 9" in missing.stderr and "Traceback" not in missing.stderr


def test_reset_keeps_the_work_it_replaces(workspace):
    path = _file(workspace, "capture-item")
    path.write_text("# an hour of work\n")
    done = workspace("reset", "capture-item")
    assert done.returncode == 0 and "--restore 1" in done.stdout
    assert path.read_bytes() == find_exercise("capture-item").original_path.read_bytes()
    assert workspace("history", "capture-item", "--show", "1").stdout == "# an hour of work\n"


def test_init_inside_a_workspace_is_refused(workspace):
    done = workspace("init", "nested", cwd=workspace.folder / "exercises")
    assert done.returncode == 2 and "inside the workspace" in done.stderr and "Traceback" not in done.stderr
    assert not (workspace.folder / "exercises" / "nested").exists()


def test_the_overview_of_an_untouched_workspace_checks_nothing(workspace):
    probe = "import sys\nfrom checker.cli import main\nstatus = main([])\nprint(status, 'torch' in sys.modules)\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=workspace.folder, env=workspace.env,
        timeout=120)
    assert done.stdout.splitlines()[-1] == "0 False", done.stdout + done.stderr  # no check ran, torch unneeded
    assert f"0/{len(load_exercises())} done" in done.stdout


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.5])
def test_ctrl_c_ends_a_check_at_once_with_130_and_leaves_no_process(workspace, delay):
    path = _file(workspace, "cond-on-input")
    path.write_text("import time\ntime.sleep(120)\n" + path.read_text())
    check = subprocess.Popen([sys.executable, "-m", "checker", "check", "cond-on-input"], cwd=workspace.folder,
                             env=workspace.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True,  # its own session: every process it starts can be found
                             preexec_fn=_as_a_terminal_starts_it)
    time.sleep(delay)
    check.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        _, stderr = check.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"no exit 10 s after SIGINT; {_signal_state(check.pid)}") from None
    finally:
        check.kill()
    assert time.monotonic() - sent < 1.0
    assert check.returncode == 130 and "Traceback" not in stderr, stderr
    time.sleep(0.2)
    assert _session_members(check.pid) == []


def _as_a_terminal_starts_it() -> None:
    """A command typed at a terminal starts with Ctrl-C's default action and no signal blocked, whatever this
    test process inherited or set (a suite run in the background ignores SIGINT; in-process checks may leave
    a signal blocked): what is tested is the checker's own handling of it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _signal_state(pid: int) -> str:
    """How the process stands towards signals, each of its threads (for a failure's message)."""
    found = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            lines = (task / "status").read_text().splitlines()
            fields = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
            wchan = (task / "wchan").read_text()
        except OSError:
            continue
        found.append(f"thread {task.name}: blocked {fields.get('SigBlk', '?').strip()}, ignored "
                     f"{fields.get('SigIgn', '?').strip()}, caught {fields.get('SigCgt', '?').strip()}, "
                     f"pending {fields.get('SigPnd', '?').strip()}, waiting in {wchan or '-'}")
    return "; ".join(found) or "no such process"


def _session_members(session: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session and fields[0] != "Z":  # fields after the name: state, ppid, pgrp, session
            members.append(int(entry.name))
    return members


@pytest.mark.parametrize("argv, status", [
    (["check", "no-such-exercise"], 2),
    (["check", "cond-on-input", "--file", "no/such/file.py"], 2),
    (["check", "cond-on-input", "--seed", "not-a-seed"], 2),
    (["history", "cond-on-input", "--restore", "x"], 2),
    (["check", "cond-on-input"], 1),
])
def test_exit_codes_are_as_documented(workspace, argv, status):
    done = workspace(*argv)
    assert done.returncode == status, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "130 when interrupted" in workspace("check", "--help").stdout


def test_a_missing_numpy_is_named_in_one_sentence(workspace):
    probe = ("import importlib.abc, sys\n"
             "class NoNumpy(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        if name.split('.')[0] == 'numpy':\n"
             "            raise ModuleNotFoundError(name)\n"
             "sys.meta_path.insert(0, NoNumpy())\n"
             "from checker.cli import main\nraise SystemExit(main(sys.argv[1:]))\n")
    for argv in ([], ["check", "numpy-custom-op"]):
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                              cwd=workspace.folder, env=workspace.env, timeout=120)
        assert done.returncode == 2
        assert done.stderr.strip().count("\n") == 0 and "needs numpy" in done.stderr and "pip install numpy" in done.stderr


def test_watch_keeps_passed_on_screen_until_the_learner_moves_on(workspace):
    exercise = load_exercises()[0]
    _file(workspace, exercise.id).write_text(exercise.solution_path.read_text())
    watcher = subprocess.Popen([sys.executable, "-m", "checker", "watch", exercise.id, "--interval", "0.2"],
                               cwd=workspace.folder, env=workspace.env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = []
        for line in watcher.stdout:
            lines.append(line)
            if "Press Enter" in line:
                break
        assert any(line.startswith("PASSED") for line in lines), "".join(lines)
        time.sleep(2)  # still on the PASSED screen: nothing printed, still running
        assert watcher.poll() is None
        watcher.stdin.write("\n")
        watcher.stdin.flush()
        following = watcher.stdout.readline() + watcher.stdout.readline()
        assert f"Next: {load_exercises()[1].id}" in following
    finally:
        watcher.kill()


@pytest.mark.skipif(not landlock_abi(), reason="needs Landlock (Linux 5.13 or later, switched on)")
def test_the_checked_process_cannot_write_into_the_graders_output(workspace, tmp_path):
    """Through /proc, past Python's audit hook: the kernel refuses the open, the report stays the grader's."""
    forged = tmp_path / "attempt.py"
    forged.write_text("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                      "fd = libc.open(f'/proc/{os.getppid()}/fd/1'.encode(), os.O_WRONLY)\n"
                      "if fd >= 0:\n    os.write(fd, b'{\"status\": \"pass\", \"planted\": 1}\\n')\n"
                      + find_exercise("cond-on-input").exercise_path.read_text())
    done = workspace("check", "cond-on-input", "--file", str(forged), "--json")
    report = json.loads(done.stdout)  # one object: nothing was written into it
    assert report["status"] == "fail" and "planted" not in done.stdout


def _graders_of(folder: Path) -> list[int]:
    """The warm graders serving `folder`, found by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"checker.service" in argv and str(folder).encode() in argv:
            found.append(int(entry.name))
    return found


def _children_of(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_the_warm_grader_answers_later_checks_stops_a_cancelled_one_and_leaves_with_its_workspace(workspace):
    env = dict(workspace.env, GBCHECK_WARM_GRADER="1")
    probe = ("import sys\nfrom checker.cli import main\nstatus = main(sys.argv[1:])\n"
             "print('torch imported:', 'torch' in sys.modules)\nraise SystemExit(status)\n")

    def check(*argv):
        return subprocess.run([sys.executable, "-c", probe, "check", *argv], capture_output=True, text=True,
                              cwd=workspace.folder, env=env, timeout=300)
    try:
        first = check("cond-on-input")
        assert first.returncode == 1 and "torch imported: True" in first.stdout  # graded here, grader started
        for _ in range(60):  # until the grader is warm
            later = check("cond-on-input")
            if "torch imported: False" in later.stdout:
                break
            time.sleep(1)
        assert "torch imported: False" in later.stdout and later.returncode == 1
        assert later.stdout.startswith("NOT YET  cond-on-input")
        (grader,) = _graders_of(workspace.folder)

        # Ctrl-C in the client while the grader runs a check: the check's processes are stopped.
        slow = workspace.folder / "slow.py"
        slow.write_text("import time\ntime.sleep(120)\n")
        client = subprocess.Popen([sys.executable, "-m", "checker", "check", "cond-on-input", "--file", str(slow)],
                                  cwd=workspace.folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  preexec_fn=_as_a_terminal_starts_it)
        for _ in range(50):
            if _children_of(grader):
                break
            time.sleep(0.1)
        assert _children_of(grader), "the grader never started the check"
        client.send_signal(signal.SIGINT)
        try:
            assert client.wait(timeout=5) == 130
        except subprocess.TimeoutExpired:
            raise AssertionError(f"no exit 5 s after SIGINT; {_signal_state(client.pid)}") from None
        for _ in range(30):
            if not _children_of(grader):
                break
            time.sleep(0.1)
        assert _children_of(grader) == []
    finally:
        import shutil

        shutil.rmtree(workspace.folder)
    for _ in range(100):  # it looks for its workspace every 5 s
        if not _graders_of(workspace.folder):
            break
        time.sleep(0.1)
    assert _graders_of(workspace.folder) == []
