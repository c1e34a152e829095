"""The replay accepts what Dynamo records for correct code, and refuses the rest by principle, saying why.

Each pattern below is traced by Dynamo on the installed torch, recorded as plain data, rebuilt and replayed
the way the grader does; what a replayed call sets (grad mode, inference mode, autocast) ends with it.
"""

from __future__ import annotations

import pytest
import torch

from checker.grading import allowed, replay

import replay_patterns  # not a test module: its `assert` stays Python's own, as in a learner's file


def _recorded(fn, *args):
    """The graph records Dynamo captures for fn(*args), compiled with fullgraph=True."""
    records = []

    def backend(gm, example_inputs):
        records.append(replay.graph_record(gm, tuple(example_inputs)))
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*args)
    torch._dynamo.reset()
    assert len(records) == 1
    return records[0]


PATTERNS = [getattr(replay_patterns, name) for name in replay_patterns.__all__]


@pytest.mark.parametrize("fn", PATTERNS, ids=lambda fn: fn.__name__)
def test_a_correct_pattern_is_recorded_rebuilt_and_replayed(fn):
    x, w = torch.randn(4, 4), torch.randn(4, 4, requires_grad=True)
    record = _recorded(fn, x, w)
    module, inputs, called = replay.rebuild(record)
    values = replay.graph_inputs(inputs, ["x", "w"], (x, w), {})
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
    with allowed.contained():
        replayed = module(*values)
    assert (torch.is_grad_enabled(), torch.is_inference_mode_enabled()) == (grad, inference)
    want = fn(x, w)
    got = replayed[0] if isinstance(replayed, (list, tuple)) and not isinstance(want, tuple) else replayed
    for g, e in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        torch.testing.assert_close(g, e)


def test_every_named_call_resolves_on_this_torch():
    for name in (*allowed._CONTEXT_CALLS, *allowed._ASSERTION_CALLS):
        assert callable(replay.resolve(name)), name


def _record(*calls):
    """A graph record of one placeholder and the given (target, args) calls, returning the placeholder."""
    nodes = [{"name": "x", "op": "placeholder", "input": {"kind": "argument", "name": "x"}}]
    for number, (target, args) in enumerate(calls):
        nodes.append({"name": f"n{number}", "op": "call_function", "target": target,
                      "args": {"tuple": list(args)}, "kwargs": {"dict": []}})
    nodes.append({"name": "output", "op": "output", "args": {"tuple": [{"node": "x"}]}})
    return {"nodes": nodes, "subgraphs": {}}


def test_what_a_replayed_graph_leaves_open_is_closed_after_it():
    record = _record(("torch._C._set_grad_enabled", [False]),
                     ("torch.autograd.grad_mode._enter_inference_mode", [True]),
                     ("torch.amp.autocast_mode._enter_autocast", ["cpu", {"dtype": "bfloat16"}, True, None]))
    module, _, _ = replay.rebuild(record)
    with allowed.contained():
        module(torch.ones(2))
        assert not torch.is_grad_enabled() and torch.is_inference_mode_enabled()  # inside, as the graph set it
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    assert not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("target, says", [
    ("torch.save", "outside the graph's tensors"),
    ("torch.manual_seed", "outside the graph's tensors"),
    ("torch._C._set_num_threads_hidden", "does not replay"),
    ("builtins.open", "does not replay"),
])
def test_a_refused_operation_says_why_and_what_to_do(target, says):
    with pytest.raises(replay.Refused) as refused:
        replay.rebuild(_record((target, [])))
    assert says in str(refused.value) and "not an operation a fix may use" not in str(refused.value)


def test_a_call_of_an_operator_packet_names_its_namespace():
    assert replay.target_name(torch.ops.aten.sin) == "torch.ops.aten.sin"
    assert replay.resolve("torch.ops.aten.sin") is torch.ops.aten.sin
    with pytest.raises(replay.NotReplayable, match="gbcourse::op, an operator defined by the file"):
        replay.resolve("torch.ops.gbcourse.op")
