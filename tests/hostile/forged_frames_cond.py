"""Hostile (cond-on-input): the unfixed exercise, plus forged result frames written at import (see forge.py)."""
import torch

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from forge import forge  # noqa: E402


def gated_residual(x, weight):
    h = x @ weight
    if h.mean() > 0:
        return x + torch.relu(h)
    return x - torch.tanh(h)


forge("cond-on-input", gated_residual)
