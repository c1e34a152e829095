"""Whether a graph's result depends on what an operation computes: the grader's own replay, with it moved.

A task that keeps `.item()` (capture-item, tolist-weights) is graded by `item-in-graph`: the replayed graph
must read the count in the graph, on a path to its output. A path is not a use: `count * 0` is on one. So the
grader replays the graph once more on the same input, with every value such a node reads moved by one, and
the read counts only where the result then changes (or the graph no longer runs, as when the count sizes a
tensor). A `while_loop` that decides the rounds (while-loop-nms) counts only where putting its result back to
what it started from changes the graph's result on one of the replayed calls, and where it runs more rounds on
some calls than on others: a loop that never runs a round, or always one, beside rounds unrolled while Dynamo
traced, does not. `feeders` reads which operations an operation is computed from, and `works_on_selected`
whether it works on the rows they select (capture-nonzero: the head on the selected rows, not on every row with
the count times zero added). Pure functions of the graph record and the grader's own
draws; nothing of the checked process runs.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import torch

from checker.grading import allowed, replay
from checker.grading.plain import fresh_copy, plain, tensors_in

SCALAR_READS = ("item", "_local_scalar_dense")  # the operations whose value is moved by one
MOVED = (*SCALAR_READS, "while_loop")  # and a loop, whose result is put back to what it started from


def moved_reads(record: Any, stand_ins: dict[str, Any], calls: list[list[Any]]) -> set[str]:
    """The operations of MOVED in the graph (by op name) whose result, moved (a scalar by one, a while_loop's
    carried values back to where they started), changes the graph's result on one of `calls` (replayed calls'
    values, copied here); empty where the graph has none."""
    moved = set()
    baselines: dict[int, Any] = {}  # each call's unmoved result, on a graph rebuilt for it: one for every name
    for name in MOVED:
        for index, inputs in enumerate(calls):
            module = replay.rebuild(record, **stand_ins)[0]
            if not _move(module, name):
                break
            if index not in baselines:
                baselines[index] = _run(replay.rebuild(record, **stand_ins)[0], inputs)
            baseline, result = baselines[index], _run(module, inputs)
            if result is None or baseline is None or repr(plain(result)) != repr(plain(baseline)):
                moved.add(name)
                break
    if "while_loop" in moved and len(set(loop_rounds(record, stand_ins, calls))) < 2:
        moved.discard("while_loop")  # the same rounds whatever the input: decided while Dynamo traced
    return moved


def loop_rounds(record: Any, stand_ins: dict[str, Any], calls: list[list[Any]]) -> list[int]:
    """How many rounds the graph's while_loops run, all together, on each of `calls` (-1 where it cannot run). A
    loop that decides the rounds runs as many as the input asks for: not the same number on every call."""
    rounds = []
    for inputs in calls:
        module = replay.rebuild(record, **stand_ins)[0]
        counter = [0]
        for node in module.graph.nodes:
            if node.op == "call_function" and _read_name(node.target) == "while_loop" \
                    and getattr(node.args[1], "op", "") == "get_attr":
                setattr(module, node.args[1].target, _Counted(getattr(module, node.args[1].target), counter))
        rounds.append(counter[0] if _run(module, inputs) is not None else -1)
    return rounds


class _Counted(torch.nn.Module):
    """A loop's body that counts its rounds."""

    def __init__(self, body: torch.nn.Module, counter: list[int]):
        super().__init__()
        self.body, self.counter = body, counter

    def forward(self, *args: Any) -> Any:
        self.counter[0] += 1
        return self.body(*args)


def _move(module: torch.fx.GraphModule, name: str) -> bool:
    """Put `value + 1` in place of each read called `name` for its users (a while_loop: the values it was
    started with); False where there is none."""
    reads = [node for node in module.graph.nodes if node.op in ("call_function", "call_method")
             and _read_name(node.target) == name]
    for node in reads:
        with module.graph.inserting_after(node):
            shifted = (module.graph.call_function(_started_with, (node.args[2],)) if name == "while_loop"
                       else module.graph.call_function(operator.add, (node, 1)))
        node.replace_all_uses_with(shifted, delete_user_cb=lambda user: user is not shifted)
    module.recompile()
    return bool(reads)


def _started_with(carried: Any) -> tuple[Any, ...]:
    """A while_loop that ran no round: its carried values as they came in."""
    return tuple(carried)


def _read_name(target: Any) -> str:
    """A rebuilt node's operation: an ATen overload by its own name (`_local_scalar_dense.default`), a Tensor
    method's stand-in (allowed.tensor_method) by the method's."""
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return target.__name__.split(".")[0]
    return replay.op_name(getattr(target, "__name__", target))


def _run(module: torch.fx.GraphModule, inputs: list[Any]) -> Any:
    try:
        with allowed.contained():
            return module(*(fresh_copy(value) for value in inputs))
    except Exception:  # noqa: BLE001 - a graph the moved value breaks depends on it
        return None


def feeders(record: dict[str, Any]) -> dict[str, list[str]]:
    """For each operation of the graph (by op name), the operations that feed every node of it: what it is
    computed from wherever it appears. `nonzero` feeds `linear` in a graph that projects only the rows it
    selects, not in one that projects every row and selects afterwards."""
    ancestors: dict[str, set[str]] = {}
    operations: dict[str, str] = {}
    fed: dict[str, set[str]] = {}
    for entry in record.get("nodes", ()):  # a record lists its nodes in the graph's order: inputs first
        if not isinstance(entry, dict):
            continue
        name = entry.get("name")
        above: set[str] = set()
        for parent in replay.node_names((entry.get("args"), entry.get("kwargs"))):
            above |= ancestors.get(parent, set()) | ({operations[parent]} if parent in operations else set())
        ancestors[name] = above
        if entry.get("op") in ("call_function", "call_method"):
            op = operations[name] = replay.op_name(entry.get("target"))
            fed[op] = fed[op] & above if op in fed else set(above)
    return {op: sorted(found) for op, found in fed.items()}


_MATRIX_PRODUCTS = {"linear", "matmul", "mm", "bmm", "addmm", "einsum", "tensordot", "__matmul__"}


def works_on_selected(record: Any, stand_ins: dict[str, Any], calls: list[list[Any]], source: str,
                      target: str) -> bool:
    """Whether, on every one of `calls`, each `target` of the graph (by op name; for a matrix product, each of
    them) works on as many rows as a `source` selected (its first input's leading dimensions; the source's
    first result's length): a head on the selected rows does, one on every row fed by the count times zero, or
    written as a `matmul` beside an identity `linear` on the selected rows, does not (capture-nonzero). And, on
    a call where the source selects nothing, the graph's operations together make fewer elements than the
    target's results on every row it could have selected would hold: a head on every row written in other
    operations (a broadcast multiply and a sum) makes them all whatever is selected."""
    targets = _MATRIX_PRODUCTS if target in _MATRIX_PRODUCTS else {target}  # a head may be written as any of them
    seen_target = False
    widths: set[int] = set()  # the targets' result widths (a head's vocabulary)
    idle: list[tuple[int, int]] = []  # per call that selects nothing: (elements made, rows it could have selected)
    for inputs in calls:
        counts: set[int] = set()
        rows: list[int] = []
        made, selectable = [0], [0]

        class Watch(torch.fx.Interpreter):
            def run_node(self, node: torch.fx.Node) -> Any:
                name = _read_name(node.target) if node.op in ("call_function", "call_method") else ""
                if name in targets:
                    first = self.fetch_args_kwargs_from_env(node)[0][0]
                    rows.append(math.prod(first.shape[:-1]) if isinstance(first, torch.Tensor) else -1)
                elif name == source:
                    first = self.fetch_args_kwargs_from_env(node)[0][0]
                    selectable[0] = max(selectable[0], first.numel() if isinstance(first, torch.Tensor) else 0)
                result = super().run_node(node)
                if name:
                    made[0] += sum(t.numel() for t in tensors_in(result))
                if name in targets and isinstance(result, torch.Tensor) and result.dim():
                    widths.add(int(result.shape[-1]))
                if name == source:
                    first = result[0] if isinstance(result, (tuple, list)) else result
                    counts.add(int(first.shape[0]) if isinstance(first, torch.Tensor) else -1)
                return result

        try:
            with allowed.contained():
                Watch(replay.rebuild(record, **stand_ins)[0]).run(*(fresh_copy(value) for value in inputs))
        except Exception:  # noqa: BLE001 - a graph the grader cannot run shows nothing
            return False
        if any(count not in counts for count in rows):
            return False
        seen_target = seen_target or bool(rows)
        if counts == {0}:
            idle.append((made[0], selectable[0]))
    return seen_target and all(made < selectable * max(widths, default=1) for made, selectable in idle)



def merged_feeders(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """feeders over several graphs: what feeds an operation in every graph that has it."""
    merged: dict[str, set[str]] = {}
    for record in records:
        for op, found in feeders(record).items():
            merged[op] = merged[op] & set(found) if op in merged else set(found)
    return {op: sorted(found) for op, found in merged.items()}
