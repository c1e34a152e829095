"""Trials: what runs inside a sandboxed child to examine a file.

`run_trial` imports the file fresh, runs its entry on the calls it is given (by default the exercise's
example inputs) in one mode (eager, default or fullgraph) through the engine, and returns plain data: the
engine's account, the outputs (tensors and plain values only), what was printed during the calls, and
tampering findings; in default mode also the captured graphs as records the grader can replay
(replay.py). The grader turns trials into a verdict; nothing here decides pass or fail, and nothing here
is trusted by the grader beyond what it can check for itself.

`run_trials` runs every mode in one child, one after the other: about two thirds the cost of a child per
mode, as the later modes find Dynamo warm. Each mode starts as a fresh child would: the file is imported again,
and the process-wide settings a file commonly changes are put back first (`ProcessState`).
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import inspect
import io
import logging
import os
import random
import sys
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch._dynamo
import torch._functorch.config
import torch.fx.experimental._config
from torch._dynamo import eval_frame

from checker.course import draws
from checker.course.manifest import Exercise, build_call
from checker.dynamo import engine
from checker.grading import replay, tamper


TRIAL_MODES = ("eager", "fullgraph", "default")  # eager first: its output is the one a learner is shown


def run_trials(exercise: Exercise, path: str, seed: int) -> Iterator[dict[str, Any]]:
    """Examine `path` in every mode of TRIAL_MODES, in order, in this process; yields each trial.

    Every mode calls the fresh draws of `seed` (draws.py), each mode in an order of its own.
    """
    snapshot = tamper.Snapshot.take()  # before any learner code runs: every mode is judged against it
    fresh = draws.draws(exercise, seed)  # built before any learner code runs too
    orders = {mode: draws.call_order(len(fresh), seed, mode) for mode in TRIAL_MODES}
    state = ProcessState.save()
    for mode in TRIAL_MODES:
        state.restore()
        calls = [(fresh[i].args, fresh[i].kwargs) for i in orders[mode]]
        trial = run_trial(exercise, path, mode, snapshot, calls)
        trial["output_end"] = _output_position()
        yield trial


def run_trial(exercise: Exercise, path: str, mode: str, snapshot: tamper.Snapshot | None = None,
              calls: list[tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
              watch: bool = True) -> dict[str, Any]:
    """Examine `path` in `mode`; returns a dict of plain values and tensors (see module docstring).

    `watch=False` (course code only: the reference) skips the tamper snapshot and the graph records.
    """
    snapshot = snapshot or (tamper.Snapshot.take() if watch else None)  # before any learner code runs
    try:
        module = import_file(path)
    except BaseException as err:  # noqa: BLE001 - a broken file is a result, including SystemExit
        return {"mode": mode, "stage": "import", "error": _describe(err, path)}
    entry = getattr(module, exercise.entry, None)
    if entry is None or not callable(entry):
        found = "is not callable" if entry is not None else "is not defined"
        return {"mode": mode, "stage": "entry",
                "error": {"type": "MissingEntry", "message": f"`{exercise.entry}` {found} in the file.",
                          "filename": path, "line": None, "source_line": ""}}
    if calls is None:
        calls = [build_call(case, index) for index, case in enumerate(exercise.inputs)]
    calls = [(tuple(fresh_copy(a) for a in args), {k: fresh_copy(v) for k, v in kwargs.items()})
             for args, kwargs in calls]  # a function that changes its inputs in place changes no other mode's
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(_Tee(printed, sys.stdout)):
            diagnosis = engine.diagnose(entry, calls, mode, focus_file=path, config_baseline=snapshot.config if snapshot else None)
    except BaseException as err:  # noqa: BLE001 - e.g. SystemExit raised from inside the entry
        return {"mode": mode, "stage": "call", "error": _describe(err, path)}
    findings = snapshot.findings(exercise.allowed_config, entry, diagnosis.config_changed,
                                 diagnosis.stances) if snapshot else []
    trial = {
        "mode": mode,
        "stage": "done",
        "diagnosis": diagnosis.to_dict(),
        "outputs": [_plain(output) for output in diagnosis.outputs],
        "stdout": printed.getvalue(),
        "tampering": findings,
    }
    if mode == "default" and watch:
        trial["graphs"] = [_graph_record(graph) for graph in diagnosis.graphs]
        trial["parameters"] = _parameters(entry)
    return trial


def _graph_record(graph: engine.CapturedGraph) -> dict[str, Any]:
    try:
        return replay.graph_record(graph.module, graph.example_inputs)
    except replay.NotReplayable as err:
        return {"unreplayable": str(err)}


def _parameters(entry: Any) -> list[str]:
    try:  # a module is called through its forward, whose frame Dynamo compiles
        return list(inspect.signature(getattr(entry, "forward", entry) if isinstance(entry, torch.nn.Module) else entry).parameters)
    except (TypeError, ValueError):
        return []


def fresh_copy(value: Any) -> Any:
    """A tensor cloned (a call that changes its inputs in place changes no one else's); anything else as is."""
    return value.clone() if isinstance(value, torch.Tensor) else value


def import_file(path: str, prefix: str = "submission_") -> Any:
    """Import a .py file as a fresh module named prefix + its stem (replacing any earlier import of it)."""
    name = prefix + os.path.splitext(os.path.basename(path))[0]
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


def output_difference(got: Any, want: Any, rtol: float, atol: float) -> str | None:
    """Two outputs as `_plain` gives them: None when equal (tensors: torch.testing.assert_close, strict shape
    and dtype); else why not."""
    if isinstance(want, torch.Tensor) or isinstance(got, torch.Tensor):
        if not (isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor)):
            return f"expected a {type(want).__name__}, got a {type(got).__name__}"
        try:
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as err:
            return " ".join(str(err).split())[:400]
        return None
    if isinstance(want, dict) and isinstance(got, dict) and want.keys() == got.keys():
        for key in want:
            inner = output_difference(got[key], want[key], rtol, atol)
            if inner:
                return inner
        return None
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for got_item, want_item in zip(got, want):
            inner = output_difference(got_item, want_item, rtol, atol)
            if inner:
                return inner
        return None
    return None if got == want else f"expected {want!r:.120}, got {got!r:.120}"


class _Tee(io.TextIOBase):
    """Keeps a copy of what the calls print, and still prints it."""

    def __init__(self, copy: io.StringIO, original: Any):
        self.copy, self.original = copy, original

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.original.write(text)

    def flush(self) -> None:
        self.original.flush()


def _output_position() -> int | None:
    """How many bytes this process has printed so far, when its output goes to a file (as in a sandbox)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return os.lseek(1, 0, os.SEEK_CUR)
    except OSError:
        return None


_CONFIGS = (torch._dynamo.config, torch._functorch.config, torch.fx.experimental._config)
_set_stance = eval_frame._set_stance  # taken before learner code runs, like the engine's references


@dataclass
class ProcessState:
    """Process-wide settings a learner's file may change, saved to be put back between trials.

    What a file changes when imported it changes again in every trial; what it changes while running
    (a config flag set inside the function, a handler added to a logger) must not carry over into the
    next mode's trial and change its verdict.
    """

    configs: list[dict[str, Any]]
    stance: eval_frame.DynamoStance
    loggers: dict[str, tuple[list[Any], int, bool, bool]]  # name -> handlers, level, propagate, disabled
    logging_disabled: int
    warning_filters: list[Any]
    rng: tuple[torch.Tensor, Any]
    default_dtype: torch.dtype
    grad_enabled: bool

    @classmethod
    def save(cls) -> ProcessState:
        loggers = {name: logger for name, logger in logging.Logger.manager.loggerDict.items()
                   if isinstance(logger, logging.Logger)}
        loggers[""] = logging.getLogger()  # the root logger
        return cls(
            configs=[config.get_config_copy() for config in _CONFIGS],
            stance=eval_frame._stance,
            loggers={name: (list(logger.handlers), logger.level, logger.propagate, logger.disabled)
                     for name, logger in loggers.items()},
            logging_disabled=logging.root.manager.disable,
            warning_filters=list(warnings.filters),
            rng=(torch.get_rng_state(), random.getstate()),
            default_dtype=torch.get_default_dtype(),
            grad_enabled=torch.is_grad_enabled(),
        )

    def restore(self) -> None:
        for config, saved in zip(_CONFIGS, self.configs):
            for key in engine.config_differences(saved, config):  # only those: setting a key overrides it
                if key in saved:
                    setattr(config, key, copy.deepcopy(saved[key]))
        _set_stance(self.stance)
        for name, saved in self.loggers.items():
            logger = logging.getLogger(name or None)
            if (logger.handlers, logger.level, logger.propagate, logger.disabled) != saved:  # hundreds are not
                handlers, level, logger.propagate, logger.disabled = saved
                logger.handlers[:] = handlers
                logger.setLevel(level)  # also clears every logger's cached level
        for name, logger in list(logging.Logger.manager.loggerDict.items()):  # loggers the file created
            if name not in self.loggers and not name.startswith("torch") and isinstance(logger, logging.Logger):
                logger.handlers.clear()
        logging.disable(self.logging_disabled)
        warnings.filters[:] = self.warning_filters
        getattr(warnings, "_filters_mutated", lambda: None)()  # forget which warnings were shown
        torch.set_rng_state(self.rng[0])
        random.setstate(self.rng[1])
        torch.set_default_dtype(self.default_dtype)
        torch.set_grad_enabled(self.grad_enabled)
