"""How long the book takes to build and to verify: the cold strict build, and nbval over every chapter.

    python benchmarks/book_times.py            # both
    python benchmarks/book_times.py --build    # only the build
    python benchmarks/book_times.py --nbval    # only nbval

Cold means nothing cached: the build writes into a new temporary folder (no Sphinx environment to reuse),
and nbval runs with an empty inductor cache (PyTorch's own examples compile with inductor). Targets on
a 2-core machine: 3 minutes each. Prints the figures; exits 1 if a step fails, never on a slow one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 180.0


def jupyter_book() -> list[str]:
    script = Path(sys.executable).with_name("jupyter-book")
    return [str(script)] if script.exists() else ["jupyter-book"]


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, done


def cold_build() -> tuple[float, bool]:
    with tempfile.TemporaryDirectory(prefix="book-build-") as out:
        seconds, done = timed([*jupyter_book(), "build", "book/", "-W", "-n", "--keep-going", "--path-output", out])
        if done.returncode != 0:
            print(done.stdout[-3000:] + done.stderr[-3000:], file=sys.stderr)
        return seconds, done.returncode == 0


def nbval() -> tuple[float, bool, str]:
    with tempfile.TemporaryDirectory(prefix="inductor-cache-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        seconds, done = timed([sys.executable, "-m", "pytest", "book", "-q", "-p", "no:cacheprovider"], env)
        summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        if done.returncode != 0:
            print(done.stdout[-5000:] + done.stderr[-3000:], file=sys.stderr)
        return seconds, done.returncode == 0, summary


def report(what: str, seconds: float, ok: bool, extra: str = "") -> None:
    verdict = "ok" if ok else "FAILED"
    pace = "within" if seconds <= TARGET_S else "OVER"
    print(f"{what:32} {seconds:7.1f} s  ({pace} the {TARGET_S:.0f} s target, {verdict}){'  ' + extra if extra else ''}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="time only the cold build")
    parser.add_argument("--nbval", action="store_true", help="time only nbval")
    args = parser.parse_args()
    both = not (args.build or args.nbval)
    print(f"{os.cpu_count()} CPU cores, Python {sys.version.split()[0]}")
    ok = True
    if both or args.build:
        seconds, built = cold_build()
        report("cold build (-W -n --keep-going)", seconds, built)
        ok &= built
    if both or args.nbval:
        seconds, passed, summary = nbval()
        report("nbval (pytest --nbval book)", seconds, passed, summary)
        ok &= passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
