"""What the book's prose says torch does, measured on the installed torch (every supported release).

The notebooks' stored outputs are torch 2.13's; these tests hold the claims the prose draws from them on the
torch that runs the suite (measured the same on 2.8, 2.13 and 2.15): an escaping exception switches a
function's compilation off (python-side-effects), a break in a `with` or `try` block costs the rest of the
function while one in a loop costs all of it, torch's own modules called from a skipped frame run eagerly
(untraceable-calls), `while_loop` refuses a body that returns a carried tensor unchanged
(unbacked-symbols), and a new module of the same class reuses the compiled code while a changed
attribute recompiles (recompilations).
"""

from __future__ import annotations

import contextlib
import time

import pytest
import torch

from checker.dynamo.engine import diagnose


class BoxFormatError(ValueError):
    pass


def box_head(features, anchors):
    if anchors.shape[-1] != 4:
        raise BoxFormatError(f"anchors need 4 coordinates, got {anchors.shape[-1]}")
    return anchors + features.mean(dim=-1)[:, :4]


@pytest.fixture
def graph_runs():
    """A backend that counts the runs of the graphs it compiled; Dynamo reset around the test."""
    runs: list[int] = []

    def backend(gm, example_inputs):
        def run(*args):
            runs.append(1)
            return gm.forward(*args)
        return run

    torch._dynamo.reset()
    yield runs, backend
    torch._dynamo.reset()


def runs_of(runs, call) -> int:
    before = len(runs)
    with contextlib.suppress(BoxFormatError):
        call()
    return len(runs) - before


def test_an_escaping_exception_turns_compilation_off_until_reset(graph_runs):
    runs, backend = graph_runs
    features, anchors, bad_anchors = torch.randn(3, 6, 8), torch.rand(3, 4), torch.rand(3, 5)
    head = torch.compile(box_head, backend=backend)
    assert runs_of(runs, lambda: head(features, anchors)) == 1
    assert runs_of(runs, lambda: head(features, bad_anchors)) == 0
    assert runs_of(runs, lambda: head(features, anchors)) == 0, "good anchors after a bad call still ran a graph"
    fresh = torch.compile(box_head, backend=backend)
    assert runs_of(runs, lambda: fresh(features, anchors)) == 0, "a new torch.compile of the function ran a graph"
    torch._dynamo.reset()
    assert runs_of(runs, lambda: head(features, anchors)) == 1


def test_under_fullgraph_the_error_leaves_compilation_on(graph_runs):
    runs, backend = graph_runs
    features, anchors, bad_anchors = torch.randn(3, 6, 8), torch.rand(3, 4), torch.rand(3, 5)
    head = torch.compile(box_head, backend=backend, fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported):
        head(features, bad_anchors)
    assert runs_of(runs, lambda: head(features, anchors)) == 1


def test_validating_before_the_compiled_call_keeps_the_graph(graph_runs):
    runs, backend = graph_runs
    features, anchors, bad_anchors = torch.randn(3, 6, 8), torch.rand(3, 4), torch.rand(3, 5)
    head = torch.compile(box_head, backend=backend)

    def validated(candidate):
        if candidate.shape[-1] != 4:
            raise BoxFormatError("anchors need 4 coordinates")
        return head(features, candidate)

    assert [runs_of(runs, lambda a=a: validated(a)) for a in (anchors, bad_anchors, anchors)] == [1, 0, 1]


TIMES: list[float] = []


@contextlib.contextmanager
def timer():
    start = time.perf_counter()  # a builtin: a graph break in the context manager's __enter__
    yield
    TIMES.append(time.perf_counter() - start)


def work_then_with(x, weight):
    x = torch.sin(x) @ weight
    with timer():
        x = torch.tanh(x @ weight)
    return x + 1


def work_then_try(x, weight):
    x = torch.sin(x) @ weight
    try:
        x = torch.tanh(x @ weight)
        TIMES.append(time.perf_counter())
    except RuntimeError:
        x = torch.zeros_like(x)
    return x + 1


def work_then_loop(x, weight):
    x = torch.sin(x) @ weight
    for _ in range(3):
        x = torch.tanh(x @ weight)
        TIMES.append(time.perf_counter())
    return x


@pytest.mark.parametrize("function, graphs", [
    (work_then_with, [("sin", "matmul")]),  # compiled up to the block, the rest eager
    (work_then_try, [("sin", "matmul")]),
    (work_then_loop, []),  # the whole frame skipped, the work before the loop too
])
def test_a_break_in_a_block_costs_the_rest_of_the_function_one_in_a_loop_all_of_it(function, graphs):
    x, weight = torch.randn(3, 4), torch.randn(4, 4)
    result = diagnose(function, (x, weight), "default")
    assert result.error is None
    torch.testing.assert_close(result.outputs[0], function(x, weight))
    assert [graph.ops for graph in result.graphs] == graphs


class OwnBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.tanh(self.linear(x))


class SkippedForward(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.sequential = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
        self.own = OwnBlock()

    def forward(self, x):
        for _ in range(2):  # the break below is in a loop: this frame is skipped
            x = self.own(self.sequential(self.linear(x)))
            TIMES.append(time.perf_counter())
        return x


def test_a_skipped_frame_compiles_your_modules_not_torchs():
    result = diagnose(SkippedForward(), (torch.randn(3, 4),), "default")
    assert result.error is None and result.graph_breaks
    # Only OwnBlock.forward is a graph: the Linear and the Sequential called from the skipped frame ran eagerly.
    assert [graph.ops for graph in result.graphs] == [("linear", "tanh")]


def test_while_loop_refuses_a_body_that_returns_a_carried_tensor_unchanged():
    from torch._higher_order_ops.while_loop import while_loop

    def run(body):
        start = torch.zeros((), dtype=torch.long)
        return torch.compile(lambda h: while_loop(lambda t, h: t < 3, body, (start, h))[1],
                             backend="eager", fullgraph=True)(torch.randn(3, 4))

    torch._dynamo.reset()
    with pytest.raises(Exception) as refused:
        run(lambda t, h: (t + 1, h))
    chain, error = [], refused.value
    while error is not None:  # torch 2.8 names the aliasing in the cause, later releases in the message too
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    assert "alias" in " ".join(chain)
    torch._dynamo.reset()
    assert run(lambda t, h: (t + 1, h.clone())).shape == (3, 4)


class Scaled(torch.nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.scale = scale

    def forward(self, x):
        return self.linear(x) * self.scale


def test_a_new_module_of_the_same_class_reuses_the_code_a_changed_value_recompiles():
    """recompilations: Dynamo guards on an object's type and the values the function reads from it, not on
    which object it was given: a fresh module per call compiles once; a changed attribute compiles again."""
    from torch._dynamo.testing import CompileCounter

    def apply(module, x):
        return module(x)

    torch._dynamo.reset()
    counter = CompileCounter()
    compiled = torch.compile(apply, backend=counter)
    for _ in range(4):
        compiled(Scaled(2.0), torch.ones(3))
    assert counter.frame_count == 1
    compiled(Scaled(3.0), torch.ones(3))
    assert counter.frame_count == 2
    torch._dynamo.reset()
