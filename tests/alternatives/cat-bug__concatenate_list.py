"""cat-bug, fixed with torch.concatenate on a list: torch.concatenate is torch.cat's NumPy-style alias and takes the same single sequence of tensors, so it joins the same two tensors along the same last axis.

`add_position_features` appends sinusoidal position features to token features and projects the result back
to the model width. The broken call passed the two tensors as separate positional arguments; the eager
TypeError was the whole story.
"""

import torch

torch.manual_seed(0)
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=tokens.dtype, device=tokens.device).unsqueeze(-1)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand_as(tokens)
    # One list of tensors, joined along the feature axis.
    features = torch.concatenate([tokens, pos], axis=-1)
    return PROJECT(features)
