"""What the reference solution does, computed in the grader's audit (audit.py): its module, imported once per
process, its outputs on a check's draws and the inputs it leaves, its gradients, and what it does for each mode's
contracts. Course code only: the learner's file is never imported here.
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any

from checker.course import draws
from checker.course.manifest import Exercise
from checker.dynamo import engine
from checker.grading import observe
from checker.grading.plain import copied_call, plain, tensors_in
from checker.grading.trial import TRIAL_MODES, ProcessState, import_file, registers_operators

_solutions: dict[str, Any] = {}  # exercise id -> the solution module, imported once per process


def solution_module(exercise: Exercise) -> Any:
    """The exercise's solution, imported once per process."""
    if exercise.id not in _solutions:
        state = ProcessState.save()  # what the solution sets at import stays out of everything else
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            module = import_file(str(exercise.solution_path), prefix="reference_")
        sys.modules.pop(module.__name__, None)  # not where a checked process forked later would look
        state.restore()
        _solutions[exercise.id] = module
    return _solutions[exercise.id]


def outputs(exercise: Exercise, calls: list[draws.Draw], left: list[Any] | None = None) -> list[Any]:
    """The solution's outputs, run eagerly on `calls`; into `left`, each call's tensor inputs as it left them."""
    entry, found = getattr(solution_module(exercise), exercise.entry), []
    with contextlib.redirect_stdout(io.StringIO()), engine._set_stance("force_eager"):
        for draw in calls:
            args, kwargs = copied_call(draw.args, draw.kwargs)
            found.append(plain(entry(*args, **kwargs)))
            if left is not None:
                left.append(plain(tensors_in([args, kwargs])))
    return found


def probe_outputs(exercise: Exercise, probes: list[draws.Draw]) -> list[tuple[Any] | None]:
    """The solution's output on each probe (bound_probes.py), as `(output,)`, or None where it raises (a size or
    dtype the exercise's model does not take: that probe asks nothing). On a fresh import where it can be, called in
    the order the checked process calls them (draws.probe_order), so that a module's state starts as it does there."""
    found: list[tuple[Any] | None] = []
    with _fresh_solution(exercise, "reference_probes_") as module, \
            contextlib.redirect_stdout(io.StringIO()), engine._set_stance("force_eager"):
        entry = getattr(module, exercise.entry)
        for draw in draws.probe_order(probes):
            args, kwargs = copied_call(draw.args, draw.kwargs)
            try:
                found.append((plain(entry(*args, **kwargs)),))
            except Exception:  # noqa: BLE001 - a probe the reference cannot run asks nothing
                found.append(None)
    return found


def gradients(exercise: Exercise, calls: list[draws.Draw]) -> list[Any]:
    """The solution's gradients on each of `calls` (observe.call_gradients), run eagerly, on the solution imported
    afresh where it can be: the module `outputs` runs keeps its state for the replay's calls, whether the grader
    takes the gradients before them (while the trial runs: audit.reference_here) or after."""
    with _fresh_solution(exercise, "reference_gradients_") as module, contextlib.redirect_stdout(io.StringIO()):
        return observe.call_gradients(getattr(module, exercise.entry), module, [(d.args, d.kwargs) for d in calls],
                                      exercise.input_gradients)


@contextlib.contextmanager
def _fresh_solution(exercise: Exercise, prefix: str) -> Any:
    """The solution imported afresh under `prefix` (the module imported once where it registers operators, which a
    second import would register again), in sys.modules while the block runs: `torch.cond` run eagerly has Dynamo
    trace its branches from their module."""
    path = str(exercise.solution_path)
    if registers_operators(path):
        module = solution_module(exercise)
    else:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            module = import_file(path, prefix=prefix)
    sys.modules[module.__name__] = module
    try:
        yield module
    finally:
        sys.modules.pop(module.__name__, None)


def observations(exercise: Exercise, trial_draws: list[draws.Draw], orders: dict[str, list[int]],
                 untrained: frozenset[int] = frozenset()) -> dict[str, dict[str, Any]]:
    """What the solution does for the contracts of each mode: imported afresh (its effects and state start
    from nothing, as the checked file's do in each mode) and run eagerly on that mode's calls, in its order;
    the eager mode's calls at the places in `untrained` as an evaluation loop makes them, as the file's ran."""
    observed, path, loggers = {}, str(exercise.solution_path), observe.loggers_of(exercise)
    for mode in TRIAL_MODES:
        # An interface contract is a property of the file's own result: the reference's is not needed (and
        # its helper may import what logs on the grader's stderr, as torch.utils.benchmark does).
        contracts = [c for c in observe.contracts_in(exercise, mode) if c.kind != "interface"]
        if not contracts:
            continue
        state = ProcessState.save()
        try:
            calls = [(trial_draws[i].args, trial_draws[i].kwargs) for i in orders[mode]]
            if registers_operators(path):
                # An operator or a polyfill is registered once per process, as trial.py runs such files: a second
                # import may be refused. Such a solution is read for what it computes alone (no effects contract
                # asks what its import printed), so the module imported once serves every mode.
                imported, module = {"stdout": "", "warnings": [], "logs": []}, solution_module(exercise)
            else:
                with observe.capture(path, loggers) as imported:
                    module = import_file(path, prefix="reference_contracts_")
                sys.modules.pop(module.__name__, None)
            entry = getattr(module, exercise.entry)
            with observe.capture(path, loggers) as called, engine._set_stance("force_eager"):
                for index, (args, kwargs) in enumerate(calls):
                    evaluating = mode == "eager" and index in untrained
                    args, kwargs = copied_call(args, kwargs, evaluating)
                    with observe.untrained(entry, module) if evaluating else contextlib.nullcontext():
                        entry(*args, **kwargs)
            observed[mode] = observe.observe(contracts, "eager", module, entry, calls, imported, called, path, loggers,
                                             reference=True)
        finally:
            state.restore()
    return observed
