"""One trial: what runs inside a sandboxed child to examine a file in one mode.

`run_trial` imports the file fresh, runs its entry on every input of the exercise in one mode (eager,
default or fullgraph) through the engine, and returns plain data: the engine's account, the outputs
(tensors and plain values only), what was printed during the calls, and tampering findings. The grader
turns trials into a verdict; nothing here decides pass or fail.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import traceback
from typing import Any

import torch

from checker import engine, tamper
from checker.manifest import Exercise, build_call


def run_trial(exercise: Exercise, path: str, mode: str) -> dict[str, Any]:
    """Examine `path` in `mode`; returns a dict of plain values and tensors (see module docstring)."""
    snapshot = tamper.Snapshot.take()  # before any learner code runs
    try:
        module = _import_file(path)
    except BaseException as err:  # noqa: BLE001 - a broken file is a result, including SystemExit
        return {"mode": mode, "stage": "import", "error": _describe(err, path)}
    entry = getattr(module, exercise.entry, None)
    if entry is None or not callable(entry):
        found = "is not callable" if entry is not None else "is not defined"
        return {"mode": mode, "stage": "entry",
                "error": {"type": "MissingEntry", "message": f"`{exercise.entry}` {found} in the file.",
                          "filename": path, "line": None, "source_line": ""}}
    calls = [build_call(case, index) for index, case in enumerate(exercise.inputs)]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(_Tee(printed, sys.stdout)):
            diagnosis = engine.diagnose(entry, calls, mode, focus_file=path, config_baseline=snapshot.config)
    except BaseException as err:  # noqa: BLE001 - e.g. SystemExit raised from inside the entry
        return {"mode": mode, "stage": "call", "error": _describe(err, path)}
    findings = snapshot.findings(exercise.allowed_config, entry, diagnosis.config_changed, diagnosis.stances)
    return {
        "mode": mode,
        "stage": "done",
        "diagnosis": diagnosis.to_dict(),
        "outputs": [_plain(output) for output in diagnosis.outputs],
        "stdout": printed.getvalue(),
        "tampering": findings,
    }


def _import_file(path: str) -> Any:
    name = "submission_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _describe(err: BaseException, path: str) -> dict[str, Any]:
    """An exception as plain data, located at the learner's line when there is one."""
    if isinstance(err, SyntaxError) and err.filename == path:
        return {"type": "SyntaxError", "message": err.msg, "filename": path, "line": err.lineno,
                "source_line": (err.text or "").strip()}
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == path]
    where = frames[-1] if frames else None
    message = str(err) if not isinstance(err, SystemExit) else f"the file called sys.exit({err.code!r})"
    return {"type": type(err).__name__, "message": message, "filename": path if where else None,
            "line": where.lineno if where else None, "source_line": (where.line or "") if where else ""}


def _plain(value: Any) -> Any:
    """Outputs reduced to what the grader can load safely: tensors, numbers, strings, containers."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").clone().as_subclass(torch.Tensor)
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return {"__sequence__": type(value).__name__, "items": [_plain(item) for item in value]}
    if isinstance(value, dict):
        return {"__mapping__": [[str(key), _plain(item)] for key, item in value.items()]}
    return {"__repr__": f"{type(value).__name__}: {value!r}"[:500]}


class _Tee(io.TextIOBase):
    """Keeps a copy of what the calls print, and still prints it."""

    def __init__(self, copy: io.StringIO, original: Any):
        self.copy, self.original = copy, original

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.original.write(text)

    def flush(self) -> None:
        self.original.flush()
