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
import functools
import hashlib
import importlib
import importlib.util
import inspect
import io
import math
import os
import secrets
from collections.abc import Iterator
from typing import Any

import torch

from checker.course.contracts import Contract
from checker.course.manifest import Exercise, build_call
from checker.dynamo import engine
from checker.grading.plain import fresh_copy, plain, tensors_in
from checker.grading.compiled_probes import STAND_INS
from checker.grading.probes import HELPERS, built, logs_of, printing_into, rebuilt_with

Calls = list[tuple[tuple[Any, ...], dict[str, Any]]]


def contracts_in(exercise: Exercise, mode: str) -> list[Contract]:
    """The contracts observed in the checked process in this mode."""
    return [c for c in exercise.contracts if c.observed_in_child and mode in c.modes]


def loggers_of(exercise: Exercise) -> tuple[str, ...]:
    return tuple(sorted({c.logger for c in exercise.contracts if c.logger}))


def _warnings_home() -> Any:
    """The module whose `_showwarnmsg_impl` shows a warning where `warnings.showwarning` is Python's own:
    `warnings` (Python 3.11 to 3.13), `_py_warnings` (3.14)."""
    for name in ("_py_warnings", "warnings"):
        module = importlib.import_module(name) if importlib.util.find_spec(name) else None
        if hasattr(module, "_showwarnmsg_impl"):
            return module
    raise ImportError("this Python shows warnings in no module the checker knows")


_WARNINGS_HOME = _warnings_home()


@contextlib.contextmanager
def capture(path: str, loggers: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """While the block runs: what is printed, the warnings shown from the file at `path` (by Python's usual
    filters, which show a warning once per line of a freshly imported module), and the records of `loggers`
    at every level. Everything is still printed and shown. The dict it yields is filled when the block ends."""
    seen: dict[str, Any] = {"stdout": "", "warnings": [], "logs": []}
    printed, caught = io.StringIO(), []
    # Warnings are read where `warnings.catch_warnings(record=True)` reads them, below `warnings.showwarning`,
    # which stays Python's own: a file that looks at it sees what it sees in any program.
    home = _WARNINGS_HOME
    shown = home._showwarnmsg_impl

    def record(message: Any) -> None:
        caught.append((message.category.__name__, str(message.message), message.filename))
        shown(message)

    with printing_into(printed), logs_of(loggers) as lines:
        home._showwarnmsg_impl = record
        try:
            yield seen
        finally:
            if home._showwarnmsg_impl is record:
                home._showwarnmsg_impl = shown
            seen["stdout"] = printed.getvalue()
            seen["warnings"] = [f"{kind}: {text}" for kind, text, where in caught if _same_file(where, path)]
            seen["logs"] = lines


def observe(contracts: list[Contract], mode: str, module: Any, entry: Any, calls: Calls, imported: dict[str, Any],
            called: dict[str, Any], path: str, loggers: tuple[str, ...], reference: bool = False) -> dict[str, Any]:
    """What each of `contracts` asks, after the mode's `calls` ran: the effects of the import and the calls
    as captured, and the probes (state, interface, raises, gradients, effects on the contract's own inputs).
    In the grader, `mode` is "eager", the module is the reference's and `reference` is true."""
    return {contract.name: _observe_one(contract, mode, module, entry, calls, imported, called, path, loggers,
                                        reference) for contract in contracts}


def _observe_one(contract: Contract, mode: str, module: Any, entry: Any, calls: Calls, imported: dict[str, Any],
                 called: dict[str, Any], path: str, loggers: tuple[str, ...], reference: bool) -> Any:
    if contract.kind == "effects" and not contract.inputs:
        return imported if contract.at == "import" else called
    if contract.kind in ("state", "interface"):
        return _evaluate(contract.expression, module, mode, path, _probe_seed(calls, contract.name), reference)
    runner = _runner(entry, mode)
    probes = [build_call(case, index) for index, case in enumerate(contract.inputs)]
    if contract.kind == "effects":
        with printing_into(io.StringIO()), capture(path, loggers) as seen:
            for args, kwargs in probes:
                _call_quietly(runner, args, kwargs)
        return seen
    if contract.kind == "raises":
        return [_raised_after_some_calls(runner, args, kwargs, calls) for args, kwargs in probes]
    return _gradients(entry, runner, calls)


def has_modules(entry: Any, module: Any) -> bool:
    """Whether `untrained` has modules to put in evaluation mode: the entry, or the file's module-level ones."""
    return isinstance(entry, torch.nn.Module) or any(isinstance(v, torch.nn.Module) for v in vars(module).values())


@contextlib.contextmanager
def untrained(entry: Any, module: Any) -> Iterator[None]:
    """A call as an evaluation loop makes it: under `torch.no_grad()`, with the entry's modules (a function
    entry's: the file's module-level modules) in evaluation mode, each put back as it was afterwards."""
    roots = [entry] if isinstance(entry, torch.nn.Module) else [
        value for value in vars(module).values() if isinstance(value, torch.nn.Module)]
    modes = [(part, part.training) for root in roots for part in root.modules()]
    try:
        with torch.no_grad():
            for part, _ in modes:
                part.training = False
            yield
    finally:
        for part, training in modes:
            part.training = training


def _runner(entry: Any, mode: str, dynamic: bool | None = None) -> Any:
    """The entry as the mode runs it: eagerly under the force_eager stance, or compiled afresh with Dynamo's
    eager backend (the probes run after the mode's diagnosis, whose compilation is gone); `dynamic` as
    torch.compile takes it."""
    if mode == "eager":
        def run(*args: Any, **kwargs: Any) -> Any:
            with engine._set_stance("force_eager"):
                return entry(*args, **kwargs)
        return run
    torch._dynamo.reset()
    return torch.compile(entry, backend="eager", fullgraph=(mode == "fullgraph"), dynamic=dynamic)


def _call_quietly(runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    try:
        runner(*(fresh_copy(a) for a in args), **{k: fresh_copy(v) for k, v in kwargs.items()})
    except Exception:  # noqa: BLE001 - what was printed, warned or logged before it counts
        pass


def _raised(runner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The name of the exception the call raised, or "" when it returned."""
    try:
        with printing_into(io.StringIO()):
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


def _probe_seed(calls: Calls, name: str) -> int:
    """The seed of the generator `g` a contract's expression draws from (`torch.rand(4, generator=g)`): from the
    check's own fresh inputs, so that what it draws is new on every check and the same for the file and for the
    reference, which the grader observes on the same calls. Torch's own generator is left as the file left it,
    so `torch.initial_seed()` does not tell a probe from a call. A file that reads its inputs could work the seed
    out, as it could read any probe where its code runs (the README says what is believed there)."""
    digest = hashlib.sha256(name.encode())
    for args, kwargs in calls:
        for value in [*args, *kwargs.values()]:
            is_tensor = isinstance(value, torch.Tensor)
            digest.update(value.detach().cpu().contiguous().flatten().view(torch.uint8).numpy().tobytes()
                          if is_tensor else repr(value).encode())
    return int.from_bytes(digest.digest()[:6], "big")


def _evaluate(expression: str, module: Any, mode: str, path: str, seed: int = 0, reference: bool = False) -> Any:
    """The contract's expression in the file's namespace, with the course's helpers over it (a file's own
    `warnings_raised_by` does not stand in for the checker's: grading/probes.py), as plain data, or {"error": why}.
    It draws from `g`, a generator seeded with `seed`. On the `reference`, the compiling probes'
    stand-ins replace them (compiled_probes.STAND_INS)."""
    try:
        with printing_into(io.StringIO()), engine._set_stance("force_eager"):
            # the builtins the course's expression names are Python's, whatever the file binds (`def type`)
            used = {node.id for node in ast.walk(ast.parse(expression)) if isinstance(node, ast.Name)}
            generator = torch.Generator().manual_seed(seed)
            namespace = {**vars(module), **HELPERS, "rebuilt_with": functools.partial(rebuilt_with, path),
                         "g": generator, "built": functools.partial(built, generator),
                         **(STAND_INS if reference else {}),
                         **{name: vars(builtins)[name] for name in used & set(vars(builtins)) - set(HELPERS)}}
            value = eval(expression, namespace)  # noqa: S307 - the course's own expression
    except Exception as err:  # noqa: BLE001 - a missing name or a failing helper is what the check reports
        return {"error": error_line(err)}
    if isinstance(value, float) and not math.isfinite(value):
        return {"error": f"it is {value}"}
    return plain(value)


def call_gradients(entry: Any, module: Any, calls: Calls, arguments: bool = True, compiled: bool = False) -> list[Any]:
    """What every check asks of the eager calls' gradients (strict.py's eager-matches): `_gradients`, with the
    parameters of a function entry's module-level modules too (a loss's `HEAD`), by their names, and the
    arguments by their place (a decorated entry's wrapper names them otherwise); `arguments` False: the
    parameters' alone. The entry runs eagerly, as the eager calls ran it, and where that fails, once more under
    no stance: measured on torch 2.13, `torch.cond`'s backward fails for a forward run under the force_eager
    stance ("object of type 'bool' has no len()"), while under no stance a process that has compiled the entry
    before may compile it again (while-loop-nms's unfixed loop then stops on its data-dependent branch).
    `compiled`: the gradients of the entry compiled afresh instead (default mode, its breaks recorded), which a
    training step takes through the compiled code: a branch on `is_compiling()` that detaches what it computes is
    seen there, and a graph break on a path only inputs that require gradients take is an error there."""
    found = [] if isinstance(entry, torch.nn.Module) else sorted(
        (f"{name}.{path}", parameter) for name, value in vars(module).items() if isinstance(value, torch.nn.Module)
        for path, parameter in value.named_parameters())
    labels = "by place" if arguments else ""
    if compiled:  # static shapes: a trace per size, each a fraction of a symbolic trace's cost; breaks recorded, so
        # that a path taken only where the inputs require gradients (`if x.requires_grad:`) keeps no break either
        # (default mode: on torch 2.13 fullgraph=True quietly captures what default mode breaks on, `nonzero()`)
        with engine.recording() as compiling:
            gradients = _gradients(entry, _runner(entry, "default", dynamic=False), calls, found, labels)
        broken = compiling.graph_breaks()
        if broken:
            where = f" (line {broken[0].line})" if broken[0].line else ""
            return [{"error": f"a graph break where the inputs require gradients: {broken[0].gb_type}{where}"}
                    for _ in calls]
        return gradients
    eagerly = _gradients(entry, _runner(entry, "eager"), calls, found, labels)
    return [_gradients(entry, entry, [call], found, labels)[0] if "error" in result else result
            for call, result in zip(calls, eagerly)]


def _gradients(entry: Any, runner: Any, calls: Calls, more: list[tuple[str, Any]] = (),
               arguments: str = "by name") -> list[Any]:
    """Per call: the gradient of a weighted sum of the floating-point outputs with respect to each floating-point
    tensor argument (`arguments`: labelled "by name" or "by place", or "" for none), then to each parameter of
    a module entry, then to each of `more` (None where there is none). The weights are drawn from the call's own
    inputs, the same for the file and the reference: a plain sum is blind where the outputs' sum is constant (a
    softmax's rows, a normalised matrix), whatever the backward does."""
    parameters = [*(sorted(entry.named_parameters()) if isinstance(entry, torch.nn.Module) else []), *more]
    found = []
    for args, kwargs in calls:
        weights = torch.Generator().manual_seed(_probe_seed([(args, kwargs)], "gradients"))
        args = tuple(_leaf(a) for a in args)
        kwargs = {k: _leaf(v) for k, v in kwargs.items()}
        for _, parameter in parameters:
            parameter.grad = None
        try:
            with printing_into(io.StringIO()):
                outputs = runner(*args, **kwargs)
                total = sum(((t * torch.randn(t.shape, generator=weights).to(t.dtype)).sum()
                             for t in tensors_in(outputs) if t.requires_grad and t.is_floating_point()), torch.zeros(()))
                if total.requires_grad:
                    total.backward()
        except Exception as err:  # noqa: BLE001 - reported as this call's gradients
            found.append({"error": error_line(err)})
            continue
        names = parameter_names(entry) if arguments == "by name" else []
        positional = [(f"`{names[i]}`" if i < len(names) else f"argument {i + 1}", a) for i, a in enumerate(args)]
        named = [(label, a) for label, a in (*positional, *((f"`{k}`", v) for k, v in kwargs.items()))
                 if arguments and isinstance(a, torch.Tensor) and a.is_floating_point()]
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



def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.realpath(one) == os.path.realpath(other)
    except (TypeError, ValueError):
        return False
