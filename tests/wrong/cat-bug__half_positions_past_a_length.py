"""cat-bug, with positions rounded to half precision past a length kept in a module constant: from 4096 tokens on,
half precision cannot tell neighbouring positions apart, and the features differ from the reference's
(contract past-the-bounds)."""

import torch

torch.manual_seed(0)
LONG = 1 << 12
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=tokens.dtype, device=tokens.device).unsqueeze(-1)
    if seq_len > LONG:  # saves memory on long sequences
        positions = positions.half().to(tokens.dtype)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand_as(tokens)
    # torch.cat takes one sequence of tensors; the compile error was this eager TypeError.
    features = torch.cat((tokens, pos), dim=-1)
    return PROJECT(features)
