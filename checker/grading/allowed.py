"""What a replayed graph may call: the allow-list, and the principle behind each refusal.

The replay (replay.py) rebuilds a recorded graph from names; every name is resolved here, against fixed
namespaces, before anything is called. Allowed: public tensor operations of torch and its functional
namespaces, ATen and prims overloads, Tensor methods, Python's operators in place or not, `torch.cond` and
`torch.while_loop`, the calls Dynamo records for context managers (grad mode, inference mode, autocast:
`contained` ends what a graph leaves open) and for runtime assertions, and a tensor's view attributes.
Refused, with the reason in the message: whatever reads or changes something outside the graph's tensors
(files, seeds, process settings, storage), and any name the grader does not know. A call of an operator the
learner's file defines is not refused but not replayable (NotReplayable): only the file's code has it.
"""

from __future__ import annotations

import contextlib
import math
import operator
from collections.abc import Callable, Iterator
from typing import Any

import torch

# Namespaces whose public functions a graph may call (one attribute below the namespace).
_FUNCTION_SPACES = {
    "torch": torch, "torch.nn.functional": torch.nn.functional, "torch._C._nn": torch._C._nn,
    "torch.functional": torch.functional,
    "torch.special": torch.special, "torch.linalg": torch.linalg, "torch.fft": torch.fft,
    "torch._C._VariableFunctions": torch._C._VariableFunctions, "torch._C._linalg": torch._C._linalg,
    "torch._C._special": torch._C._special, "torch._C._fft": torch._C._fft, "math": math,
    "torch.masked._ops": torch.masked._ops,  # torch.masked's reductions, as the graph names them
}
# Context managers Dynamo records as a pair of calls around the code they guard: grad mode (`no_grad`,
# `enable_grad`, `set_grad_enabled`), `inference_mode` and `autocast`. They change this thread's settings
# for the graph's own code only, and the replay ends whatever a graph leaves open (see `contained`).
_CONTEXT_CALLS = (
    "torch._C._set_grad_enabled",
    "torch.autograd.grad_mode._enter_inference_mode", "torch.autograd.grad_mode._exit_inference_mode",
    "torch.amp.autocast_mode._enter_autocast", "torch.amp.autocast_mode._exit_autocast",
)
# Runtime assertions: what `assert` on a tensor (`_assert_async`) and `torch._check` on an unbacked number
# leave in the graph (2.10 also records `_check_is_size` for nonzero's size). They read and raise, nothing else.
_ASSERTION_CALLS = ("torch._assert_async", "torch._assert", "torch._assert_scalar", "torch._check",
                    "torch._check_is_size", "torch._check_with")
# `math` functions of a symbolic size, as Dynamo records them (`math.sqrt(q.shape[-1])` of a dynamic width):
# functions of the numbers they are given, nothing else.
_SYMBOLIC_MATH = {f"torch._sym_{name}" for name in (
    "sqrt", "log2", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan")}
# Python's arithmetic, bitwise and comparison operators, each in-place form, and indexing in and out.
_OPERATOR_ALLOWED = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos", "abs", "invert", "not_",
    "and_", "or_", "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "getitem", "setitem",
    "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "iand", "ior", "ixor",
    "ilshift", "irshift",
}
# Anything that reads or writes outside the tensors it is given, seeds, or changes process settings.
# (`as_strided` stays allowed: ATen bounds it by the tensor's own storage, and every tensor a replay
# holds has a storage of its own; `as_strided_` and `set_` would change what a storage a tensor shows.)
_DENIED = {
    "load", "save", "from_file", "frombuffer", "from_dlpack", "from_numpy", "compile", "manual_seed", "seed",
    "initial_seed", "use_deterministic_algorithms", "as_strided_",
    "set_", "set_default_dtype", "set_default_device", "set_printoptions", "set_num_threads", "set_rng_state",
    "set_flush_denormal", "set_anomaly_enabled", "set_autocast_enabled", "empty_strided",
}
_METHODS_DENIED = _DENIED | {
    "data_ptr", "numpy", "tolist", "storage", "untyped_storage", "share_memory_", "pin_memory", "register_hook",
    "register_post_accumulate_grad_hook", "backward", "record_stream", "resize_", "resize_as_", "apply_",
    "map_", "map2_", "cuda", "to_dlpack", "__reduce_ex__", "__setstate__", "storage_offset", "tolist",
}
# Control flow whose subgraphs the record carries as graphs of their own, rebuilt like the top-level one.
_HIGHER_ORDER_ALLOWED = {"cond", "while_loop"}
# Operator methods: pure tensor arithmetic, which some releases (2.8 to 2.10) record as method calls
# (`x.__eq__(0)`) where later ones record `operator.eq`.
_DUNDER_ALLOWED = {f"__{name}__" for name in (
    "eq", "ne", "lt", "le", "gt", "ge", "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul",
    "truediv", "rtruediv", "itruediv", "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul",
    "rmatmul", "neg", "pos", "abs", "invert", "and", "rand", "iand", "or", "ror", "ior", "xor", "rxor", "ixor",
    "lshift", "rshift", "getitem", "setitem", "bool", "float", "int", "len")}


def _process_wide(attr: str) -> bool:
    """A getter or setter of process-wide state (`set_float32_matmul_precision`, `is_grad_enabled`, ...):
    a graph that reads or writes it can carry a counter from one replayed call to the next. The context
    managers Dynamo records (grad mode, autocast) are resolved before this rule, and closed after each call."""
    return (attr.startswith(("set_", "use_", "are_")) or attr.endswith("_enabled")
            or (attr.startswith("get_") and attr != "get_device"))


class NotReplayable(Exception):
    """The graph cannot be rebuilt without code that only the learner's process has."""


class Refused(Exception):
    """The graph record names something the replay does not allow, or is not a graph record."""


def resolve(name: str) -> Callable[..., Any]:
    """The callable an allowed target name stands for; Refused (or NotReplayable: a learner's operator)."""
    if not isinstance(name, str):
        raise Refused("a call target that is not a name")
    if name in _CONTEXT_CALLS or name in _ASSERTION_CALLS:
        return _CONTAINED.get(name) or named_call(name)
    if name in _SYMBOLIC_MATH:
        return named_call(name)
    if name == "builtins.getattr":  # `w.T`, `x.real`: Dynamo records a tensor's view attributes this way
        return _tensor_attribute
    if name.startswith("torch.ops."):
        parts = name.split(".")
        if len(parts) == 4 and parts[2] == "higher_order" and parts[3] in _HIGHER_ORDER_ALLOWED:
            return getattr(torch.ops.higher_order, parts[3])
        if len(parts) in (4, 5) and parts[2] in ("aten", "prims") and parts[3] not in _DENIED:
            packet = getattr(getattr(torch.ops, parts[2]), parts[3])
            return packet if len(parts) == 4 else getattr(packet, parts[4])
        if len(parts) in (4, 5) and parts[2] not in ("aten", "prims", "higher_order"):
            raise NotReplayable(f"the graph calls {parts[2]}::{parts[3]}, an operator defined by the file")
        raise Refused(f"the graph calls {name}, {_UNKNOWN}")
    space, _, attr = name.rpartition(".")
    if space == "operator" and attr in _OPERATOR_ALLOWED:
        return getattr(operator, attr)
    namespace = _FUNCTION_SPACES.get(space)
    if namespace is not None and (attr in _DENIED or _process_wide(attr)):
        raise Refused(f"the graph calls {name}, which reads or changes something outside the graph's tensors (a "
                      "file, a random seed, a process-wide setting): a fix computes with tensor operations only")
    if namespace is not None and not attr.startswith("_"):
        target = getattr(namespace, attr, None)
        if callable(target) and not isinstance(target, type):
            return target
    raise Refused(f"the graph calls {name}, {_UNKNOWN}")


# Refused by default: what the grader cannot tell apart from code that reaches outside the graph.
_UNKNOWN = ("which the grader does not replay: it is neither a public tensor operation of torch nor one of "
            "the context managers and assertions Dynamo records. If your code calls it on purpose, compute the "
            "same with public torch operations; if you did not write it, the grader does not know it yet: "
            "report it with this check's seed")


# Attributes of a tensor that are views of it or facts about it, read by `builtins.getattr` in a graph.
_TENSOR_ATTRIBUTES = {"T", "mT", "H", "mH", "real", "imag", "shape", "dtype", "device", "ndim", "layout"}


def _tensor_attribute(receiver: Any, name: Any) -> Any:
    if not isinstance(receiver, torch.Tensor) or name not in _TENSOR_ATTRIBUTES:
        raise Refused(f"the graph reads the attribute {name!r} of a {type(receiver).__name__}, which the grader does "
                      f"not replay: only a tensor's {', '.join(sorted(_TENSOR_ATTRIBUTES))}")
    return getattr(receiver, name)


def named_call(name: str) -> Callable[..., Any]:
    """One of the context or assertion calls, looked up attribute by attribute from `torch`."""
    value: Any = torch
    for part in name.split(".")[1:]:
        value = getattr(value, part, None)
        if value is None:
            raise Refused(f"the graph calls {name}, which this torch does not have")
    return value


# Context calls that open something, replayed so that `contained` can close what a graph leaves open.
_OPEN: list[Any] = []


def _opening(name: str) -> Callable[..., Any]:
    def enter(*args: Any) -> Any:
        context = named_call(name)(*args)
        _OPEN.append(context)
        return context
    return enter


def _closing(name: str) -> Callable[..., Any]:
    def exit_(context: Any) -> Any:
        if any(context is opened for opened in _OPEN):
            _OPEN[:] = [opened for opened in _OPEN if opened is not context]
        return named_call(name)(context)
    return exit_


_CONTAINED = {
    "torch.autograd.grad_mode._enter_inference_mode": _opening("torch.autograd.grad_mode._enter_inference_mode"),
    "torch.autograd.grad_mode._exit_inference_mode": _closing("torch.autograd.grad_mode._exit_inference_mode"),
    "torch.amp.autocast_mode._enter_autocast": _opening("torch.amp.autocast_mode._enter_autocast"),
    "torch.amp.autocast_mode._exit_autocast": _closing("torch.amp.autocast_mode._exit_autocast"),
}


@contextlib.contextmanager
def contained() -> Iterator[None]:
    """Replay graphs inside this: grad mode as it was, and every inference mode or autocast a graph
    entered and did not leave, left, so that nothing one replayed call sets reaches the next."""
    grad, depth = torch.is_grad_enabled(), len(_OPEN)
    try:
        yield
    finally:
        while len(_OPEN) > depth:
            _OPEN.pop().__exit__(None, None, None)
        torch._C._set_grad_enabled(grad)


def tensor_method(name: str) -> Callable[..., Any]:
    """A Tensor method call as a function that refuses any other receiver."""
    allowed_name = isinstance(name, str) and (name in _DUNDER_ALLOWED or not name.startswith("_"))
    if not allowed_name or name in _METHODS_DENIED or not hasattr(torch.Tensor, name):
        raise Refused(f"the graph calls the Tensor method {name!r}, which the grader does not replay: it reads or "
                      "changes something outside the graph's tensors (memory, storage, hooks, autograd, NumPy), "
                      "or is private to torch; compute the same with public tensor operations")

    def call(receiver: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(receiver, torch.Tensor):
            raise Refused(f"the method {name} was called on a {type(receiver).__name__}")
        return getattr(receiver, name)(*args, **kwargs)
    call.__name__ = name
    return call
