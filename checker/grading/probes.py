"""The helpers a contract's expression calls (checker/course/contracts.py): probes of what a file does.

Each is what the expression names (`warnings_raised_by`, `delays_timed`, `state_kept`, ...); grading/observe.py
evaluates the expression in the file's namespace with these over it, so that a file's own function of the same
name does not stand in for the course's. They run where the file runs (in the checked process, and in the grader's
audit on the reference), and read what a file cannot answer for itself where they can: Python's builtins,
nn.Module's own tables, autograd's own `requires_grad` flag, the file's text as the trial imported it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import logging
import math
import sys
import time
import types
import warnings
import weakref
from typing import Any

import torch

from checker.dynamo import engine
from checker.grading.compiled_probes import compilations, compiled, run_compiled


class _Printed(io.TextIOBase):
    """What every call and every probe of a check prints to: each copy open around it keeps what is printed, and
    the process's own stdout still prints it. One class, holding nothing in sight (its copies are in `_PRINTED`),
    over the process's own stdout however deeply nested: a probe's stdout looks like a call's."""

    def write(self, text: str) -> int:
        copies, original = _PRINTED[self]
        for copy in copies:
            copy.write(text)
        return original.write(text)

    def flush(self) -> None:
        _PRINTED[self][1].flush()


_PRINTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # stream -> (copies, the process's stdout)


@contextlib.contextmanager
def printing_into(copy: io.StringIO) -> Any:
    """While the block runs, what is printed goes into `copy` (and into the copies of the blocks around it), and
    is still printed."""
    outer = _PRINTED.get(sys.stdout)
    stream = _Printed()
    _PRINTED[stream] = ([*outer[0], copy], outer[1]) if outer else ([copy], sys.stdout)
    with contextlib.redirect_stdout(stream):
        yield copy


def warnings_raised_by(build: Any) -> int:
    """How many warnings `build()` raises: for a contract's expression (`warnings_raised_by(lambda: ...)`)."""
    return len(warning_texts(build))


def warning_texts(build: Any) -> list[str]:
    """The text of each warning `build()` raises, for a contract that asks whether a warning names a value."""
    return [str(each.message) for each in _warnings_of(build)]


def _warnings_of(build: Any) -> list[warnings.WarningMessage]:
    """Every warning `build()` raises, whatever the filters would show."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return caught


# What Python's default filters hide when a module (not `__main__`) raises it
_HIDDEN_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def warnings_shown_by(build: Any) -> int:
    """How many of the warnings `build()` raises Python's default filters show when a module raises them: a
    warning of a category they hide reaches no one."""
    return sum(not issubclass(each.category, _HIDDEN_BY_DEFAULT) for each in _warnings_of(build))


def logged_by(call: Any, name: str) -> list[str]:
    """What `call()` logs to the logger `name`, at every level, as "LEVEL: message" lines (`logs_of`)."""
    with logs_of((name,)) as lines:
        call()
    return lines


class _Records(logging.Handler):
    def __init__(self, lines: list[str], names: tuple[str, ...]) -> None:
        super().__init__(logging.DEBUG)
        self.lines, self.names = lines, names

    def emit(self, record: logging.LogRecord) -> None:
        if not any(record.name == name or record.name.startswith(name + ".") for name in self.names):
            return
        try:
            self.lines.append(f"{record.levelname}: {record.getMessage()}")
        except Exception:  # noqa: BLE001 - a record that cannot be formatted still counts
            self.lines.append(f"{record.levelname}: {record.msg!r}")


@contextlib.contextmanager
def logs_of(names: tuple[str, ...]) -> Any:
    """While the block runs, the records of the loggers `names` at every level, as "LEVEL: message" lines in the
    list it yields: a logger with no level of its own is opened to every level meanwhile (a level the file set
    stays), and every record still goes where it went. The records are read where a program's own handlers
    read them, on the root logger (`logging.basicConfig`'s): a logger the file stops from propagating logs
    nothing the program sees, and nothing here either."""
    lines: list[str] = []
    handler, root = _Records(lines, tuple(names)), logging.getLogger()
    lowered = [logger for logger in map(logging.getLogger, names) if logger.level == logging.NOTSET]
    root.addHandler(handler)
    for logger in lowered:
        logger.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        for logger in lowered:
            if logger.level == logging.DEBUG:
                logger.setLevel(logging.NOTSET)


def delays_timed(module: Any, run: Any, given: Any, delay: float = 0.004) -> int:
    """For a contract's expression (`delays_timed(layer, lambda x: time_layer(compiled(layer), x), x)`): how many
    whole `delay`s the seconds per call that `run(given)` returns hold, while each run of `module`'s forward first
    sleeps `delay`. ValueError where a call of the module is given another input than `given` (a helper that times
    the layer on a smaller input of its own).
    ValueError where the figure times something else than the module's calls (an empty loop, the clock read twice
    after one call, its hooks called by hand, timers inside forward around its parts): a helper that times the
    layer it is given holds at least one. Run again with three times the delay, the figure must grow by the two
    delays added to each call, within half of that either way: a constant does not grow, a figure of two calls
    per call grows twice as much, one of ten calls ten times (margins for a busy machine's noise)."""
    first = _timed_with(module, run, given, delay)
    second = _timed_with(module, run, given, 3 * delay)
    if not delay <= second - first <= 3 * delay:
        raise ValueError(f"with each call of the layer made {delay * 1000:.0f} ms and then {3 * delay * 1000:.0f} ms "
                         f"slower, it returned {first:.2g} and then {second:.2g} seconds per call: the figure does not "
                         "follow the layer's calls" + (", it grew by more than each call did (seconds for several calls, "
                                                       "not per call?)" if second - first > 3 * delay else ""))
    return int(first / delay)


def _timed_with(module: Any, run: Any, given: Any, delay: float) -> float:
    forward = module.forward
    inputs: list[bool] = []  # per call of the module: whether it was given `given`

    # Not traced itself (recursive=False: the forward it calls is): the sleep is outside the compiled code, and the
    # second timing, with another delay, reuses the first one's compilation instead of guarding on the delay.
    @torch.compiler.disable(recursive=False)
    def slowed(*args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else None
        inputs.append(first is given or (isinstance(first, torch.Tensor) and first.shape == given.shape
                                         and bool(torch.equal(first.detach().cpu(), given))))
        time.sleep(delay)
        return forward(*args, **kwargs)

    object.__setattr__(module, "forward", slowed)  # nn.Module's call reads `self.forward`: the instance's first
    try:
        with engine._set_stance("default"):  # a `compiled(layer)` in `run` is compiled: its calls are what is timed
            seconds = run(given)
    finally:
        object.__delattr__(module, "forward")
    if not all(inputs):
        raise ValueError(f"{inputs.count(False)} of the {len(inputs)} calls of the layer it timed were given another "
                         "input than the `x` it was handed: the figure is not the seconds per call of `layer(x)`")
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


def printed_by(call: Any, grad: bool = True, inference: bool = False) -> str:
    """For a contract's expression: what `call()` prints, run with autograd's recording on or off (`grad`), or in
    inference mode (`inference`): a print the task keeps is made under `torch.no_grad()` and
    `torch.inference_mode()` too, as eager evaluation and serving run."""
    # only entered when asked: `torch.inference_mode(False)` turns autograd's recording back on
    with printing_into(io.StringIO()) as printed, torch.set_grad_enabled(grad), \
            torch.inference_mode() if inference else contextlib.nullcontext():
        call()
    return printed.getvalue()


def without_grad(call: Any) -> Any:
    """For a contract's expression: `call()` under `torch.no_grad()`, as an evaluation loop runs it."""
    with torch.no_grad():
        return call()


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


def rescaled(module: Any, factor: float, call: Any) -> Any:
    """For a contract's expression: what `call()` returns while every floating-point tensor `module` keeps (as for
    `state_kept`) is multiplied by `factor`, in place, and put back afterwards: another state cached, the same way
    wherever the file keeps it, so that what the module computes is seen to follow the state it keeps, not
    numbers written in its place."""
    kept = [tensor for _, tensor in _kept_tensors(module, cloned=False) if tensor.is_floating_point()]
    saved = [tensor.clone() for tensor in kept]
    with torch.no_grad():
        for tensor in kept:
            tensor.mul_(factor)
    try:
        return call()
    finally:
        with torch.no_grad():
            for tensor, was in zip(kept, saved):
                tensor.copy_(was)


# What every nn.Module holds of its own (`_parameters`, `_forward_hooks`, `training`, ...): read through its tables.
_MODULE_OWN = frozenset(vars(torch.nn.Module()))


def _kept_tensors(value: Any, path: str = "self", depth: int = 0, cloned: bool = True) -> list[tuple[str, Any]]:
    """Every tensor a module keeps, by path: its parameters, buffers, submodules' and attributes' (a private one's
    too: `self._calls` counts as much as `self.calls`), in lists and dicts. `cloned`: copies, with the numbers it
    keeps as tensors too (a call counter kept as an int); else the tensors themselves, to change in place."""
    if isinstance(value, torch.Tensor):
        return [(path, value.detach().clone() if cloned else value.detach())]
    if isinstance(value, (bool, int, float)):
        return [(path, torch.tensor(value))] if cloned else []
    if depth > 8:
        return []
    if isinstance(value, torch.nn.Module):
        tables = _INSTANCE_DICT.__get__(value)  # nn.Module's own tables and attributes, not a subclass's view
        items = [*tables["_parameters"].items(), *tables["_buffers"].items(), *tables["_modules"].items(),
                 *((k, v) for k, v in tables.items() if k not in _MODULE_OWN)]
    elif isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    else:
        return []
    return [found for key, item in items if item is not None
            for found in _kept_tensors(item, f"{path}.{key}", depth + 1, cloned)]


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


def subclasses_agree(function: Any, argument_sets: list[tuple]) -> int:
    """For a contract's expression: every subclass of the autograd.Function `function` belongs to (wherever the file
    defined it, at any depth) that has a forward of its own computes what the vendored one does, on each of
    `argument_sets` (arguments the file's own calls never pass, such as another `eps`). The vendored one is the
    class of `function`'s line that derives from torch.autograd.Function itself, so a name bound again to a subclass
    does not hide it. How many comparisons; ValueError at the first that differs."""
    line = [cls for cls in getattr(function, "__mro__", ()) if torch.autograd.Function in cls.__bases__]
    if not line:
        raise ValueError(f"{function!r} is not an autograd.Function")
    vendored, compared, found = line[-1], 0, []
    pending = list(type.__subclasses__(vendored))
    while pending:  # type's own method: a metaclass of the file's does not answer for it
        cls = pending.pop()
        found.append(cls)
        pending.extend(type.__subclasses__(cls))
    for cls in found:
        if "forward" not in vars(cls):
            continue
        for arguments in argument_sets:
            with torch.no_grad():
                want, got = vendored.apply(*arguments), cls.apply(*arguments)
            try:
                torch.testing.assert_close(got, want, equal_nan=True)
            except (AssertionError, TypeError) as err:
                settings = ", ".join(repr(a) for a in arguments if not isinstance(a, torch.Tensor))
                raise ValueError(f"`{cls.__name__}`, a subclass of `{vendored.__name__}` with a forward of its own, "
                                 f"computes another result than the vendored forward (with {settings}): "
                                 f"{str(err).splitlines()[0][:160]}") from None
            compared += 1
    return compared + 1  # positive where no subclass has a forward of its own


def rebuilt_with(path: str, name: str, expression: str) -> Any:
    """For a contract's expression: the checked file built again, as a new module, from its text with the value of
    its one module-level `name = ...` replaced by `expression` (a checkpoint's table swapped), so that what the file
    decides from that value is seen to follow it, not what it knows of the shipped one. `path` is the file the
    trial imported, not the module's `__file__`. ValueError where the module binds `name` other than once."""
    with open(path, "rb") as file:
        tree = ast.parse(file.read())
    bound = [s for s in tree.body if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None and any(
        isinstance(target, ast.Name) and target.id == name
        for target in (s.targets if isinstance(s, ast.Assign) else [s.target]))]
    if len(bound) != 1:
        raise ValueError(f"the file binds `{name}` at module level {len(bound)} times, where it ships with one")
    bound[0].value = ast.parse(expression, mode="eval").body
    rebuilt = types.ModuleType(f"rebuilt_{name.lower()}")
    rebuilt.__file__ = path
    exec(compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True), rebuilt.__dict__)  # noqa: S102
    return rebuilt


def polyfill_of(name: str) -> Any:
    """For a contract's expression: what Dynamo computes in place of the function `name` ("zlib.crc32") on the
    constant arguments a probe passes: the file's polyfill (substitute_in_graph), or the function itself where
    there is none or where the polyfill lets Dynamo call it on constants (`can_constant_fold_through`). By name,
    so that the probe does not depend on what the file imports."""
    from torch._dynamo.variables import PolyfilledFunctionVariable

    module, _, attribute = name.rpartition(".")
    function = getattr(importlib.import_module(module), attribute)
    handler = getattr(PolyfilledFunctionVariable, "_get_polyfill_handlers", dict)().get(function)
    if handler is None or getattr(handler, "__torch_dynamo_can_constant_fold_through__", False):
        return function
    return getattr(handler, "__torch_dynamo_polyfill__", function)


def built(generator: Any, make: Any, *args: Any, **kwargs: Any) -> Any:
    """For a contract's expression (`built(MonitoredClassifier)`): a module of the file's built afresh, with torch's
    generator seeded from the probe's own `g` while it is built and put back afterwards, so that the file's module
    and the reference's start from the same parameters."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 1 << 62, (), generator=generator)))
        return make(*args, **kwargs)


HELPERS = {"warnings_raised_by": warnings_raised_by, "warning_texts": warning_texts, "delays_timed": delays_timed,
           "submodule": submodule, "own_parameters": own_parameters, "compiled": compiled,
           "requires_grad": requires_grad, "fakes_agree": fakes_agree, "state_kept": state_kept,
           "polyfill_of": polyfill_of, "rescaled": rescaled, "run_compiled": run_compiled, "printed_by": printed_by,
           "subclasses_agree": subclasses_agree, "logged_by": logged_by, "compilations": compilations,
           "without_grad": without_grad, "warnings_shown_by": warnings_shown_by}
