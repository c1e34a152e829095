"""How long a learner waits: the overview of an untouched workspace, `gbcheck list`, and `gbcheck check`
cold (no grader up) and warm (the workspace's warm grader up), on an unfixed file and on a passing one.

    python benchmarks/learner_loop.py                      # this checkout
    python benchmarks/learner_loop.py --base /tmp/base     # and paired against another checkout, run by run

Each figure is a whole `gbcheck` process, timed over --runs runs (median, min, max). With --base the two
checkouts are timed alternately, run by run, so that the machine's load falls on both alike, and the
ratio of medians is printed. Targets (2 cores): overview under 1 s, a warm check under 2 s, a cold one
under 3 s. Prints the figures; exits 1 only if a command fails unexpectedly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = "cond-on-input"


def make_workspace(checkout: Path, folder: Path) -> dict[str, str]:
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(checkout))
    for name in ("GBCHECK_PROGRESS", "GBCHECK_WORKSPACE"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-m", "checker", "init", str(folder)], cwd=checkout, env=env, check=True,
                   capture_output=True)
    return env


def solution_of(checkout: Path) -> Path:
    return next((checkout / "solutions").glob("*_cond_on_input.py"))


def timed(argv: list[str], cwd: Path, env: dict[str, str], ok: set[int]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "checker", *argv], cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in ok:
        raise SystemExit(f"gbcheck {' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def scenarios(checkout: Path, folder: Path, env: dict[str, str]):
    """(name, argv, env, exit codes that are right, whether the warm grader must be up first)."""
    cold = dict(env, GBCHECK_WARM_GRADER="0")
    passing = str(solution_of(checkout))
    return [
        ("overview, untouched workspace", [], cold, {0}, False),
        ("list", ["list"], cold, {0}, False),
        ("check cold, unfixed", ["check", EXERCISE], cold, {1}, False),
        ("check cold, passing", ["check", EXERCISE, "--file", passing], cold, {0}, False),
        ("check warm, unfixed", ["check", EXERCISE], env, {1}, True),
        ("check warm, passing", ["check", EXERCISE, "--file", passing], env, {0}, True),
    ]


def warm_up(folder: Path, env: dict[str, str]) -> None:
    """One check starts the warm grader; wait until it answers (a second check comes back fast)."""
    for _ in range(30):
        if timed(["check", EXERCISE], folder, env, {1}) < 2.5:
            return
        time.sleep(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="a second checkout to pair against")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    checkouts = {"this": ROOT} | ({"base": options.base.resolve()} if options.base else {})
    work = Path(tempfile.mkdtemp(prefix="learner-loop-"))
    try:
        setups = {}
        for name, checkout in checkouts.items():
            folder = work / name
            env = make_workspace(checkout, folder)
            setups[name] = (folder, scenarios(checkout, folder, env))
        figures: dict[tuple[str, str], list[float]] = {}
        count = len(next(iter(setups.values()))[1])
        for index in range(count):
            for name, (folder, cases) in setups.items():
                if cases[index][4] and (checkouts[name] / "checker" / "commands" / "warm.py").is_file():
                    warm_up(folder, cases[index][2])  # a checkout without a warm grader: its plain check
            for _ in range(options.runs):
                for name, (folder, cases) in setups.items():  # alternated run by run
                    label, argv, env, ok, _ = cases[index]
                    figures.setdefault((label, name), []).append(timed(argv, folder, env, ok))
        labels = [case[0] for case in next(iter(setups.values()))[1]]
        print(f"{'':32}" + "".join(f"{name + ' median (min-max) s':>30}" for name in checkouts)
              + ("   ratio" if options.base else ""))
        for label in labels:
            row = f"{label:32}"
            medians = []
            for name in checkouts:
                values = figures[(label, name)]
                medians.append(statistics.median(values))
                row += f"{f'{medians[-1]:.2f} ({min(values):.2f}-{max(values):.2f})':>30}"
            if options.base:
                row += f"   {medians[0] / medians[1]:.2f}x"
            print(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the warm graders leave when their workspace is gone
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
