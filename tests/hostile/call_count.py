"""Hostile (cond-on-input): picks the branch by how many times it was called, not by the data.

The manifest's example inputs reach the relu branch first and the tanh branch second, in every mode.
"""
import torch

_calls = [0]


def gated_residual(x, weight):
    _calls[0] += 1
    h = x @ weight
    if _calls[0] % 2 == 1:  # a Python int: Dynamo guards on it and compiles one graph per value
        return x + torch.relu(h)
    return x - torch.tanh(h)
