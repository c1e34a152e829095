"""`gbcheck diagnose --compare BEFORE AFTER`: which breaks a change removed, which remain, which are new.

Each side is a diagnose run (a target) or the JSON a run printed (`--json`). Breaks are matched by id and
place: inside a library by its file in the package and line (the library did not change), in the user's
code by the text of the line, since an edit moves lines and BEFORE and AFTER may be different files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Change:
    gb_id: str | None
    gb_type: str
    where: str
    before: int  # times Dynamo reported it in BEFORE
    after: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Comparison:
    before: str
    after: str
    removed: list[Change] = field(default_factory=list)
    remaining: list[Change] = field(default_factory=list)
    new: list[Change] = field(default_factory=list)
    totals: tuple[int, int] = (0, 0)  # breaks before, after
    graphs: tuple[int, int] = (0, 0)
    errors: tuple[str, str] = ("", "")

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "totals": list(self.totals), "graphs": list(self.graphs),
                "errors": list(self.errors), "removed": [c.to_dict() for c in self.removed],
                "remaining": [c.to_dict() for c in self.remaining], "new": [c.to_dict() for c in self.new]}


def load_run(path: str) -> dict[str, Any]:
    """A run's JSON (the object `gbcheck diagnose --json` prints); ValueError with a reason if it is not one."""
    try:
        with open(path, encoding="utf-8") as source:
            data = json.load(source)
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read {path} as a diagnose JSON report: {err}") from None
    if not isinstance(data, dict) or "groups" not in data or "target" not in data:
        raise ValueError(f"{path} is not the JSON that `gbcheck diagnose --json` prints")
    return data


def _places(run: dict[str, Any]) -> dict[tuple[str, str], tuple[str | None, str, str, int]]:
    found: dict[tuple[str, str], tuple[str | None, str, str, int]] = {}
    for group in run["groups"]:
        for loc in group["locations"]:
            if loc.get("module_path"):
                where = f"{loc['module_path']}:{loc['line']}"
                key = where
            elif loc.get("source_line"):
                where = f"{loc['file'].rsplit('/', 1)[-1]}:{loc['line']}  {loc['source_line']}"
                key = " ".join(loc["source_line"].split())
            else:
                where = key = f"{loc['file'].rsplit('/', 1)[-1]}:{loc['line']}"
            ident = (group["gb_id"] or group["gb_type"], key)
            previous = found.get(ident)
            found[ident] = (group["gb_id"], group["gb_type"], where, loc["count"] + (previous[3] if previous else 0))
    return found


def compare(before: dict[str, Any], after: dict[str, Any]) -> Comparison:
    old, new = _places(before), _places(after)
    result = Comparison(before=before["target"], after=after["target"],
                        totals=(before.get("total_breaks", 0), after.get("total_breaks", 0)),
                        graphs=(before.get("graphs", 0), after.get("graphs", 0)),
                        errors=(before.get("error", ""), after.get("error", "")))
    for ident, (gb_id, gb_type, where, count) in old.items():
        if ident in new:
            result.remaining.append(Change(gb_id, gb_type, new[ident][2], count, new[ident][3]))
        else:
            result.removed.append(Change(gb_id, gb_type, where, count, 0))
    for ident, (gb_id, gb_type, where, count) in new.items():
        if ident not in old:
            result.new.append(Change(gb_id, gb_type, where, 0, count))
    for changes in (result.removed, result.remaining, result.new):
        changes.sort(key=lambda c: (-max(c.before, c.after), c.gb_id or ""))
    return result


def render_comparison(result: Comparison) -> str:
    lines = [f"{result.before} -> {result.after}: {result.totals[0]} -> {result.totals[1]} graph break(s), "
             f"{result.graphs[0]} -> {result.graphs[1]} graph(s)"]
    for side, error in zip(("before", "after"), result.errors):
        if error:
            lines.append(f"  {side} stopped with an error: {error}")
    for title, changes in (("Removed", result.removed), ("Remaining", result.remaining), ("New", result.new)):
        lines.append(f"{title} ({len(changes)}):")
        for c in changes:
            counts = f"x{c.before}" if title == "Removed" else f"x{c.after}" if title == "New" else f"x{c.before} -> x{c.after}"
            lines.append(f"  {c.gb_id or '(no id)'} {c.gb_type}  {counts}  {c.where}")
    if not (result.remaining or result.new):
        lines.append("Every graph break is gone.")
    return "\n".join(lines)
