"""cat-bug, a wrong fix. Positions counted in float16, exact up to 2048: longer sequences share positions (contract fixed-for-every-batch)."""

import torch

torch.manual_seed(0)
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=torch.float16, device=tokens.device).to(tokens.dtype).unsqueeze(-1)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand_as(tokens)
    # torch.cat takes one sequence of tensors; the compile error was this eager TypeError.
    features = torch.cat((tokens, pos), dim=-1)
    return PROJECT(features)
