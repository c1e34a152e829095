"""Escape hatches in a graph record: vendored code a fix puts into the graph unread.

A fix for code the learner may not change can put it into the graph without Dynamo tracing it:
`nonstrict_trace` on the vendored function, `allow_in_graph` on the vendored autograd.Function. The graph
then calls the file's own code. In the checked process, such a call is recorded by the vendored object's
name (never its code); the grader replays it with the reference solution's copy of that object, which the
exercise's `unchanged` contract holds the file's copy to (the same text, read by the grader), or not at all.
How the call looks differs by release (below); an unknown form stays NotReplayable.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch._dynamo.variables.misc import produce_trampoline_autograd_apply

from checker.grading.allowed import NotReplayable, Refused

# nonstrict_trace's call is `flat_apply(function spec, input spec, *flat arguments)`, returning the function's
# result (torch 2.8), or `flat_apply_capture(leaf callable, input spec, *flat arguments)`, returning it
# flattened (2.13, 2.15); the function is the learner's, wrapped by Dynamo. allow_in_graph's autograd.Function
# is called through a trampoline (2.8 to 2.15).
_FLAT_APPLY, _NONSTRICT_APPLY = "vendored:flat_apply", "vendored:nonstrict_apply"


def leaf_function(value: Any) -> Any:
    """The learner's function behind nonstrict_trace's callable in a graph (None for anything else)."""
    if type(value).__name__ == "_LeafCallable":
        wrapper = getattr(value, "_fn", None)
    elif isinstance(value, pytree.TreeSpec) and \
            type(getattr(value.context, "value", None)).__name__ == "_ConstantFunction":
        wrapper = value.context.value.func
    else:
        return None
    inner = [cell.cell_contents for cell in (getattr(wrapper, "__closure__", None) or ())
             if isinstance(cell.cell_contents, types.FunctionType)]
    return getattr(inner[0], "__wrapped__", inner[0]) if len(inner) == 1 else None


def layout(spec: pytree.TreeSpec) -> str:
    try:
        return pytree.treespec_dumps(spec)
    except Exception as err:  # noqa: BLE001 - a layout holding objects of the file's own
        raise NotReplayable(f"an argument layout the grader cannot rebuild ({type(err).__name__})") from None


def vendored_call(target: Any) -> str:
    """"vendored:NAME" for a call into code of the file that an escape hatch put in the graph, else ""."""
    if isinstance(target, torch._ops.HigherOrderOperator) and target.name() == "flat_apply":
        return _FLAT_APPLY
    if not isinstance(target, types.FunctionType):
        return ""
    if target.__name__ == "flat_apply_capture" and (target.__module__ or "").startswith("torch._dynamo."):
        return _NONSTRICT_APPLY
    if getattr(target, "_origin", None) is produce_trampoline_autograd_apply:
        classes = [cell.cell_contents for cell in (target.__closure__ or ()) if isinstance(cell.cell_contents, type)]
        return f"vendored:{classes[0].__qualname__}" if len(classes) == 1 else ""
    return ""


def held_object(entry: dict[str, Any], vendored: dict[str, Any]) -> Any:
    """What a get_attr node of such a call holds: the argument layout, or the reference's copy of the function."""
    if "treespec" in entry:
        try:
            return pytree.treespec_loads(str(entry["treespec"]))
        except Exception as err:  # noqa: BLE001 - whatever the record holds, it is no layout the grader reads
            raise Refused(f"an argument layout that is not one ({type(err).__name__})") from None
    name = entry["vendored"]
    if not isinstance(name, str) or name not in vendored:
        raise NotReplayable(f"a call into code of the file itself ({str(name)[:100]})")
    return vendored[name]


def vendored_target(entry: dict[str, Any], vendored: dict[str, Any], objects: dict[str, Any]) -> tuple[Any, list]:
    """The grader's callable for a recorded call into vendored code, and the recorded arguments it is given."""
    target, args = str(entry["target"]), entry.get("args") or {}
    items = args.get("tuple") if isinstance(args, dict) else None
    if not isinstance(items, list):
        raise Refused("a call without its arguments")
    if target in (_FLAT_APPLY, _NONSTRICT_APPLY):  # (function, layout, *flat arguments): the first two from get_attr
        held = [objects.get(item.get("node")) if isinstance(item, dict) else None for item in items[:2]]
        if len(items) < 2 or not callable(held[0]) or not isinstance(held[1], pytree.TreeSpec):
            raise Refused("a nonstrict_trace call without its function and argument layout")
        apply = _nonstrict_apply(held[0], held[1], flatten=target == _NONSTRICT_APPLY)
        return apply, items[2:]
    cls = vendored.get(target.removeprefix("vendored:"))
    if not isinstance(cls, type) or not issubclass(cls, torch.autograd.Function):
        raise NotReplayable(f"a call into code of the file itself ({target.removeprefix('vendored:')[:100]})")

    def apply(*args: Any) -> Any:  # a function of this module: FX would name `cls.apply` after torch's Function
        return cls.apply(*args)

    apply.__name__ = f"apply_{cls.__name__}"
    return apply, items


def _nonstrict_apply(fn: Any, layout: pytree.TreeSpec, flatten: bool) -> Any:
    """What nonstrict_trace's call does: the flat arguments laid out again, the function called on them, and
    (`flatten`, torch 2.13) its result flattened, for the graph to take apart with getitem nodes."""
    def apply(*flat: Any) -> Any:
        args, kwargs = pytree.tree_unflatten(list(flat), layout)
        result = fn(*args, **kwargs)
        return pytree.tree_leaves(result) if flatten else result

    apply.__name__ = f"nonstrict_{getattr(fn, '__name__', 'function')}"
    return apply
