"""Hostile (cond-on-input): returns the reference's outputs for the manifest's example inputs.

The selection is a tensor operation, so it compiles as one graph with no break; it is right on the two
examples and wrong on anything else.
"""
import torch

from checker.course.manifest import build_call, find_exercise

_examples = [build_call(case, index) for index, case in enumerate(find_exercise("cond-on-input").inputs)]
(X1, W1), (X2, W2) = (args for args, _ in _examples)
OUT1 = X1 + torch.relu(X1 @ W1)  # the examples' branches, computed once at import
OUT2 = X2 - torch.tanh(X2 @ W2)


def gated_residual(x, weight):
    return torch.where((x - X1).abs().max() < 1e-6, OUT1, OUT2)
