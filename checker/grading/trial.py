"""Trials: what runs inside a sandboxed child to examine a file.

`run_trial` imports the file fresh, runs its entry on the calls it is given (by default the exercise's
example inputs) in one mode (eager, default or fullgraph) through the engine, and returns plain data: the
engine's account, the outputs (tensors and plain values only), what was printed during the calls, and
tampering findings; in default mode also the captured graphs as records the grader can replay
(replay.py). The grader turns trials into a verdict; nothing here decides pass or fail, and nothing here
is trusted by the grader beyond what it can check for itself.

`run_trials` runs every mode in one child, one after the other: about two thirds the cost of a child per
mode, as the later modes find Dynamo warm. Each mode starts as a fresh child would: the file is imported again,
and the process-wide settings a file commonly changes are put back first (`ProcessState`). A file that
registers operators runs each mode in a process forked for it instead, importing the file once, as a real
program does (`registers_operators`).
"""

from __future__ import annotations

import contextlib
import copy
import gc
import importlib.util
import io
import logging
import os
import random
import re
import signal
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
from checker.grading import code_guard, guard_bounds, observe, replay, sandbox, tamper
from checker.grading.plain import copied_call, output_difference, plain, tensors_in


TRIAL_MODES = ("eager", "fullgraph", "default")  # eager first: its output is the one a learner is shown


def run_trials(exercise: Exercise, path: str, seed: int,
               probes: list[draws.Draw] = ()) -> Iterator[dict[str, Any]]:
    """Examine `path` in every mode of TRIAL_MODES, in order, in this process; yields each trial, then what
    `run_probes` makes of the draws past the bounds the file tests (`probes`, from its text: bound_probes.py, and
    those the fullgraph trial's guards show: guard_bounds.py), or {"stage": "none"} where there are none.

    Every mode calls the fresh draws of `seed` (draws.py), each mode in an order of its own.
    """
    snapshot = tamper.Snapshot.take()  # before any learner code runs: every mode is judged against it
    fresh = draws.draws(exercise, seed)  # built before any learner code runs too
    orders = {mode: draws.call_order(len(fresh), seed, mode) for mode in TRIAL_MODES}
    own_process = registers_operators(path)
    untrained = draws.untrained_calls(len(orders["eager"]), seed)
    state, growths = ProcessState.save(), []
    for mode in TRIAL_MODES:
        state.restore()
        calls = [(fresh[i].args, fresh[i].kwargs) for i in orders[mode]]
        if own_process:
            trial = _in_own_process(lambda: run_trial(exercise, path, mode, snapshot, calls, untrained=untrained))
        else:
            trial = run_trial(exercise, path, mode, snapshot, calls, untrained=untrained)
            trial["output_end"] = _output_position()
        if mode == "fullgraph":
            growths = trial.get("growths") or []
        yield trial
    # Past the bounds the text tests (`probes`, from the grader) and those the fullgraph trial's guards show, each
    # for every case (a graph compiled for one case serves the others its guards let through); the grader rebuilds
    # them from what this sends
    guarded = [[case, places] for places in {repr(p): p for _, p in growths}.values()
               for case in range(len(exercise.inputs))]
    if guarded and not own_process:  # and past them, traced again on a fresh import (guard_bounds.deeper)
        state.restore()
        guarded = guard_bounds.deeper(lambda: getattr(import_file(path), exercise.entry), exercise, seed, guarded)
    probes = [*probes, *draws.guarded_draws(exercise, seed, guarded)]
    if not probes:
        yield {"stage": "none"}  # a result all the same: the grader expects one more after the modes
        return
    ordered, modes = draws.probe_order(probes), {}
    for mode in TRIAL_MODES:  # eager first: the compiled modes' outputs are compared with its own here
        state.restore()
        eager = (modes.get("eager") or {}).get("outputs")
        probing = lambda: {"run": run_probes(exercise, path, ordered, mode, snapshot, eager)}  # noqa: E731
        modes[mode] = (_in_own_process(probing) if own_process else probing())["run"]
    yield {"stage": "done", "modes": modes, "guarded": guarded, "output_end": _output_position()}


def run_probes(exercise: Exercise, path: str, probes: list[draws.Draw], mode: str, snapshot: tamper.Snapshot,
               eager: list[Any] | None = None) -> dict[str, Any]:
    """The entry on the probes (bound_probes.py) in `mode`, on a fresh import, so that a module's state starts
    afresh as the reference's does, one diagnosis per call (what breaks or raises is that call's): {"outputs"
    (eager mode: one per call, None where it raised), "differs" (compiled modes: where the output differs from
    `eager`, the eager mode's outputs, why; sent instead of outputs, which can be large), "errors", "breaks"
    ([call, what] pairs), "findings"}. The probes come eager-only last; those are called eagerly alone."""
    calls = [copied_call(p.args, p.kwargs) for p in probes if mode == "eager" or not p.eager_only]
    run: dict[str, Any] = {"outputs": [], "differs": [], "errors": [], "breaks": [], "findings": []}
    loggers = observe.loggers_of(exercise)
    if not calls:  # every probe is eager-only: nothing to import the file for
        return run
    try:
        with observe.capture(path, loggers), _program_threads():
            entry = getattr(import_file(path), exercise.entry)
        for index, call in enumerate(calls):
            with observe.capture(path, loggers):
                diagnosis = engine.diagnose(entry, [call], mode, focus_file=path, config_baseline=snapshot.config)
            account = diagnosis.to_dict()
            output = plain(diagnosis.outputs[0]) if diagnosis.outputs else None
            if mode == "eager":
                run["outputs"].append(output)
            elif diagnosis.outputs:
                want = eager[index] if eager and index < len(eager) else None
                run["differs"].append(output_difference(output, want, exercise.rtol, exercise.atol))
            else:
                run["differs"].append(None)
            run["breaks"] += [[index, f"{gb['gb_id'] or ''} {gb['gb_type']}{_place(gb)}"]
                              for gb in account["graph_breaks"]]
            run["findings"] += snapshot.findings(exercise.allowed_config, entry, diagnosis.config_changed,
                                                 diagnosis.stances, exercise.polyfills)
            run["errors"] += [[index, account["error"]]] if account["error"] else []
    except BaseException as err:  # noqa: BLE001 - a probe that stops the file is a finding about it
        run["errors"].append([len(run["outputs"]) + len(run["differs"]), _describe(err, path)])
    return run


def _place(graph_break: dict[str, Any]) -> str:
    line = graph_break.get("line")
    return f" at line {line}" if line else ""


# What a file names when it may register something with torch that outlives its module: an operator
# (`torch.library`) or a Dynamo polyfill (`substitute_in_graph`, which refuses a second polyfill of a function).
_REGISTERS = ("library", "substitute_in_graph")


def registers_operators(path: str) -> bool:
    """Whether the file may register torch operators or Dynamo polyfills (it names one of `_REGISTERS`): such
    a file runs each mode in a process of its own, since a registration outlives its module and a second
    import would register it again (`torch.library.define` and `substitute_in_graph` refuse that). Other files
    are imported afresh in this process, which keeps the later modes warm: a fork per mode cost 40 to 50% more
    per check (measured on the 27 solutions).
    """
    text = read_source(path)
    return text is not None and any(word in text for word in _REGISTERS)


def read_source(path: str | os.PathLike) -> str | None:
    """The file's text as Python reads it when it runs the file (its coding declaration honoured: under
    `# -*- coding: utf-7 -*-`, bytes that UTF-8 shows inside a comment are code); None when unreadable."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, LookupError, UnicodeDecodeError):  # a declaration Python refuses: the import fails too
        return data.decode("utf-8", errors="replace")


def _in_own_process(trial: Any) -> dict[str, Any]:
    """Run `trial()` in a process forked from this one, as a real program imports its file: once.

    Each mode gets a process of its own, so the learner's file is imported once per process (a low-level
    `torch.library.define` cannot run twice in one), and nothing a mode changes reaches the next. A
    process that ends without a result ends this one the same way, for the sandbox to report.
    """
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()  # as the sandbox does: the forked process's collections do not walk (and copy) torch's objects
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            os.close(read_fd)
            torch.set_num_threads(1)  # rebuild the intra-op pool on this process's one thread (see sandbox)
            result = trial()
            result["output_end"] = _output_position()
            buffer = io.BytesIO()
            torch.save(result, buffer)
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(buffer.getbuffer())
        except BaseException:  # noqa: BLE001 - a failure is reported by how this process ends
            traceback.print_exc()
            status = 70
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) or not data:
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) and os.WEXITSTATUS(status) else 70)
    return torch.load(io.BytesIO(data), weights_only=True)


def run_trial(exercise: Exercise, path: str, mode: str, snapshot: tamper.Snapshot | None = None,
              calls: list[tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
              watch: bool = True, untrained: frozenset[int] = frozenset()) -> dict[str, Any]:
    """Examine `path` in `mode`; returns a dict of plain values and tensors (see module docstring).

    `watch=False` (course code only: the reference) skips the tamper snapshot and the graph records. In eager
    mode, the calls at the places in `untrained` run as an evaluation loop makes them (observe.untrained).
    """
    snapshot = snapshot or (tamper.Snapshot.take() if watch else None)  # before any learner code runs
    if watch:  # before the learner's import: what their file has compiled is read as their file is
        code_guard.install(read_source(exercise.original_path) if os.path.isfile(exercise.original_path) else None)
    loggers = observe.loggers_of(exercise)
    try:
        with observe.capture(path, loggers) as imported, _program_threads():
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
    given = calls
    # A function that changes its inputs in place changes no other mode's; an eager call that runs as an
    # evaluation loop makes it is given its tensors laid out otherwise (a transposed view's strides).
    calls = [copied_call(args, kwargs, mode == "eager" and index in untrained)
             for index, (args, kwargs) in enumerate(calls)]
    try:
        with observe.capture(path, loggers) as called:
            # Eagerly, and in one graph where the file has modules and reads what an evaluation loop changes
            # (`if self.training:`): a path only an evaluation loop takes must compile as one graph too.
            evaluated = mode == "eager" or mode == "fullgraph" and observe.has_modules(entry, module) \
                and _reads_training_state(read_source(path))
            around = (lambda i: observe.untrained(entry, module) if i in untrained else contextlib.nullcontext()) \
                if evaluated and untrained else None
            # fullgraph with dynamic sizes, whose guards say which sizes the traced code tests (guard_bounds.py);
            # where that stops, the verdict is a static trace's, as a learner's own torch.compile would start
            # (nonstrict_trace refuses an output of symbolic size: GB0251)
            run = lambda dynamic: engine.diagnose(  # noqa: E731
                entry, calls, mode, focus_file=path, config_baseline=snapshot.config if snapshot else None,
                around=around, dynamic=dynamic)
            diagnosis = run(True if mode == "fullgraph" else None)
            if mode == "fullgraph" and diagnosis.error:  # on a fresh import and fresh copies: as a trial starts
                shape_envs, module = diagnosis.shape_envs, import_file(path)
                entry = getattr(module, exercise.entry)
                calls = [copied_call(args, kwargs) for args, kwargs in given]
                diagnosis = run(None)
                diagnosis.shape_envs = shape_envs
    except BaseException as err:  # noqa: BLE001 - e.g. SystemExit raised from inside the entry
        return {"mode": mode, "stage": "call", "error": _describe(err, path)}
    findings = snapshot.findings(exercise.allowed_config, entry, diagnosis.config_changed, diagnosis.stances,
                                 exercise.polyfills) if snapshot else []
    trial = {
        "mode": mode,
        "stage": "done",
        "diagnosis": diagnosis.to_dict(),
        "outputs": [plain(output) for output in diagnosis.outputs],
        # each call's tensor inputs as it left them: a call that changes its caller's tensors in place is seen
        "inputs_after": [plain(tensors_in([args, kwargs])) for args, kwargs in calls[:len(diagnosis.outputs)]],
        "stdout": called["stdout"],
        "tampering": findings,
    }
    contracts = observe.contracts_in(exercise, mode) if watch else []
    if contracts and not diagnosis.error:  # after the findings: the probes compile the entry again
        try:
            trial["observed"] = observe.observe(contracts, mode, module, entry, given, imported, called, path, loggers)
        except BaseException as err:  # noqa: BLE001 - e.g. SystemExit from a probe: the contracts fail
            trial["observed"] = {"error": _describe(err, path)}
    # after the probes (they expect the calls alone before them) and the findings
    if watch and not diagnosis.error and (mode == "eager" or mode == "default" and
                                          compiled_gradients_asked(exercise, trial["diagnosis"], trial["outputs"])):
        try:
            trial["gradients"] = observe.call_gradients(entry, module, given, exercise.input_gradients,
                                                        compiled=(mode == "default"))
        except BaseException as err:  # noqa: BLE001 - e.g. SystemExit from a backward: eager-matches fails
            trial["gradients"] = [{"error": observe.error_line(err)}]
    if mode == "fullgraph" and watch:
        trial["growths"] = [[call, [[*place, size] for place, size in growth.items()]]
                            for call, growth in guard_bounds.growths(entry, diagnosis.shape_envs)]
    if mode == "default" and watch:
        trial["graphs"] = [_graph_record(graph) for graph in diagnosis.graphs]
        trial["parameters"] = observe.parameter_names(entry)
    return trial


# What an evaluation loop changes that code can read: the modules' mode, and whether a result records autograd.
_TRAINING_STATE = re.compile(r"\.\s*(training|requires_grad|grad_fn|is_leaf|_version|is_grad_enabled|"
                             r"is_inference_mode_enabled|is_inference)\b")


def _reads_training_state(source: str | None) -> bool:
    """Whether the file's text names what an evaluation loop changes: only then can a path depend on it, and be
    worth a second compilation (the gate refuses reading it by a string: getattr, vars, __dict__)."""
    return source is None or bool(_TRAINING_STATE.search(source))


@contextlib.contextmanager
def _program_threads() -> Iterator[None]:
    """The file imported with a program's intra-op thread count (sandbox.program_threads): what it computes
    there on real tensors (a float sum's rounding, split over the threads) is what it computes in a program of
    its own, so it cannot tell this process from one. The calls after run on one thread again: a graph is traced
    on fake tensors, where no such sum runs, and a second thread would only spin beside the other checks."""
    torch.set_num_threads(sandbox.program_threads())
    try:
        yield
    finally:
        torch.set_num_threads(1)


def compiled_gradients_asked(exercise: Exercise, diagnosis: dict[str, Any], outputs: Any) -> bool:
    """Whether default mode's calls are asked for their gradients (compiled afresh: the costliest part of a trial).
    Not while the diagnosis, as the trial reports it, fails no-graph-breaks or no-recompilation: a file still
    breaking or recompiling is told that first, and each break or length would cost one more trace. Nor where no
    output is a floating-point tensor (while-loop-nms' indices): no gradient flows from one, so every gradient
    would be none, as the reference's are where compiled-matches holds the outputs to the reference's."""
    try:
        graphs = {graph for call in diagnosis["calls"] for graph in call["graphs"]}
        too_many = bool(exercise.max_compilations) and len(graphs) > exercise.max_compilations
        differentiable = any(t.is_floating_point() for t in tensors_in(outputs))
        return differentiable and not (diagnosis["graph_breaks"] or too_many)
    except (KeyError, TypeError):  # a report of no such shape asks for everything (and fails on its own)
        return True


def _graph_record(graph: engine.CapturedGraph) -> dict[str, Any]:
    try:
        return replay.graph_record(graph.module, graph.example_inputs)
    except replay.NotReplayable as err:
        return {"unreplayable": str(err)}


def import_file(path: str, prefix: str = "submission_") -> Any:
    """Import a .py file as a fresh module named prefix + its stem (replacing any earlier import of it)."""
    name = prefix + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Compiled from the file's own bytes, never from a bytecode cache: a cache beside a reference solution
    # is a file a checked process could have planted (it cannot where its writes are confined: confine.py).
    with open(path, "rb") as file:
        code = compile(file.read(), path, "exec", dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - what importing the file would run, without its cache
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
