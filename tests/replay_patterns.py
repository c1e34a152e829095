"""Correct code whose graphs hold context calls, in-place and indexing operators, and runtime assertions.

Kept out of the test modules: pytest rewrites a test module's `assert` statements, and a learner's file has
Python's own. tests/test_replay.py traces, records and replays each of them.
"""

import torch

__all__ = ["no_grad_scale", "set_grad_enabled_scale", "inference_mode_sum", "autocast_matmul", "fill_by_slices",
           "in_place_operators", "asserts_on_a_tensor", "transposed_matmul"]


def no_grad_scale(x, w):
    with torch.no_grad():
        scale = w.abs().mean()
    return x * scale


def set_grad_enabled_scale(x, w):
    with torch.set_grad_enabled(False):
        scale = w.abs().mean()
    return x * scale


def inference_mode_sum(x, w):
    with torch.inference_mode():
        total = w.sum()
    return x + total


def autocast_matmul(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w.T
    return y.float()


def fill_by_slices(x, w):
    errors = (x - w) ** 2
    errors[x < 0] = 0
    return errors


def in_place_operators(x, w):
    flags = x > 0
    flags |= w > 0
    flags &= x < 2
    flags ^= w > 1
    y = x.clone()
    y **= 2
    y //= 0.5
    y %= 3
    return flags, y


def asserts_on_a_tensor(x, w):
    assert (x > -100).all()
    return x * 2 + w


def transposed_matmul(x, w):
    return x @ w.T + x.mT @ w
