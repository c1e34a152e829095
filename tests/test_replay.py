"""The replay accepts what Dynamo records for correct code, and refuses the rest by principle, saying why.

Each pattern below is traced by Dynamo on the installed torch, recorded as plain data, rebuilt and replayed
the way the grader does; what a replayed call sets (grad mode, inference mode, autocast) ends with it.
"""

from __future__ import annotations

import inspect

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


def _vendored_exercise(exercise_id):
    """The exercise, its solution module (graded code of the course) and the reference's copies of its vendored code."""
    from checker.course.manifest import find_exercise
    from checker.grading import audit, reference

    exercise = find_exercise(exercise_id)
    return exercise, reference.solution_module(exercise), audit._vendored_code(exercise)


@pytest.mark.parametrize("exercise_id, make_inputs", [
    ("nonstrict-vendored", lambda: (torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 4),
                                    torch.rand(2, 3) > 0.3)),
    ("fused-norm-allow-in-graph", lambda: (torch.randn(2, 5, 16),)),
])
def test_vendored_code_an_escape_hatch_puts_in_the_graph_is_replayed_with_the_references_copy(exercise_id, make_inputs):
    """nonstrict_trace on the vendored function, allow_in_graph on the vendored autograd.Function: the graph calls
    the file's code unread. The record names it; the grader replays the call with the reference's copy (an
    `unchanged` contract holds the file's to the same text), and refuses to without one."""
    exercise, solution, vendored = _vendored_exercise(exercise_id)
    entry = getattr(solution, exercise.entry)
    record = _recorded(entry, *make_inputs())
    assert any(str(node.get("target", "")).startswith("vendored:") for node in record["nodes"])
    with pytest.raises(allowed.NotReplayable):
        replay.rebuild(record)  # no copy of the vendored code: nothing to replay it with
    fresh = make_inputs()  # other values than the recorded call's
    module, inputs, called = replay.rebuild(record, vendored=vendored)
    parameters = list(inspect.signature(entry.forward if isinstance(entry, torch.nn.Module) else entry).parameters)
    values = replay.graph_inputs(inputs, parameters, fresh, {})
    with torch.no_grad():
        torch.testing.assert_close(module(*values)[0], entry(*fresh))
    assert any(name.startswith("vendored:") for name in called)
