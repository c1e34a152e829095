"""`check(...)` for notebooks: grade the cell where the learner edited an exercise.

    from checker.notebook import check
    check("cond-on-input", gated_residual)     # the cell that defines gated_residual is graded

The cell's whole source (imports, helpers, config lines) is written to a temporary file and graded by
`gbcheck check --json` in a fresh process: the notebook kernel has already run torch ops on many threads,
so it must not fork graders itself, and the learner's edits to torch in the kernel must not reach the
grader. The result renders as HTML in Jupyter and as the CLI's text elsewhere.
"""

from __future__ import annotations

import html
import inspect
import json
import linecache
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checker.report import CheckResult, Report, render_text
from checker.torch_support import check_supported

_STATUS_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#8250df", "skip": "#6e7781"}


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
            extra = (f"<p><b>Hint:</b> {html.escape(r.hint)}</p>"
                     f"<p>Read: <a href='{html.escape(r.chapter)}.html'>{html.escape(r.chapter)}</a></p>")
        return (f"<div class='gbcheck-report' style='border-left:4px solid {colour};padding:0.3em 0.8em'>"
                f"<p><b style='color:{colour}'>{verdict}</b> — <code>{html.escape(r.id)}</code> "
                f"({r.points}/{r.max_points} points)</p><p>{html.escape(r.message)}</p><ul>{rows}</ul>{extra}</div>")


def check(exercise_id: str, solution: Callable[..., Any] | str | os.PathLike, timeout: float = 120.0) -> NotebookReport:
    """Grade `solution` for an exercise: a function (its whole defining cell is graded), a path, or source text."""
    if refusal := check_supported():  # an unsupported torch: its one sentence, as an error report
        return NotebookReport(Report(exercise_id, "error", (), (), refusal, "", 0, 0))
    if callable(solution):
        source = _defining_source(solution)
    elif isinstance(solution, os.PathLike) or (isinstance(solution, str) and "\n" not in solution
                                               and solution.endswith(".py")):
        source = Path(solution).read_text(encoding="utf-8")
    else:
        source = str(solution)
    with tempfile.TemporaryDirectory(prefix="gbcheck-nb-") as folder:
        path = Path(folder) / "submission.py"
        path.write_text(source, encoding="utf-8")
        return NotebookReport(_run_checker(exercise_id, path, timeout))


def _defining_source(fn: Callable[..., Any]) -> str:
    """The whole cell (or file) that defined `fn`: the grader needs its imports and helpers too."""
    target = inspect.unwrap(fn)
    if not hasattr(target, "__code__"):  # a module or other callable object: where its class's forward lives
        target = getattr(type(target), "forward", type(target).__call__)
    code = target.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise ValueError(f"cannot find the source of {fn!r}; pass the file path or the source text instead")
    return "".join(lines)


def _run_checker(exercise_id: str, path: Path, timeout: float) -> Report:
    command = [sys.executable, "-m", "checker", "check", exercise_id, "--file", str(path), "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=Path(__file__).resolve().parent.parent)
        data = json.loads(done.stdout)
    except (subprocess.TimeoutExpired, ValueError) as err:
        message = f"the checker did not answer ({type(err).__name__}); its output: {getattr(err, 'stderr', '')}"
        return Report(id=exercise_id, status="error", checks=(CheckResult("eager-runs", "error", message),),
                      graph_breaks=(), message=message, file=str(path), points=0, max_points=0)
    data["checks"] = tuple(CheckResult(**c) for c in data["checks"])
    data["graph_breaks"] = tuple(data["graph_breaks"])
    return Report(**data)
