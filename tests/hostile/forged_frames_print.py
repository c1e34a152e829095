"""Hostile (reorder-print): the unfixed exercise, plus forged result frames written at import (see forge.py)."""
import torch

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from forge import forge  # noqa: E402


def clipped_rms_norm(x, weight, limit=2.5):
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > limit).sum()
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)


forge("reorder-print", clipped_rms_norm)
