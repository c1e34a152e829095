"""What isolation costs: grading every solution with the checker vs the same compiles in one process.

    python benchmarks/checker_overhead.py [--runs 3]

Prints, from one run, the median wall time of two whole processes, alternated run by run:
  checker  one process grading every solution the way `gbcheck check` does (a reference trial, then an
           eager, a fullgraph and a default-mode trial per exercise, in a forked child per exercise);
  bare     one plain process doing the same work with no isolation: for each solution, import it, run it
           eagerly, compile it with fullgraph=True and in default mode on every input;
and their ratio. Target: checker / bare <= 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECKER = """
from checker.grading import sandbox
sandbox.prepare()
from checker.course.manifest import load_exercises
from checker.grading.strict import check_file
for exercise in load_exercises():
    report = check_file(exercise, exercise.solution_path)
    assert report.status == "pass", report.message
"""

BARE = """
import importlib.util, sys, warnings
import torch
torch.set_num_threads(1)
from checker.course.manifest import load_exercises, build_call
warnings.simplefilter("ignore")
for exercise in load_exercises():
    spec = importlib.util.spec_from_file_location("solution_" + exercise.id.replace("-", "_"), exercise.solution_path)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    saved = torch._dynamo.config.save_config()
    spec.loader.exec_module(module)
    fn = getattr(module, exercise.entry)
    calls = [build_call(case, index) for index, case in enumerate(exercise.inputs)]
    for args, kwargs in calls:
        fn(*args, **kwargs)
    for fullgraph in (True, False):
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
        for args, kwargs in calls:
            compiled(*args, **kwargs)
    torch._dynamo.config.load_config(saved)  # the next solution starts from the defaults
"""


def timed(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    timed(BARE)  # warm the file cache
    checker_times, bare_times, ratios = [], [], []
    for run in range(runs):
        checker_seconds, bare_seconds = timed(CHECKER), timed(BARE)
        checker_times.append(checker_seconds)
        bare_times.append(bare_seconds)
        ratios.append(checker_seconds / bare_seconds)
        print(f"run {run + 1}: checker {checker_seconds:.2f} s, bare {bare_seconds:.2f} s, "
              f"ratio {ratios[-1]:.2f}", flush=True)
    print(f"\nmedian over {runs} runs (whole processes, torch import included):")
    print(f"  checker (isolated, every solution)  {statistics.median(checker_times):.2f} s")
    print(f"  bare (same compiles, one process)   {statistics.median(bare_times):.2f} s")
    print(f"  ratio checker / bare                {statistics.median(ratios):.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
