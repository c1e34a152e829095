"""cat-bug, fixed with filling slices of a preallocated tensor: writing the tokens into the first `dim` features and the position features into the rest builds exactly the tensor torch.cat((tokens, pos), dim=-1) builds.

`add_position_features` appends sinusoidal position features to token features and projects the result back
to the model width. The broken `torch.cat(tokens, pos, dim=-1)` passed two tensors where torch.cat takes one
sequence; here the joined tensor is written piece by piece instead.
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
    # [..., seq_len, 2 * dim]: token features first, then position features.
    features = tokens.new_empty(*tokens.shape[:-1], 2 * dim)
    features[..., :dim] = tokens
    features[..., dim:] = pos
    return PROJECT(features)
