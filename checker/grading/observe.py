"""What a file does besides returning values: observed the same way for the learner's file and the reference.

The behaviour contracts (checker/course/contracts.py) ask for effects, raises, state, gradients and an
interface. In the checked process, `run_trial` captures the file's effects while it is imported and while
its calls run (`capture`), then `observe` makes what else the mode's contracts need; in the grader, the
audit does the same for the reference solution, run eagerly after a fresh import, on the same calls in the
same order (`observe` with mode "eager"). Both return plain data keyed by contract name, which
grading/contracts.py compares. Nothing here decides pass or fail.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import io
import logging
import math
import os
import secrets
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import torch

from checker.course.contracts import Contract
from checker.course.manifest import Exercise, build_call
from checker.dynamo import engine
from checker.grading.plain import fresh_copy, plain

Calls = list[tuple[tuple[Any, ...], dict[str, Any]]]


def contracts_in(exercise: Exercise, mode: str) -> list[Contract]:
    """The contracts observed in the checked process in this mode."""
    return [c for c in exercise.contracts if c.observed_in_child and mode in c.modes]


def loggers_of(exercise: Exercise) -> tuple[str, ...]:
    return tuple(sorted({c.logger for c in exercise.contracts if c.logger}))


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(f"{record.levelname}: {record.getMessage()}")
        except Exception:  # noqa: BLE001 - a record that cannot be formatted still counts
            self.lines.append(f"{record.levelname}: {record.msg!r}")


@contextlib.contextmanager
def capture(path: str, loggers: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """While the block runs: what is printed, the warnings shown from the file at `path` (by Python's usual
    filters, which show a warning once per line of a freshly imported module), and the records of `loggers`
    at every level. Everything is still printed and shown. The dict it yields is filled when the block ends."""
    seen: dict[str, Any] = {"stdout": "", "warnings": [], "logs": []}
    printed, handler, caught = io.StringIO(), _Records(), []
    shown = warnings.showwarning

    def record(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        caught.append((category.__name__, str(message), filename))
        shown(message, category, filename, lineno, file, line)

    opened = [logging.getLogger(name) for name in loggers]
    lowered = [logger for logger in opened if logger.level == logging.NOTSET]  # a level the file set stays
    with contextlib.redirect_stdout(_Tee(printed, sys.stdout)):
        warnings.showwarning = record
        for logger in opened:
            logger.addHandler(handler)
        for logger in lowered:
            logger.setLevel(logging.DEBUG)
        try:
            yield seen
        finally:
            if warnings.showwarning is record:
                warnings.showwarning = shown
            for logger in opened:
                logger.removeHandler(handler)
            for logger in lowered:
                if logger.level == logging.DEBUG:
                    logger.setLevel(logging.NOTSET)
            seen["stdout"] = printed.getvalue()
            seen["warnings"] = [f"{kind}: {text}" for kind, text, where in caught if _same_file(where, path)]
            seen["logs"] = handler.lines


def observe(contracts: list[Contract], mode: str, module: Any, entry: Any, calls: Calls, imported: dict[str, Any],
            called: dict[str, Any], path: str, loggers: tuple[str, ...]) -> dict[str, Any]:
    """What each of `contracts` asks, after the mode's `calls` ran: the effects of the import and the calls
    as captured, and the probes (state, interface, raises, gradients, effects on the contract's own inputs).
    In the grader, `mode` is "eager" and the module is the reference's."""
    return {contract.name: _observe_one(contract, mode, module, entry, calls, imported, called, path, loggers)
            for contract in contracts}


def _observe_one(contract: Contract, mode: str, module: Any, entry: Any, calls: Calls, imported: dict[str, Any],
                 called: dict[str, Any], path: str, loggers: tuple[str, ...]) -> Any:
    if contract.kind == "effects" and not contract.inputs:
        return imported if contract.at == "import" else called
    if contract.kind in ("state", "interface"):
        return _evaluate(contract.expression, module, mode)
    runner = _runner(entry, mode)
    probes = [build_call(case, index) for index, case in enumerate(contract.inputs)]
    if contract.kind == "effects":
        with contextlib.redirect_stdout(io.StringIO()), capture(path, loggers) as seen:
            for args, kwargs in probes:
                _call_quietly(runner, args, kwargs)
        return seen
    if contract.kind == "raises":
        return [_raised_after_some_calls(runner, args, kwargs, calls) for args, kwargs in probes]
    return _gradients(entry, runner, calls)


def _runner(entry: Any, mode: str) -> Any:
    """The entry as the mode runs it: eagerly under the force_eager stance, or compiled afresh with Dynamo's
    eager backend (the probes run after the mode's diagnosis, whose compilation is gone)."""
    if mode == "eager":
        def run(*args: Any, **kwargs: Any) -> Any:
            with engine._set_stance("force_eager"):
                return entry(*args, **kwargs)
        return run
    torch._dynamo.reset()
    return torch.compile(entry, backend="eager", fullgraph=(mode == "fullgraph"))


def _call_quietly(runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    try:
        runner(*(fresh_copy(a) for a in args), **{k: fresh_copy(v) for k, v in kwargs.items()})
    except Exception:  # noqa: BLE001 - what was printed, warned or logged before it counts
        pass


def _raised(runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The name of the exception the call raised, or "" when it returned."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runner(*(fresh_copy(a) for a in args), **{k: fresh_copy(v) for k, v in kwargs.items()})
    except Exception as err:  # noqa: BLE001 - raising is what is observed
        return type(err).__name__
    return ""


def _raised_after_some_calls(runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any], calls: Calls) -> str:
    """`_raised` of the probe, made twice, each after as many of the check's own calls as chance says (one to
    three), so that a file that counts its calls cannot tell the probe by its place; "" where one of those calls
    raised (the reference raises on none of them) or the two probes differ."""
    seen = []
    for _ in range(2):
        for _ in range(1 + secrets.randbelow(3) if calls else 0):
            if _raised(runner, *calls[secrets.randbelow(len(calls))]):
                return ""
        seen.append(_raised(runner, args, kwargs))
    return seen[0] if seen[0] == seen[1] else ""


def warnings_raised_by(build: Any) -> int:
    """How many warnings `build()` raises: for a contract's expression (`warnings_raised_by(lambda: ...)`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return len(caught)


def delays_timed(module: Any, run: Any, delay: float = 0.005) -> int:
    """For a contract's expression (`delays_timed(layer, lambda: time_layer(compiled(layer), x))`): how many whole
    `delay`s the seconds per call that `run()` returns hold, while each run of `module`'s forward first sleeps `delay`.
    ValueError where the figure times something else than the module's calls (an empty loop, the clock read twice
    after one call, its hooks called by hand, timers inside forward around its parts): a helper that times the
    layer it is given holds at least one. Run again with twice the delay, the figure must grow by at least half
    of `delay` (a constant above it does not) and by at most three times it (the seconds of ten calls grow by ten
    delays): margins for a busy machine's noise."""
    first = _timed_with(module, run, delay)
    second = _timed_with(module, run, 2 * delay)
    if not delay / 2 <= second - first <= 3 * delay:
        raise ValueError(f"with each call of the layer made {delay * 1000:.0f} ms and then {2 * delay * 1000:.0f} ms "
                         f"slower, it returned {first:.2g} and then {second:.2g} seconds per call: the figure does not "
                         "follow the layer's calls" + (", it grew by more than each call did (seconds for several calls, "
                                                       "not per call?)" if second - first > 3 * delay else ""))
    return int(first / delay)


def _timed_with(module: Any, run: Any, delay: float) -> float:
    forward = module.forward

    # Not traced itself (recursive=False: the forward it calls is): the sleep is outside the compiled code, and the
    # second timing, with another delay, reuses the first one's compilation instead of guarding on the delay.
    @torch.compiler.disable(recursive=False)
    def slowed(*args: Any, **kwargs: Any) -> Any:
        time.sleep(delay)
        return forward(*args, **kwargs)

    object.__setattr__(module, "forward", slowed)  # nn.Module's call reads `self.forward`: the instance's first
    try:
        with engine._set_stance("default"):  # a `compiled(layer)` in `run` is compiled: its calls are what is timed
            seconds = run()
    finally:
        object.__delattr__(module, "forward")
    if not (type(seconds) is float and math.isfinite(seconds) and seconds >= delay):
        shown = f"{seconds:.2g}" if type(seconds) is float else repr(seconds)[:40]
        raise ValueError(f"with each call of the layer made {delay * 1000:.0f} ms slower, it returned {shown} seconds "
                         "per call: the figure does not time the layer's calls")
    return seconds


_INSTANCE_DICT = torch.nn.Module.__dict__["__dict__"]  # nn.Module's own: no subclass's `__dict__` stands in


def submodule(module: Any, name: str) -> Any:
    """The submodule registered as `name`, read from nn.Module's table; LookupError where the attribute of that
    name, which the model's own code reads, is another object (a property, or an instance attribute put beside it
    with object.__setattr__): the registered one would be judged while the other one runs."""
    registered = _INSTANCE_DICT.__get__(module)["_modules"][name]
    if getattr(module, name) is not registered:
        raise LookupError(f"`{name}` is not the submodule registered under that name: another object stands in "
                          "front of it")
    return registered


def own_parameters(module: Any) -> list[Any]:
    """Every parameter of `module` and its submodules, read from nn.Module's tables: a subclass's `parameters()`
    that yields other tensors (detached copies) is not taken at its word."""
    tables = _INSTANCE_DICT.__get__(module)
    found = [p for p in tables["_parameters"].values() if p is not None]
    for child in tables["_modules"].values():
        found += own_parameters(child) if child is not None else []
    return found


def requires_grad(tensor: Any) -> bool:
    """For a contract's expression: the tensor's own flag, as autograd reads it (a subclass's `requires_grad`
    property that says otherwise is not taken at its word)."""
    return bool(_REQUIRES_GRAD.__get__(tensor))


_REQUIRES_GRAD = torch._C.TensorBase.__dict__["requires_grad"]


def compiled(module: Any) -> Any:
    """For a contract's expression: the module compiled (Dynamo's eager backend), as a learner would time it. A
    timer the layer keeps inside itself, skipped while Dynamo traces, times nothing of it."""
    return torch.compile(module, backend="eager")


def state_kept(module: Any, call: Any, times: int = 5) -> int:
    """For a contract's expression: `call()` made `times` times, after which every tensor `module` keeps (its
    parameters, buffers and tensor attributes, in lists and dicts too, its submodules') is bitwise as it was:
    `times`; ValueError naming the first that changed (state updated in place and put back by arithmetic drifts)."""
    before = _kept_tensors(module)
    for _ in range(times):
        call()
    after = _kept_tensors(module)
    if [path for path, _ in after] != [path for path, _ in before]:
        raise ValueError(f"after {times} calls the module keeps other tensors than before them")
    for (path, was), (_, now) in zip(before, after):
        if was.shape != now.shape or was.dtype != now.dtype or not torch.equal(was, now):
            raise ValueError(f"after {times} calls `{path}` is not as it was before them")
    return times


def _kept_tensors(value: Any, path: str = "self", depth: int = 0) -> list[tuple[str, Any]]:
    if isinstance(value, torch.Tensor):
        return [(path, value.detach().clone())]
    if depth > 8:
        return []
    if isinstance(value, torch.nn.Module):
        tables = _INSTANCE_DICT.__get__(value)  # nn.Module's own tables and attributes, not a subclass's view
        items = [*tables["_parameters"].items(), *tables["_buffers"].items(), *tables["_modules"].items(),
                 *((k, v) for k, v in tables.items() if not k.startswith("_"))]
    elif isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    else:
        return []
    return [found for key, item in items if item is not None
            for found in _kept_tensors(item, f"{path}.{key}", depth + 1)]


def fakes_agree(function: Any, *args: Any) -> int:
    """For a contract's expression: `function(*args)` compiled, and each operation of its graph run on the real
    tensors, whose shape and dtype must be those Dynamo traced with (a custom operator's fake included: one that
    says another shape than its kernel returns misleads every backend that plans from it). How many operations
    were compared; ValueError at the first that differs."""
    compared: list[int] = []

    class Compared(torch.fx.Interpreter):
        def run_node(self, node: Any) -> Any:
            result = super().run_node(node)
            traced = node.meta.get("example_value")
            if node.op == "call_function" and isinstance(result, torch.Tensor) and isinstance(traced, torch.Tensor):
                if (tuple(result.shape), result.dtype) != (tuple(traced.shape), traced.dtype):
                    raise ValueError(f"`{node.target}` returned {result.dtype} of shape {tuple(result.shape)} where "
                                     f"the graph was traced with {traced.dtype} of shape {tuple(traced.shape)} (its fake)")
                compared.append(1)
            return result

    def backend(graph: Any, example_inputs: Any) -> Any:
        return lambda *inputs: Compared(graph).run(*inputs)

    with engine._set_stance("default"):
        torch.compile(function, backend=backend, fullgraph=True, dynamic=False)(*args)
    return len(compared)


_HELPERS = {"warnings_raised_by": warnings_raised_by, "delays_timed": delays_timed, "submodule": submodule,
            "own_parameters": own_parameters, "compiled": compiled, "requires_grad": requires_grad,
            "fakes_agree": fakes_agree, "state_kept": state_kept}


def _evaluate(expression: str, module: Any, mode: str) -> Any:
    """The contract's expression in the file's namespace, with the course's helpers over it (a file's own
    `warnings_raised_by` does not stand in for the checker's: _HELPERS), as plain data, or {"error": why}."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), engine._set_stance("force_eager"):
            # the builtins the course's expression names are Python's, whatever the file binds (`def type`)
            used = {node.id for node in ast.walk(ast.parse(expression)) if isinstance(node, ast.Name)}
            namespace = {**vars(module), **_HELPERS,
                         **{name: vars(builtins)[name] for name in used & set(vars(builtins)) - set(_HELPERS)}}
            value = eval(expression, namespace)  # noqa: S307 - the course's own expression
    except Exception as err:  # noqa: BLE001 - a missing name or a failing helper is what the check reports
        return {"error": error_line(err)}
    if isinstance(value, float) and not math.isfinite(value):
        return {"error": f"it is {value}"}
    return plain(value)


def _gradients(entry: Any, runner: Any, calls: Calls) -> list[Any]:
    """Per call: the gradient of the sum of the floating-point outputs with respect to each floating-point
    tensor argument, then to each parameter of a module entry (None where there is none)."""
    parameters = sorted(entry.named_parameters()) if isinstance(entry, torch.nn.Module) else []
    found = []
    for args, kwargs in calls:
        args = tuple(_leaf(a) for a in args)
        kwargs = {k: _leaf(v) for k, v in kwargs.items()}
        for _, parameter in parameters:
            parameter.grad = None
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                outputs = runner(*args, **kwargs)
                total = sum((t.sum() for t in _tensors(outputs) if t.requires_grad and t.is_floating_point()),
                            torch.zeros(()))
                if total.requires_grad:
                    total.backward()
        except Exception as err:  # noqa: BLE001 - reported as this call's gradients
            found.append({"error": error_line(err)})
            continue
        names = parameter_names(entry)
        positional = [(f"`{names[i]}`" if i < len(names) else f"argument {i + 1}", a) for i, a in enumerate(args)]
        named = [(label, a) for label, a in (*positional, *((f"`{k}`", v) for k, v in kwargs.items()))
                 if isinstance(a, torch.Tensor) and a.is_floating_point()]
        named += [(f"parameter {name}", p) for name, p in parameters]
        found.append({"of": [label for label, _ in named], "grads": [plain(t.grad) for _, t in named]})
    return found


def parameter_names(entry: Any) -> list[str]:
    """The entry's parameter names, in order (a module's are its forward's, whose frame Dynamo compiles)."""
    try:
        return list(inspect.signature(entry.forward if isinstance(entry, torch.nn.Module) else entry).parameters)
    except (TypeError, ValueError):
        return []


def error_line(err: BaseException) -> str:
    """An exception in one line: its type and the first line of its message."""
    message = str(err).splitlines()
    return f"{type(err).__name__}: {message[0] if message else ''}"[:300]


def _leaf(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().clone().requires_grad_(True)
    return fresh_copy(value)


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.realpath(one) == os.path.realpath(other)
    except (TypeError, ValueError):
        return False


class _Tee(io.TextIOBase):
    """Keeps a copy of what is printed, and still prints it."""

    def __init__(self, copy: io.StringIO, original: Any):
        self.copy, self.original = copy, original

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.original.write(text)

    def flush(self) -> None:
        self.original.flush()
