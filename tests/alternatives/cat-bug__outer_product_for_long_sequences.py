"""cat-bug, another correct fix: the bug fixed, and the angles of sequences past 4096 tokens computed as an outer
product, the same values by another path (the probes past that bound must find it equal to the reference)."""

import torch

torch.manual_seed(0)
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=tokens.dtype, device=tokens.device).unsqueeze(-1)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    if seq_len > 4096:  # long sequences: the same angles as an outer product of the two vectors
        angles = torch.outer(positions.squeeze(-1), freqs)
    else:
        angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand_as(tokens)
    # torch.cat takes one sequence of tensors; the compile error was this eager TypeError.
    features = torch.cat((tokens, pos), dim=-1)
    return PROJECT(features)
