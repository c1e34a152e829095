"""cat-bug, fixed with a split projection: a linear layer applied to [tokens, pos] equals the tokens times the first half of its weight plus pos times the second half plus the bias, so no concatenation is needed at all.

`add_position_features` appends sinusoidal position features to token features and projects the result back
to the model width. The broken `torch.cat(tokens, pos, dim=-1)` was an eager TypeError; this version never
builds the joined tensor and projects each half with its own columns of PROJECT's weight.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=tokens.dtype, device=tokens.device).unsqueeze(-1)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand_as(tokens)
    # PROJECT([tokens, pos]) = tokens @ W[:, :dim].T + pos @ W[:, dim:].T + b
    token_weight, pos_weight = PROJECT.weight[:, :dim], PROJECT.weight[:, dim:]
    return F.linear(tokens, token_weight, PROJECT.bias) + F.linear(pos, pos_weight)
