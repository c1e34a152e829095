"""Results of grading: small frozen records with a stable JSON form, rendered as text for people.

The JSON form is a contract (`gbcheck check --json`): {"id", "status", "checks": [{"name", "status",
"message"}], "graph_breaks": [{"gb_id", "gb_type", "line", ...}], "message", ...}. Add keys; never
rename or remove one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from checker.course.resolver import chapter_link

PASS, FAIL, ERROR, SKIP = "pass", "fail", "error", "skip"


@dataclass(frozen=True)
class CheckResult:
    """One named check of the strict definition of "fixed"."""

    name: str
    status: str  # pass | fail | error | skip
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message}


@dataclass(frozen=True)
class Report:
    """The verdict on one file for one exercise."""

    id: str
    status: str  # pass | fail | error | skip (the manifest declares the exercise cannot be done on this torch)
    checks: tuple[CheckResult, ...]
    graph_breaks: tuple[dict[str, Any], ...]  # engine.GraphBreak.to_dict() records, plus fullgraph's error
    message: str  # one paragraph: what is wrong and what to do next
    file: str
    points: int
    max_points: int
    hint: str = ""  # the exercise's next hint, when not passing
    chapter: str = ""  # the book page to read
    output: str = ""  # what the file printed (stdout and stderr), for the learner's eyes only
    seed: str = ""  # the check's seed ("TRIAL-REPLAY"): `gbcheck check --seed` draws the same inputs again
    expected: str = ""  # one line when the file fails as the manifest declares the unfixed exercise does

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "checks": [check.to_dict() for check in self.checks],
            "graph_breaks": [dict(gb) for gb in self.graph_breaks],
            "message": self.message,
            "file": self.file,
            "points": self.points,
            "max_points": self.max_points,
            "hint": self.hint,
            "chapter": self.chapter,
            "output": self.output,
            "seed": self.seed,
            "expected": self.expected,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """The report `to_dict` gave (from a grader process); unknown keys are dropped."""
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        known["checks"] = tuple(CheckResult(**check) for check in known.get("checks", ()))
        known["graph_breaks"] = tuple(known.get("graph_breaks", ()))
        return cls(**known)

    @property
    def failing(self) -> list[CheckResult]:
        return [check for check in self.checks if check.status in (FAIL, ERROR)]


def plain_data(value: Any, depth: int = 0) -> Any:
    """A value the checked process sent, as JSON's own types, before a report carries it: what the child put
    in a record (a tensor, an object of its own) must not break a face that writes the report as JSON."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:4000]
    if depth < 6 and isinstance(value, (list, tuple)):
        return [plain_data(item, depth + 1) for item in value[:200]]
    if depth < 6 and isinstance(value, dict):
        return {str(key)[:200]: plain_data(item, depth + 1) for key, item in list(value.items())[:200]}
    return f"<{type(value).__name__}>"


# --- text ------------------------------------------------------------------------------------------

_COLOURS = {PASS: "32", FAIL: "31", ERROR: "35", SKIP: "90", "bold": "1", "dim": "2", "title": "36"}
_MARKS = {PASS: "✓", FAIL: "✗", ERROR: "!", SKIP: "-"}


def use_colour(stream: Any = None) -> bool:
    stream = stream or sys.stdout
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def paint(text: str, style: str, colour: bool) -> str:
    return f"\033[{_COLOURS[style]}m{text}\033[0m" if colour else text


def render_text(report: Report, colour: bool = False, book_url: str = "") -> str:
    """The learner's view: verdict line first, then the failing check, then every check, then help."""
    lines = []
    verdict = {PASS: "PASSED", FAIL: "NOT YET", ERROR: "ERROR", SKIP: "SKIPPED"}[report.status]
    lines.append(paint(f"{verdict}  {report.id}", report.status, colour)
                 + paint(f"  ({report.points}/{report.max_points} points, {report.file})", "dim", colour))
    if report.expected:
        lines.append(paint(report.expected, "title", colour))
    lines.append("")
    lines.append(_wrap(report.message))
    lines.append("")
    for check in sorted(report.checks, key=lambda c: c.status not in (FAIL, ERROR)):
        mark = paint(_MARKS[check.status], check.status, colour)
        lines.append(f" {mark} {check.name}: {_indent_rest(check.message)}")
    if report.seed:
        lines.append(paint(f"   inputs drawn with seed {report.seed} (--seed {report.seed} draws them again)", "dim", colour))
    if report.graph_breaks:
        lines.append("")
        lines.append(paint("Graph breaks", "bold", colour))
        for gb in report.graph_breaks:
            where = gb.get("place") or (f"line {gb['line']}" if gb.get("line") else "?")
            lines.append(f"  {gb.get('gb_id') or '(no id)'}  {gb['gb_type']}  at {where}")
            if gb.get("source_line"):
                lines.append(paint(f"      {gb['source_line']}", "dim", colour))
            if gb.get("meaning"):
                lines.append(f"      {gb['meaning']}")
    if report.status not in (PASS, SKIP):
        if report.hint:
            lines.append("")
            lines.append(paint("Hint: ", "title", colour) + _indent_rest(report.hint, 6))
        if report.chapter:
            lines.append(paint("Read: ", "title", colour) + chapter_link(report.chapter, book_url))
        lines.append(paint(f"More hints: gbcheck hint {report.id}", "dim", colour))
    return "\n".join(lines)


def _wrap(text: str, width: int = 100) -> str:
    import textwrap

    return "\n".join(textwrap.fill(part, width) if part else "" for part in text.split("\n"))


def _indent_rest(text: str, spaces: int = 5) -> str:
    return text.replace("\n", "\n" + " " * spaces)
