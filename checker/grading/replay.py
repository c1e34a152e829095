"""Graphs as data: recorded in the checked process, rebuilt and replayed by the grader on inputs of its own.

Why this is the decisive check. The checked process runs the learner's code, so everything it reports
(outputs, graph breaks, tampering findings, even whole result frames written to the result pipe) can be
made up by that code. What it cannot make up is a graph that computes the reference on inputs drawn
after it has ended: the replay seed is drawn by the grader only once the trial process is gone
(draws.py), so no code in that process could have seen those inputs. The grader therefore

  1. takes the FX graphs the trial process says Dynamo captured in default mode, as plain data: every
     node's op, its target named from an allow-list of torch operations (functions of torch and its
     functional namespaces, ATen overloads, Tensor methods, `operator` functions, `torch.cond` and
     `torch.while_loop` with their branch and body graphs), its arguments as constants and references to
     other nodes. No pickled code: the record loads with `weights_only=True`, and a target outside the
     allow-list is refused by name;
  2. rebuilds them in a process that never imported learner code (the grader itself; see audit.py),
     feeding each graph the fresh inputs for its arguments and the recorded values for the rest
     (parameters, module-level tensors);
  3. requires every call to have run exactly one graph (a split function had a graph break, whatever the
     report says), and replays each graph on the fresh draws of every case that shares its signature
     (the shapes, dtypes and plain values Dynamo guards on): a graph specialised to one branch, to the
     call count or to the example values gives the wrong answer on some of them;
     for an exercise about recompilation, the calls together may use no more graphs than it allows, and
     the graph that served the most sizes must compute the reference at sizes no call of the check had
     (draws.unseen_sizes): one that picks its answer by the size it meets is a recompilation in disguise;
  4. runs each graph once more on fake tensors with the settings the exercise allows, as Dynamo's default
     mode would: an `.item()` without `capture_scalar_outputs`, a `nonzero` or boolean mask without
     `capture_dynamic_output_shape_ops` is refused there, which closes the cases where fullgraph=True
     quietly captures what default mode breaks on; the manifest's `forbidden_ops` add lesson-specific
     operations that must not appear.

A graph that passes all four computes the reference on inputs its author could not see: that is the fix,
however it was obtained. What a submission can still do: for an exercise whose fix is a configuration
flag alone (capture-item, capture-nonzero), fabricate result frames around the graph that fullgraph=True
captures from the unfixed code, since the graph is then the fixed one; fake what its logging prints
(prints are not graph operations); where the graph calls an operator the learner's file defines (the
custom-op exercises), the graph around it is replayed with the reference's step in its place (the
manifest's `opaque_step`), so the operator's body is believed, not replayed; where an escape hatch puts
vendored code that the file may not change into the graph unread (nonstrict_trace on the vendored
function, allow_in_graph on the vendored autograd.Function), the call is replayed with the reference's
copy of that code, since an `unchanged` contract holds the file's copy to the same text; and where the
graph calls other Python of the file (a wrapper of its own around the vendored code), nothing can be
replayed without the learner's code: the report says so and the verdict rests on the sandboxed run on
fresh inputs, the tamper check and the other checks. A
recorded graph can also make the replay slow or large: it runs allow-listed operations only, but in the
grader (a size cap on records, and for an exam a container per grading run, bound that).

Why not pickled graphs, or Dynamo's own serialisation: loading either runs or imports code named by the
record. Here every name is looked up in fixed namespaces and checked against the allow-list before
anything is called, and the record itself is plain lists, dicts, numbers, strings and tensors.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.fx
from torch._dynamo.variables.misc import produce_trampoline_autograd_apply
from torch.utils._pytree import TreeSpec

from checker.grading import hatches
from checker.grading.allowed import NotReplayable, Refused, resolve, tensor_method

_AUTOGRAD_FUNCTION = torch.ops.higher_order.autograd_function_apply  # a traced autograd.Function
MAX_NODES = 5000  # a graph larger than this is no exercise's fix
MAX_DEPTH = 4  # nested branch and body graphs of torch.cond and torch.while_loop

# --- in the checked process: graphs to data ---------------------------------------------------------

def graph_record(gm: torch.fx.GraphModule, example_inputs: tuple[Any, ...], depth: int = 0) -> dict[str, Any]:
    """One captured graph as plain data (see the module docstring); raises NotReplayable for what is not."""
    nodes, subgraphs, inputs = [], {}, iter(example_inputs)
    for node in gm.graph.nodes:
        record = {"name": node.name, "op": node.op}
        if node.op == "placeholder":
            record["input"] = _input_record(node, next(inputs, None)) if depth == 0 else {"kind": "operand"}
        elif node.op == "get_attr":
            value = getattr(gm, node.target)
            if isinstance(value, torch.fx.GraphModule):
                subgraphs[node.target] = graph_record(value, (), depth + 1)
                record["target"] = node.target
            elif isinstance(value, torch.Tensor):
                record["constant"] = value.detach().clone()
            elif (leaf := hatches.leaf_function(value)) is not None:  # nonstrict_trace's function, by name
                record["vendored"] = leaf.__qualname__
            elif isinstance(value, TreeSpec):  # how nonstrict_trace's call lays out its arguments
                record["treespec"] = hatches.layout(value)
            else:
                raise NotReplayable(f"a call into code of the file itself ({type(value).__name__})")
        elif node.op == "call_function" and (vendored := hatches.vendored_call(node.target)):
            record["target"], record["args"] = vendored, _encode(node.args)
        elif node.op in ("call_function", "call_method"):
            if node.op == "call_function" and _outside_torch(node.target):  # e.g. allow_in_graph on a function
                raise NotReplayable(f"a call into code of the file itself ({getattr(node.target, '__qualname__', '?')})")
            if node.op == "call_function" and node.target is _AUTOGRAD_FUNCTION:  # its backward is not in the graph
                raise NotReplayable("a call into code of the file itself (an autograd.Function, whose backward the "
                                    "graph does not hold)")
            record["target"] = node.target if node.op == "call_method" else target_name(node.target)
            record["args"], record["kwargs"] = _encode(node.args), _encode(dict(node.kwargs))
        elif node.op == "output":
            record["args"] = _encode(node.args)
        else:
            raise NotReplayable(f"a {node.op} node")
        nodes.append(record)
    return {"nodes": nodes, "subgraphs": subgraphs}


def _outside_torch(target: Any) -> bool:
    """A Python function of neither torch, nor `operator` or `math`: the file's own (allow_in_graph); or the
    trampoline Dynamo calls an autograd.Function of the file through (allow_in_graph on its class)."""
    if not isinstance(target, types.FunctionType):
        return False
    if getattr(target, "_origin", None) is produce_trampoline_autograd_apply:
        return True
    module = target.__module__ or ""
    return not (module == "torch" or module.startswith("torch.") or module in ("operator", "_operator", "math"))


def target_name(target: Any) -> str:
    """A call target's dotted name, as the replay resolves it again."""
    if isinstance(target, torch._ops.OpOverload):
        return f"torch.ops.{target.namespace}.{target._opname}.{target._overloadname}"
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"torch.ops.higher_order.{target.name()}"
    if isinstance(target, torch._ops.OpOverloadPacket):  # `torch.ops.ns.op(...)` called without an overload
        namespace, _, op = target._qualified_op_name.partition("::")
        return f"torch.ops.{namespace}.{op}"
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or ""
    if module == "_operator":
        module = "operator"
    if module in ("torch", "") and getattr(torch, name, None) is target:
        module = "torch"
    return f"{module}.{name}"


def _input_record(node: torch.fx.Node, example: Any) -> dict[str, Any]:
    source = getattr(node, "_dynamo_source", None)
    kind = type(source).__name__
    if kind == "LocalSource" and getattr(source, "is_input", False) and not isinstance(example, torch.SymInt):
        return {"kind": "argument", "name": source.local_name}
    base = getattr(source, "base", None)
    if kind == "GetItemSource" and type(base).__name__ == "LocalSource" and getattr(base, "is_input", False) \
            and isinstance(source.index, int) and isinstance(example, torch.Tensor):
        return {"kind": "item", "name": base.local_name, "index": source.index}  # an element of a list argument
    if kind == "TensorPropertySource" and type(base).__name__ == "LocalSource":
        return {"kind": source.prop.name.lower(), "name": base.local_name, "index": source.idx}
    if isinstance(example, torch.Tensor):
        return {"kind": "value", "value": example.detach().clone().as_subclass(torch.Tensor)}
    if isinstance(example, (bool, int, float)):
        return {"kind": "value", "value": example}
    raise NotReplayable(f"a graph input from {source.name if source is not None else 'nowhere'}")


def _encode(value: Any) -> Any:
    if isinstance(value, torch.fx.Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):  # FX keeps lists as its own immutable_list: recorded as a list
        return {"tuple" if isinstance(value, tuple) else "list": [_encode(item) for item in value]}
    if isinstance(value, dict):
        return {"dict": [[str(key), _encode(item)] for key, item in value.items()]}
    if isinstance(value, slice):
        return {"slice": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, (torch.memory_format, torch.layout)):
        return {"torch": str(value).removeprefix("torch.")}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, torch.Tensor):
        return {"tensor": value.detach().clone().as_subclass(torch.Tensor)}
    raise NotReplayable(f"an argument of type {type(value).__name__}")


# --- in the grader's replay process: data to graphs --------------------------------------------------

def rebuild(record: Any, depth: int = 0, operator: Any = None,
            vendored: dict[str, Any] | None = None) -> tuple[torch.fx.GraphModule, list[dict[str, Any]], set[str]]:
    """A GraphModule from a graph record, its top-level inputs, and every target name it calls.

    `operator`: the reference that stands for the one operator of the learner's file the graph may call
    (an operator exercise's `opaque_step`); without it, such a call is NotReplayable. `vendored`: the
    reference's copies of the code the file may not change, by name, for the calls an escape hatch put
    in the graph (nonstrict_trace, allow_in_graph); a call to any other code of the file is NotReplayable."""
    vendored = vendored or {}
    objects: dict[str, Any] = {}  # get_attr nodes that hold no tensor: a function or an argument layout
    if not isinstance(record, dict) or not isinstance(record.get("nodes"), list):
        raise Refused("a graph record that is not one")
    if depth > MAX_DEPTH or len(record["nodes"]) > MAX_NODES:
        raise Refused("a graph far larger than any fix")
    graph, root, env, inputs, called = torch.fx.Graph(), torch.nn.Module(), {}, [], set()
    subgraphs = record.get("subgraphs") or {}
    for entry in record["nodes"]:
        op, name = entry.get("op"), entry.get("name")
        if not isinstance(name, str) or not name.isidentifier() or name in env:
            raise Refused("a graph node without a proper name")
        if op == "placeholder":
            env[name] = graph.placeholder(name)
            inputs.append(entry.get("input") or {})
        elif op == "get_attr" and ("vendored" in entry or "treespec" in entry):
            objects[name] = hatches.held_object(entry, vendored)
            if "vendored" in entry:
                called.add(f"vendored:{entry['vendored']}")
        elif op == "get_attr":
            if "constant" in entry:
                if not isinstance(entry["constant"], torch.Tensor):
                    raise Refused("a graph constant that is not a tensor")
                root.register_buffer(name, entry["constant"].clone())  # a copy per rebuild: no state kept
                env[name] = graph.get_attr(name)
            else:
                target = entry.get("target")
                if not isinstance(target, str) or not target.isidentifier() or target not in subgraphs:
                    raise Refused("a branch graph that is not in the record")
                module, _, inner = rebuild(subgraphs[target], depth + 1, operator, vendored)
                called |= inner
                root.add_module(target, module)
                env[name] = graph.get_attr(target)
        elif op == "call_function" and str(entry.get("target")).startswith("vendored:"):
            called.add(entry.get("target"))
            fn, args = hatches.vendored_target(entry, vendored, objects)
            env[name] = graph.call_function(fn, tuple(_decode(item, env) for item in args))
        elif op == "call_function":
            called.add(entry.get("target"))
            try:
                fn = resolve(entry.get("target"))
            except NotReplayable:
                if operator is None:
                    raise
                fn = operator  # the learner's operator, replayed as the reference's
            env[name] = graph.call_function(fn, _decode(entry.get("args"), env), _decode(entry.get("kwargs"), env))
        elif op == "call_method":
            called.add(entry.get("target"))
            fn = tensor_method(entry.get("target"))
            env[name] = graph.call_function(fn, _decode(entry.get("args"), env), _decode(entry.get("kwargs"), env))
        elif op == "output":
            graph.output(_decode(entry.get("args"), env)[0])
        else:
            raise Refused(f"a graph node of kind {op!r}")
    mine = file_operators(called)
    if depth == 0 and operator is not None and len(mine) > 1:
        raise Refused(f"the graph calls {len(mine)} operators of the file ({', '.join(mine)}), where this exercise's "
                      "fix makes one step an operator")
    return torch.fx.GraphModule(root, graph), inputs, called


def live_targets(record: dict[str, Any], depth: int = 0) -> set[str]:
    """The targets of the nodes a graph's output depends on (those of its branch and body graphs included):
    what the graph computes with, not a node left in it unused."""
    nodes = {entry.get("name"): entry for entry in record.get("nodes", ()) if isinstance(entry, dict)}
    output = next((entry for entry in nodes.values() if entry.get("op") == "output"), None)
    live, stack, found = set(), [output] if output else [], set()
    while stack:
        entry = stack.pop()
        for name in node_names((entry.get("args"), entry.get("kwargs"))):
            if name in nodes and name not in live:
                live.add(name)
                stack.append(nodes[name])
    for name in live:
        entry = nodes[name]
        if entry.get("op") in ("call_function", "call_method"):
            found.add(str(entry.get("target")))
        sub = (record.get("subgraphs") or {}).get(entry.get("target")) if entry.get("op") == "get_attr" else None
        if isinstance(sub, dict) and depth < MAX_DEPTH:
            found |= live_targets(sub, depth + 1)
    return found


# Other names of one operation (torch's aliases and Python's reflected operators), counted as one by most_copies.
_SAME_OPERATION = {"subtract": "sub", "rsub": "sub", "multiply": "mul", "rmul": "mul", "divide": "div",
                   "truediv": "div", "true_divide": "div", "rtruediv": "div", "radd": "add", "greater": "gt",
                   "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne", "negative": "neg",
                   "absolute": "abs", "clip": "clamp", "and": "logical_and", "bitwise_and": "logical_and",
                   "or": "logical_or", "bitwise_or": "logical_or", "invert": "logical_not",
                   "bitwise_not": "logical_not"}


def most_copies(record: dict[str, Any]) -> tuple[int, str]:
    """How many times the graph calls its most repeated operation (getitem aside), its branch and body graphs
    included, and which: a loop unrolled while Dynamo traces leaves one copy of its round per iteration."""
    counts: dict[str, int] = {}
    todo = [(record, 0)]
    while todo:
        graph, depth = todo.pop()
        for entry in graph.get("nodes", ()):
            if isinstance(entry, dict) and entry.get("op") in ("call_function", "call_method"):
                name = op_name(entry.get("target")).strip("_")  # `sub_`, `__sub__`: `sub`
                name = _SAME_OPERATION.get(name, name)  # `torch.subtract` is `sub` too
                counts[name] = counts.get(name, 0) + (name != "getitem")
        todo += [(sub, depth + 1) for sub in (graph.get("subgraphs") or {}).values()
                 if isinstance(sub, dict) and depth < MAX_DEPTH]
    return max(((count, name) for name, count in counts.items()), default=(0, ""))


def node_names(value: Any) -> list[str]:
    if isinstance(value, dict):
        if set(value) == {"node"}:
            return [value["node"]]
        return [name for item in value.values() for name in node_names(item)]
    if isinstance(value, (list, tuple)):
        return [name for item in value for name in node_names(item)]
    return []


def file_operators(called: set[str]) -> list[str]:
    """The operators of the learner's file among a graph's targets, as "namespace::name"."""
    found = set()
    for name in called:
        parts = str(name).split(".")
        if parts[:2] == ["torch", "ops"] and len(parts) in (4, 5) and parts[2] not in ("aten", "prims", "higher_order"):
            found.add(f"{parts[2]}::{parts[3]}")
    return sorted(found)


def _decode(value: Any, env: dict[str, torch.fx.Node]) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()  # a constant argument of its own per rebuild: an in-place op cannot keep a count
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise Refused("a graph argument that is not one")
    (kind, inner), = value.items()
    if kind == "node":
        if inner not in env:
            raise Refused(f"a reference to an unknown node {inner!r}")
        return env[inner]
    if kind in ("tuple", "list") and isinstance(inner, list):
        items = [_decode(item, env) for item in inner]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict" and isinstance(inner, list):
        return {str(key): _decode(item, env) for key, item in inner}
    if kind == "slice" and isinstance(inner, list) and len(inner) == 3:
        return slice(*(_decode(item, env) for item in inner))
    if kind == "dtype" and isinstance(getattr(torch, str(inner), None), torch.dtype):
        return getattr(torch, inner)
    if kind == "device" and inner == "cpu":
        return torch.device("cpu")
    if kind == "torch" and isinstance(getattr(torch, str(inner), None), (torch.memory_format, torch.layout)):
        return getattr(torch, inner)
    if kind == "ellipsis":
        return Ellipsis
    if kind == "tensor" and isinstance(inner, torch.Tensor):
        return inner
    raise Refused(f"a graph argument of kind {kind!r}")


# Operations whose Python value ("scalar") or output shape ("shape") depends on tensor data: only a
# graph holding one that the exercise's settings do not allow needs the run on fake tensors (audit.py),
# which costs more than the rest of the replay together.
_SCALAR = {"item", "_local_scalar_dense", "tolist", "__int__", "__float__", "__bool__", "__index__", "is_nonzero",
           "equal", "allclose"}  # the dunders too: `int(t)` is an `.item()` by another name
_SHAPE = {"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "repeat_interleave", "bincount",
          "histc", "nonzero_static"}
_INDEXING = {"getitem", "setitem", "index", "index_put", "index_put_", "__getitem__", "__setitem__"}


def reads_data(target: Any) -> bool:
    """A node's target (a callable, or a method's name) reads a tensor's values or sizes its output by them."""
    name = target if isinstance(target, str) else op_name(target_name(target))
    return op_name(name) in _SCALAR | _SHAPE


def is_indexing(target: Any) -> bool:
    """A node's target (a callable, or a method's name) is an indexing: data-dependent only for a mask."""
    name = target if isinstance(target, str) else op_name(target_name(target))
    return op_name(name) in _INDEXING


def op_name(target: Any) -> str:
    """A recorded target's operation, as the manifest and the contracts name it: "torch.ops.aten.nonzero.default"
    and "torch.ops.aten.nonzero" are "nonzero", "torch.ops.higher_order.while_loop" is "while_loop",
    "torch.nonzero" and the method "nonzero" are "nonzero"."""
    parts = str(target).split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) >= 4 and parts[2] != "higher_order":
        return parts[3]
    return parts[-1]


def data_dependence(record: dict[str, Any], surely: bool = False) -> set[str]:
    """Which kinds of data-dependent operation ("scalar", "shape") a graph record may hold; with `surely`,
    only those it holds for certain (not an indexing by a tensor, which is data-dependent only for a mask)."""
    kinds = set()
    for entry in record.get("nodes", ()):
        short = op_name(entry.get("target", ""))
        args = (entry.get("args") or {}).get("tuple", [])
        if short in _SCALAR:
            kinds.add("scalar")
        if short in _SHAPE or (short == "where" and len(args) == 1):
            kinds.add("shape")
        if not surely and short in _INDEXING and len(args) > 1 and "'node'" in repr(args[1:]):
            kinds.add("shape")
    for sub in (record.get("subgraphs") or {}).values():
        kinds |= data_dependence(sub, surely)
    return kinds


def graph_inputs(inputs: list[dict[str, Any]], parameters: list[str], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> list[Any]:
    """The values a rebuilt graph is fed for one call: the call's own arguments, recorded values otherwise."""
    bound = dict(zip(parameters, args)) | kwargs
    values = []
    for spec in inputs:
        kind = spec.get("kind")
        if kind == "value":
            values.append(spec.get("value"))
            continue
        if kind == "item" and isinstance(spec.get("index"), int):
            # An element of a list or tuple argument; where the name is bound to no such argument, the element of
            # the *args of a wrapper that Dynamo compiled in the entry's place (a decorator such as
            # dont_skip_tracing's, whose `args` the entry's signature does not have).
            container = bound.get(spec.get("name"))
            container = container if isinstance(container, (list, tuple)) else args
            if not 0 <= spec["index"] < len(container):
                raise Refused(f"a graph input from an element the call has not ({spec.get('name')!r})")
            values.append(container[spec["index"]])
            continue
        if spec.get("name") not in bound:
            raise Refused(f"a graph input named after no argument of the call ({spec.get('name')!r})")
        value = bound[spec["name"]]
        if kind == "argument":
            # a float argument that is a graph input is one Dynamo did not specialise: it passes it to the graph
            # as a 0-d float64 tensor, which the graph reads with `.item()`
            values.append(torch.tensor(value, dtype=torch.float64) if type(value) is float else value)
        elif kind in ("size", "stride") and isinstance(value, torch.Tensor) and isinstance(spec.get("index"), int):
            values.append(getattr(value, kind)(spec["index"]))
        else:
            raise Refused(f"a graph input of kind {kind!r}")
    return values
