"""Hostile (capture-item): the unfixed exercise, plus the recorder's method emptied through `__code__`.

The method keeps its identity, so a check of function identities cannot see the swap.
"""
import sys

import torch

engine = sys.modules.get("checker.dynamo.engine")
if engine is not None:
    def _ignore(self, event):
        return None
    engine.Recording.on_graph_break.__code__ = _ignore.__code__


def masked_mse(pred, target, mask):
    mask = mask.to(pred.dtype)
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    kept = mask.sum().item()
    return squared_error.sum() / max(kept, 1.0)
