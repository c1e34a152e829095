"""Hostile (cond-on-input): forged result frames that carry a real graph, right on the examples only.

The graph is Dynamo's own capture of a lookup of the example inputs' results: one graph, no break, a
`torch.where` that returns the reference's output for each example. It is shipped in the checker's own
record format, claimed for every call.
"""
import torch

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from forge import forge  # noqa: E402
from hard_coded_outputs import OUT1, OUT2, X1  # noqa: E402

try:
    from checker.course import draws
    from checker.grading import replay
except ImportError:  # a checker without graph records: the frames alone
    draws = replay = None


def lookup(x, weight):
    return torch.where((x - X1).abs().max() < 1e-6, OUT1, OUT2)


def gated_residual(x, weight):
    h = x @ weight
    if h.mean() > 0:
        return x + torch.relu(h)
    return x - torch.tanh(h)


graphs, calls = None, None
if replay is not None:
    captured = []
    compiled = torch.compile(lookup, backend=lambda gm, inputs: captured.append((gm, inputs)) or gm.forward,
                             fullgraph=True)
    compiled(X1.clone(), torch.zeros(8, 8))
    graphs = [replay.graph_record(*captured[0])]
    count = draws.DRAWS_PER_CASE * 2 + draws.REPEATS
    calls = [{"graphs": [0], "returned": 0}] * count
    torch._dynamo.reset()

forge("cond-on-input", gated_residual, graphs, calls)
