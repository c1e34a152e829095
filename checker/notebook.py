"""The course in a notebook: the one module the book's cells and a reader's own notebook import.

    from checker.notebook import check, course_display, diagnose
    course_display()                           # torch's errors and logs as the book shows them
    print(diagnose(fn, (x,), "default"))       # the graphs and graph breaks of one call
    check("cond-on-input", gated_residual)     # the cell that defines gated_residual is graded

`check` writes the cell's whole source (imports, helpers, config lines) to a temporary file and has it
graded by a grader process this kernel starts once and keeps (`checker.service`): the kernel has already
run torch ops on many threads, so it must not fork graders itself, and the learner's edits to torch in the
kernel must not reach the grader. The first check waits for the grader to start (a few seconds); later
ones take about a second. The result renders as HTML in Jupyter and as the CLI's text elsewhere.
"""

from __future__ import annotations

import atexit
import html
import inspect
import json
import linecache
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from checker.course.resolver import chapter_link
from checker.display import course_display
from checker.dynamo.cells import cell_name
from checker.dynamo.torch_support import check_supported
from checker.grading.report import CheckResult, Report, render_text

__all__ = ["check", "course_display", "diagnose"]

_STATUS_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#8250df", "skip": "#6e7781"}
_START_SECONDS = 120.0  # importing torch and warming Dynamo up, on a slow machine


class NotebookReport:
    """A Report that shows itself in Jupyter."""

    def __init__(self, report: Report):
        self.report = report

    @property
    def passed(self) -> bool:
        return self.report.status == "pass"

    def __repr__(self) -> str:
        return render_text(self.report)

    def _repr_html_(self) -> str:
        r = self.report
        colour = _STATUS_COLOURS[r.status]
        verdict = {"pass": "Passed", "fail": "Not yet", "error": "Error", "skip": "Skipped"}[r.status]
        rows = "".join(
            f"<li><b style='color:{_STATUS_COLOURS[c.status]}'>{c.status}</b> <code>{html.escape(c.name)}</code>: "
            f"{html.escape(c.message)}</li>" for c in sorted(r.checks, key=lambda c: c.status not in ("fail", "error")))
        extra = ""
        if r.status != "pass":
            extra = ((f"<p><b>Hint:</b> {html.escape(r.hint)}</p>" if r.hint else "")
                     + f"<p>Read: <a href='{html.escape(chapter_link(r.chapter))}'>{html.escape(r.chapter)}</a></p>")
        expected = f"<p><i>{html.escape(r.expected)}</i></p>" if r.expected else ""
        return (f"<div class='gbcheck-report' style='border-left:4px solid {colour};padding:0.3em 0.8em'>"
                f"<p><b style='color:{colour}'>{verdict}</b> — <code>{html.escape(r.id)}</code> "
                f"({r.points}/{r.max_points} points)</p>{expected}<p>{html.escape(r.message)}</p><ul>{rows}</ul>"
                f"{extra}</div>")


def check(exercise_id: str, solution: Callable[..., Any] | str | os.PathLike, timeout: float = 60.0) -> NotebookReport:
    """Grade `solution` for an exercise: a function (its whole defining cell is graded), a path, or source text.

    `timeout` is the limit for each mode of the check, as `gbcheck check --timeout`.
    """
    if refusal := check_supported():  # an unsupported torch: its one sentence, as an error report
        return NotebookReport(_error_report(exercise_id, Path(), refusal))
    if callable(solution):
        source, defined_in = _defining_source(solution)
        shown_as = cell_name(defined_in) or defined_in  # a cell as its prompt names it: Cell In[7]
    elif isinstance(solution, os.PathLike) or (isinstance(solution, str) and "\n" not in solution
                                               and solution.endswith(".py")):
        source = Path(solution).read_text(encoding="utf-8")
        shown_as = str(solution)
    else:
        source, shown_as = str(solution), "the source text"
    with tempfile.TemporaryDirectory(prefix="gbcheck-nb-") as folder:
        path = Path(folder) / "submission.py"
        path.write_text(source, encoding="utf-8")
        report = _GRADER.grade(exercise_id, path, timeout)
    # The report names what the reader gave, not the temporary copy the grader read.
    return NotebookReport(replace(report, file=shown_as) if shown_as and report.file == str(path) else report)


def _defining_source(fn: Callable[..., Any]) -> tuple[str, str]:
    """The whole cell (or file) that defined `fn`, and its file name: the grader needs its imports and helpers too."""
    target = inspect.unwrap(fn)
    if not hasattr(target, "__code__"):  # a module or other callable object: where its class's forward lives
        target = getattr(type(target), "forward", type(target).__call__)
    code = target.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise ValueError(f"cannot find the source of {fn!r}; pass the file path or the source text instead")
    return "".join(lines), code.co_filename


class _Grader:
    """The kernel's grader process (`python -m checker.service`), started on first use and restarted
    when it dies or stops answering."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.answers: queue.Queue[str | None] = queue.Queue()
        self.log: Any = None
        self.lock = threading.Lock()

    def grade(self, exercise_id: str, path: Path, timeout: float) -> Report:
        with self.lock:
            started = self.process is not None and self.process.poll() is None
            if not started:
                self._start()
            # Three modes, each within `timeout`, plus the reference on first use and, the first time, startup.
            wait = 4 * timeout + (0 if started else _START_SECONDS)
            request = {"id": exercise_id, "file": str(path), "timeout": timeout}
            try:
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
                line = self.answers.get(timeout=wait)
            except (OSError, queue.Empty):
                line = None
            if line is None:
                return self._failed(exercise_id, path, wait)
        data = json.loads(line)
        if "problem" in data:
            return _error_report(exercise_id, path, f"The checker cannot grade this: {data['problem']}")
        return Report.from_dict(data)

    def _start(self) -> None:
        self.stop()
        self.answers = queue.Queue()
        self.log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.process = subprocess.Popen([sys.executable, "-m", "checker.service"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=os.getcwd())
        threading.Thread(target=_read_lines, args=(self.process.stdout, self.answers), daemon=True).start()

    def _failed(self, exercise_id: str, path: Path, waited: float) -> Report:
        alive = self.process is not None and self.process.poll() is None
        self.stop()
        self.log.seek(0)
        said = self.log.read()[-2000:].strip()
        why = f"did not answer within {waited:.0f} s" if alive else "stopped"
        return _error_report(exercise_id, path, f"The checker {why}; it starts afresh on the next check."
                             + (f" It said:\n{said}" if said else ""))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


def _read_lines(stream, answers: queue.Queue) -> None:
    for line in stream:
        answers.put(line)
    answers.put(None)  # the grader is gone


def _error_report(exercise_id: str, path: Path, message: str) -> Report:
    return Report(id=exercise_id, status="error", checks=(CheckResult("eager-runs", "error", message),),
                  graph_breaks=(), message=message, file=str(path), points=0, max_points=0)


_GRADER = _Grader()
atexit.register(_GRADER.stop)


def __getattr__(name: str) -> Any:
    # `diagnose` is the engine's, imported on first use: importing this module stays light (no Dynamo), so
    # `check` can still refuse an unsupported torch in one sentence.
    if name == "diagnose":
        from checker.dynamo.engine import diagnose

        return diagnose
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
