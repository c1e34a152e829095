"""`gbcheck diagnose`: every graph break in the learner's own code, grouped, with what to read and do.

Two ways in:
  a script      `gbcheck diagnose train.py -- --epochs 1` runs it as `python train.py --epochs 1`; every
                torch.compile call it makes is recorded (with Dynamo's eager backend unless
                --keep-backend: graph breaks are Dynamo's, so the backend does not change them).
  a callable    `gbcheck diagnose models.py:Block --init "64" --args "torch.randn(8, 64, 32, 32)"`
                compiles the function (or an instance of the nn.Module class) and calls it.

The run happens in a sandboxed child like every check. Breaks are grouped by graph-break id, most
frequent first; each group lists where it happened and how often, what it means, which fixes apply and
which chapter of the book teaches it.
"""

from __future__ import annotations

import html
import importlib
import os
import runpy
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from checker import engine, registry, sandbox
from checker.trial import import_file


@dataclass
class BreakGroup:
    gb_id: str | None
    gb_type: str
    count: int  # times Dynamo reported it, over every location
    locations: list[dict[str, Any]]  # {"file", "line", "source_line", "count"}, most frequent first
    meaning: str
    fixes: list[str]
    chapter: str
    page: str | None
    in_library: bool  # every location is inside the standard library or an installed package

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class DiagnoseResult:
    target: str
    graphs: int = 0
    ops: int = 0
    groups: list[BreakGroup] = field(default_factory=list)
    error: str = ""  # the target's own failure, if it stopped
    output: str = ""  # what it printed (the end of it)

    @property
    def total_breaks(self) -> int:
        return sum(group.count for group in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "graphs": self.graphs, "ops": self.ops, "total_breaks": self.total_breaks,
                "groups": [group.to_dict() for group in self.groups], "error": self.error}


# --- running (inside the sandboxed child) ----------------------------------------------------------

def _run_script(path: str, argv: list[str], keep_backend: bool) -> dict[str, Any]:
    import torch

    with engine.recording() as rec:
        if not keep_backend:  # every torch.compile the script makes records its graphs, Dynamo-only
            real_compile = torch.compile

            def recording_compile(model=None, **options):
                options["backend"] = rec.backend
                return real_compile(model, **options) if model is not None else real_compile(**options)

            torch.compile = recording_compile
        sys.argv = [path, *argv]
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        error = ""
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as done:
            if done.code not in (0, None):
                error = f"the script exited with status {done.code}"
        except Exception as err:  # noqa: BLE001 - the script's failure is part of the report
            error = _error_text(engine.call_error(err, None))
    return _payload(rec.graphs, rec.graph_breaks(), error)


def _run_callable(spec: str, init: str, args: str) -> dict[str, Any]:
    import torch

    file_part, _, name = spec.rpartition(":")
    target = _load_attribute(file_part, name)
    namespace = {"torch": torch}
    if isinstance(target, type):
        target = target(*_evaluate(init, namespace))
    call_args = _evaluate(args, namespace)
    focus = os.path.abspath(file_part) if file_part.endswith(".py") else None
    diagnosis = engine.diagnose(target, call_args, "default", focus_file=focus)
    error = _error_text(diagnosis.error) if diagnosis.error else ""
    return _payload(diagnosis.graphs, diagnosis.graph_breaks, error)


def _error_text(failure: engine.CallError) -> str:
    where = f" at {failure.filename}:{failure.line}" if failure.filename else ""
    return f"{failure.type}{where}: {failure.message.splitlines()[0] if failure.message else ''}"


def _load_attribute(module_or_file: str, name: str) -> Any:
    if module_or_file.endswith(".py"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(module_or_file)))  # for its own imports
        module = import_file(module_or_file, prefix="diagnosed_")
    else:
        module = importlib.import_module(module_or_file)
    return getattr(module, name)


def _evaluate(expression: str, namespace: dict[str, Any]) -> tuple[Any, ...]:
    """The user's own argument expression (their code, run in their sandboxed child), as a tuple."""
    if not expression.strip():
        return ()
    value = eval(expression, namespace)  # noqa: S307 - the user's own input, like a line of their script
    return value if isinstance(value, tuple) else (value,)


def _payload(graphs: list[engine.CapturedGraph], breaks: list[engine.GraphBreak], error: str) -> dict[str, Any]:
    return {"graphs": len(graphs), "ops": sum(len(graph.ops) for graph in graphs),
            "breaks": [gb.to_dict() for gb in breaks], "error": error}


# --- grouping and reporting (in the grader) --------------------------------------------------------

def diagnose_target(target: str, argv: list[str] | None = None, init: str = "", args: str = "",
                    keep_backend: bool = False, limits: sandbox.Limits = sandbox.Limits(timeout=600)) -> DiagnoseResult:
    """Run a script (path.py) or a callable (path.py:name or module:name) and group its graph breaks."""
    sandbox.prepare()
    engine.warm_up()
    if ":" in target and not os.path.exists(target):
        job = lambda: _run_callable(target, init, args)  # noqa: E731
    else:
        if not os.path.isfile(target):
            return DiagnoseResult(target=target, error=f"there is no file {target}")
        job = lambda: _run_script(os.path.abspath(target), argv or [], keep_backend)  # noqa: E731
    outcome = sandbox.run_job(job, limits)
    result = DiagnoseResult(target=target, output=outcome.output[-4000:])
    if outcome.payload is None:
        result.error = f"the run stopped: {outcome.problem}"
        tail = outcome.output.strip().splitlines()[-1:] if outcome.output.strip() else []
        if tail:
            result.error += f" Last output: {tail[0]}"
        return result
    payload = outcome.payload
    result.graphs, result.ops, result.error = payload["graphs"], payload["ops"], payload["error"]
    result.groups = group_breaks(payload["breaks"])
    return result


def group_breaks(breaks: list[dict[str, Any]]) -> list[BreakGroup]:
    by_kind: dict[tuple[str | None, str], list[dict[str, Any]]] = defaultdict(list)
    for gb in breaks:
        by_kind[(gb["gb_id"], gb["gb_type"])].append(gb)
    groups = []
    for (gb_id, gb_type), found in by_kind.items():
        note = registry.course_note(gb_id)
        first = found[0]
        locations = sorted(({"file": gb["filename"], "line": gb["line"], "source_line": gb["source_line"],
                             "count": gb["count"]} for gb in found), key=lambda loc: -loc["count"])
        groups.append(BreakGroup(
            gb_id=gb_id, gb_type=gb_type, count=sum(gb["count"] for gb in found), locations=locations,
            meaning=note.meaning if note else first.get("explanation", ""),
            fixes=[note.fix] if note else list(first.get("hints", [])),
            chapter=note.chapter if note else "", page=registry.gb_page(gb_id),
            in_library=all(_in_library(loc["file"]) for loc in locations)))
    # The user's own lines first: a break inside a library is usually the echo of a call listed above.
    return sorted(groups, key=lambda group: (group.in_library, -group.count, group.gb_id or ""))


def _in_library(path: str) -> bool:
    return "site-packages" in path or "dist-packages" in path or not engine.is_user_file(path)


def render_text(result: DiagnoseResult) -> str:
    lines = [f"{result.target}: {result.graphs} graph(s) with {result.ops} op(s), "
             f"{result.total_breaks} graph break(s) of {len(result.groups)} kind(s)"]
    if result.error:
        lines.append(f"  it stopped with an error: {result.error}")
    for number, group in enumerate(result.groups, start=1):
        lines.append("")
        lines.append(f"{number}. {group.gb_id or '(no id)'}  {group.gb_type}  x{group.count}")
        for loc in group.locations:
            lines.append(f"     {_short(loc['file'])}:{loc['line']}  x{loc['count']}  {loc['source_line']}")
        if group.in_library:
            lines.append("   Inside library code: often a consequence of a call of yours listed above.")
        if group.meaning:
            lines.append(f"   What it means: {group.meaning}")
        for fix in group.fixes:
            lines.append(f"   What to do: {fix}")
        if group.chapter:
            lines.append(f"   Read: book/{group.chapter}.ipynb")
        if group.page:
            lines.append(f"   torch's page: {group.page}")
    if not result.groups and not result.error:
        lines.append("No graph breaks: everything compiled went into the graphs.")
    return "\n".join(lines)


def render_html(result: DiagnoseResult) -> str:
    """One self-contained page (inline style, no scripts, no external resources) to share."""
    rows = []
    for group in result.groups:
        where = "".join(f"<li><code>{html.escape(_short(loc['file']))}:{loc['line']}</code> ×{loc['count']} "
                        f"<code>{html.escape(loc['source_line'])}</code></li>" for loc in group.locations)
        fixes = "".join(f"<p><b>What to do:</b> {html.escape(fix)}</p>" for fix in group.fixes)
        chapter = f"<p><b>Read:</b> the chapter <i>{html.escape(group.chapter)}</i></p>" if group.chapter else ""
        page = f"<p><a href='{html.escape(group.page)}'>torch's page on {html.escape(group.gb_id or '')}</a></p>" \
            if group.page else ""
        library = "<p><i>Inside library code: often a consequence of a call of yours listed above.</i></p>" \
            if group.in_library else ""
        rows.append(f"<section><h2>{html.escape(group.gb_id or '(no id)')} — {html.escape(group.gb_type)} "
                    f"<small>×{group.count}</small></h2><ul>{where}</ul>"
                    f"{library}<p><b>What it means:</b> {html.escape(group.meaning)}</p>{fixes}{chapter}{page}</section>")
    error = f"<p class='error'>It stopped with an error: {html.escape(result.error)}</p>" if result.error else ""
    body = "".join(rows) or "<p>No graph breaks.</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Graph breaks in {html.escape(result.target)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}}
section{{border-left:4px solid #cf222e;padding:0 1em;margin:1.5em 0}}code{{background:#f3f3f3;padding:0 .2em}}
small{{color:#666}}.error{{color:#8250df}}</style></head><body>
<h1>Graph breaks in <code>{html.escape(result.target)}</code></h1>
<p>{result.graphs} graph(s) with {result.ops} operation(s); {result.total_breaks} graph break(s) of
{len(result.groups)} kind(s), most frequent first.</p>{error}{body}</body></html>
"""


def _short(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return relative if not relative.startswith("..") else path
