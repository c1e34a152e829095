"""Grading a class: the checker's `gbcheck grade` against the naive way, in one run.

    python benchmarks/grading_throughput.py [--students 100] [--exercises N] [--jobs 2] [--naive-sample 16]

Generates a class: every student holds a file for each exercise, drawn as real classes look
(seeded, so runs compare): 15% not submitted, 20% the unmodified exercise, 40% the reference fix
copied as is, 25% a fix of the student's own (the reference plus the student's own comment, so every
one of these files is distinct). Then prints:
  - `gbcheck grade -j N` on the whole class: wall time, submissions per second, distinct files checked
    (byte-identical files are checked once);
  - the naive way, one fresh Python process per check (import torch, import the file, its three
    modes), N at a time, timed on a random sample of submissions and scaled to the class;
  - the ratio naive / gbcheck for the class, and per distinct file (without the help of identical files).
Targets on 2 cores: <= 60 s for 100 students x all exercises, >= 5x faster than naive.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker.course.manifest import load_exercises  # noqa: E402

NAIVE_CHECK = """
import sys, torch
from checker.course.manifest import find_exercise
from checker.grading.trial import run_trials
for trial in run_trials(find_exercise(sys.argv[1]), sys.argv[2], 0):  # trial seed 0
    pass
"""


def make_class(folder: Path, students: int, exercises: int | None = None, seed: int = 0) -> list[tuple[str, Path]]:
    """Write the class (the first `exercises` exercises, default all); returns (exercise id, file) per file."""
    rng = random.Random(seed)
    submitted = []
    for number in range(students):
        student = folder / f"student{number:03d}"
        student.mkdir(parents=True)
        for ex in load_exercises()[:exercises]:
            draw = rng.random()
            if draw < 0.15:
                continue
            if draw < 0.35:
                text = ex.original_path.read_text()
            elif draw < 0.75:
                text = ex.solution_path.read_text()
            else:
                text = ex.solution_path.read_text() + f"\n# checked by student {number:03d}\n"
            (student / ex.file).write_text(text)
            submitted.append((ex.id, student / ex.file))
    return submitted


def naive(sample: list[tuple[str, Path]], jobs: int) -> float:
    """Seconds for the sample, one fresh process per file (all three modes), `jobs` at a time."""
    commands = [[sys.executable, "-c", NAIVE_CHECK, exercise_id, str(path)] for exercise_id, path in sample]
    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda command: subprocess.run(command, cwd=ROOT, capture_output=True), commands))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--exercises", type=int, help="only the first N exercises (default: all)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--naive-sample", type=int, default=16, help="submissions timed the naive way")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gbcheck-bench-"))
    try:
        submitted = make_class(work / "class", args.students, args.exercises)
        distinct = len({(exercise_id, path.read_bytes()) for exercise_id, path in submitted})
        print(f"class: {args.students} students, {len(submitted)} submitted files, {distinct} distinct", flush=True)

        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "checker", "grade", str(work / "class"), "--out", str(work / "out"),
                        "-j", str(args.jobs)], cwd=ROOT, check=True, capture_output=True)
        ours = time.perf_counter() - started
        print(f"gbcheck grade -j {args.jobs}: {ours:.1f} s for the class, "
              f"{len(submitted) / ours:.1f} submissions/s, {distinct / ours:.2f} distinct files/s", flush=True)

        sample = random.Random(1).sample(submitted, min(args.naive_sample, len(submitted)))
        naive_seconds = naive(sample, args.jobs)
        per_file = naive_seconds / len(sample)
        print(f"naive, one process per check, {args.jobs} at a time: {per_file:.2f} s per file "
              f"(sample of {len(sample)}), so {per_file * len(submitted):.0f} s for the class")
        print(f"\nratio naive / gbcheck, whole class:      {per_file * len(submitted) / ours:.1f}x  (target >= 5x)")
        print(f"ratio naive / gbcheck, per distinct file: {per_file / (ours / distinct):.1f}x")
        print(f"class wall time: {ours:.1f} s  (target <= 60 s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
