"""Hostile (capture-item): the unfixed exercise, plus Dynamo's graph-break logging method emptied in place.

`InstructionTranslatorBase.log_graph_break` gets the code of a function that logs nothing; the function
object, and so its identity, stays the same, and so does its closure's size.
"""
import torch
from torch._dynamo import symbolic_convert

_method = symbolic_convert.InstructionTranslatorBase.log_graph_break


def _make(*free):
    names = _method.__code__.co_freevars
    source = "def outer({0}):\n    def log_graph_break(self, code_options, reason, exc):\n        {1}\n        return None\n    return log_graph_break\n"
    body = "; ".join(names) if names else "pass"  # mention every free variable: the closure keeps its shape
    namespace = {}
    exec(source.format(", ".join(names), body), namespace)
    return namespace["outer"](*([None] * len(names))).__code__


_method.__code__ = _make()


def masked_mse(pred, target, mask):
    mask = mask.to(pred.dtype)
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    kept = mask.sum().item()
    return squared_error.sum() / max(kept, 1.0)
