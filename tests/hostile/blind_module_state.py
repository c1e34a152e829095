"""Hostile (capture-item): the unfixed exercise, plus a recorder blinded by replacing a module-level object.

`checker.dynamo.engine._active` is a list, not a function: an identity check of functions does not see it
replaced by a list that is always false, so the graph-break hook records nothing.
"""
import sys

import torch

engine = sys.modules.get("checker.dynamo.engine")
if engine is not None:
    class _Blind(list):
        def __bool__(self):
            return False
    engine._active = _Blind()


def masked_mse(pred, target, mask):
    mask = mask.to(pred.dtype)
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    kept = mask.sum().item()
    return squared_error.sum() / max(kept, 1.0)
