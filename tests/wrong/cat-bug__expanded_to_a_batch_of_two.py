"""cat-bug, a wrong fix. The position features expanded to a batch of exactly 2: right on the draws, not what the task
asks (contract fixed-for-every-batch) (contract fixed-for-tokens-of-any-rank)."""

import torch

torch.manual_seed(0)
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=tokens.dtype, device=tokens.device).unsqueeze(-1)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand(2, -1, -1)
    features = torch.cat((tokens, pos), dim=-1)
    return PROJECT(features)
