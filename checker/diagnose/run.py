"""`gbcheck diagnose`: every graph break in the learner's own code, grouped, with what to read and do.

Two ways in:
  a script      `gbcheck diagnose train.py -- --epochs 1` runs it as `python train.py --epochs 1`; every
                torch.compile call it makes is recorded (with Dynamo's eager backend unless
                --keep-backend: graph breaks are Dynamo's, so the backend does not change them).
  a callable    `gbcheck diagnose models.py:Block --init "64" --args "torch.randn(8, 64, 32, 32)"`
                compiles the function (or an instance of the nn.Module class) and calls it.

The run happens in a sandboxed child like every check. Breaks are grouped by graph-break id, most
frequent first; each group lists where it happened and how often, what it means, which fixes apply and
which chapter of the book teaches it. Breaks inside installed packages are grouped again by package
(diagnose_groups), each with the user's call that led there; `write_repros` writes a script per library
group that reproduces it from the library alone (diagnose_repro; diagnose_builders remembers which
library call built each model), and the report offers one only where it can be written. Rendering is
diagnose_render's, comparing two runs diagnose_compare's.
"""

from __future__ import annotations

import importlib
import os
import runpy
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from checker.diagnose.compare import load_run
from checker.diagnose.groups import BreakGroup, LibraryGroup, group_breaks, library_groups
from checker.diagnose.builders import BuilderLog
from checker.diagnose.repro import CallLog, describe_call, describe_value, repro_plan, write_repro
from checker.dynamo import engine
from checker.grading import sandbox
from checker.grading.trial import import_file

__all__ = ["BreakGroup", "DiagnoseResult", "LibraryGroup", "diagnose_target", "group_breaks", "write_repros"]


@dataclass
class DiagnoseResult:
    target: str
    graphs: int = 0
    ops: int = 0
    groups: list[BreakGroup] = field(default_factory=list)
    library: list[LibraryGroup] = field(default_factory=list)  # in-library breaks by package and id
    error: str = ""  # the target's own failure, if it stopped
    output: str = ""  # what it printed (the end of it)
    calls: list[dict[str, Any]] = field(default_factory=list)  # compiled calls that hit breaks (for --repro)

    @property
    def total_breaks(self) -> int:
        return sum(group.count for group in self.groups)

    @property
    def explained_breaks(self) -> int:
        """Breaks in a group the course explains (a note with a chapter or PyTorch docs section)."""
        return sum(group.count for group in self.groups if group.explained)

    def to_dict(self) -> dict[str, Any]:
        import torch

        return {"target": self.target, "torch": torch.__version__, "graphs": self.graphs, "ops": self.ops,
                "total_breaks": self.total_breaks, "explained_breaks": self.explained_breaks,
                "groups": [group.to_dict() for group in self.groups],
                "library": [lib.to_dict() for lib in self.library], "error": self.error}


# --- running (inside the sandboxed child) ----------------------------------------------------------

def _run_script(path: str, argv: list[str], keep_backend: bool) -> dict[str, Any]:
    import torch

    builders = BuilderLog(describe_value)  # which library call built each model, for --repro
    builders.install()
    with engine.recording() as rec:
        calls = CallLog(rec.breaks, builders)
        real_compile = torch.compile

        def recording_compile(model=None, **options):
            if not keep_backend:  # every torch.compile the script makes records its graphs, Dynamo-only
                options["backend"] = rec.backend
            if model is None:  # used as @torch.compile(...) with options
                return lambda fn: recording_compile(fn, **options)
            return calls.watch(model, real_compile(model, **options))

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
    return _payload(rec.graphs, rec.graph_breaks(), error, calls.calls)


def _run_callable(spec: str, init: str, args: str) -> dict[str, Any]:
    import torch

    file_part, _, name = spec.rpartition(":")
    target = _load_attribute(file_part, name)
    namespace = {"torch": torch}
    builders = BuilderLog(describe_value, rules={})
    if isinstance(target, type):  # built here: its arguments are known
        init_args = _evaluate(init, namespace)
        cls, target = target, target(*init_args)
        builders.remember(target, cls, init_args, {})
    call_args = _evaluate(args, namespace)
    focus = os.path.abspath(file_part) if file_part.endswith(".py") else None
    diagnosis = engine.diagnose(target, call_args, "default", focus_file=focus)
    error = _error_text(diagnosis.error) if diagnosis.error else ""
    call = {**describe_call(target, call_args, {}, builders.origin(target)),
            "breaks": [[gb.gb_type, gb.filename, gb.line] for gb in diagnosis.graph_breaks]}
    return _payload(diagnosis.graphs, diagnosis.graph_breaks, error, [call])


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


def _payload(graphs: list[engine.CapturedGraph], breaks: list[engine.GraphBreak], error: str,
             calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"graphs": len(graphs), "ops": sum(len(graph.ops) for graph in graphs),
            "breaks": [gb.to_dict() for gb in breaks], "error": error, "calls": calls}


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
    # The learner's own script, run on their behalf: it may write what it writes when run alone.
    outcome = sandbox.run_job(sandbox.Job(job, confine=False), limits)
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
    result.library = library_groups(result.groups)
    result.calls = payload["calls"]
    command = ["gbcheck", "diagnose", target, *(["--init", init] if init else []), *(["--args", args] if args else []),
               "--repro", "gb-repro", *(["--", *argv] if argv else [])]
    for lib in result.library:  # until --repro writes the script, the command that writes it, where it can
        call, lib.repro_note = repro_plan(lib.package, lib.gb_type, _library_files(result, lib), result.calls)
        lib.repro_command = shlex.join(command) if call else ""
    return result


def _library_files(result: DiagnoseResult, lib: LibraryGroup) -> set[str]:
    return {loc["file"] for group in result.groups if group.gb_id == lib.gb_id
            for loc in group.locations if loc["package"] == lib.package}


def run_or_load(side: str, argv: list[str] | None = None, **options: Any) -> dict[str, Any]:
    """One side of a comparison: a run's saved JSON (`--json` output), or a target to diagnose now."""
    if side.endswith(".json"):
        return load_run(side)
    return diagnose_target(side, argv, **options).to_dict()


def write_repros(result: DiagnoseResult, directory: str) -> None:
    """Write a repro script for each library group that can be rebuilt from its library alone."""
    for lib in result.library:
        lib.repro, lib.repro_note = write_repro(directory, lib.package, lib.version, lib.gb_id, lib.gb_type,
                                                _library_files(result, lib), result.calls)
        lib.repro_command = shlex.join(["python", lib.repro]) if lib.repro else ""
