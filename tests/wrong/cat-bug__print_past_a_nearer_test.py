"""cat-bug, fixed for the lengths the examples have only: a harmless test of the length at 64 comes first, after
which Dynamo decides the test at 4096 (a float, so no integer of the text names it) with no guard of its own; past
it a debugging `print` is still traced, a graph break on every long sequence
(contract past-the-bounds)."""

import torch

torch.manual_seed(0)
PROJECT = torch.nn.Linear(16, 8)  # 8 token features + 8 position features -> model width 8


def add_position_features(tokens: torch.Tensor) -> torch.Tensor:
    seq_len, dim = tokens.shape[-2], tokens.shape[-1]
    positions = torch.arange(seq_len, dtype=tokens.dtype, device=tokens.device).unsqueeze(-1)
    freqs = torch.exp(torch.arange(0, dim, 2, dtype=tokens.dtype, device=tokens.device) * (-4.0 / dim))
    angles = positions * freqs  # [seq_len, dim / 2]
    pos = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).expand_as(tokens)
    # torch.cat takes one sequence of tensors; the compile error was this eager TypeError.
    features = torch.cat((tokens, pos), dim=-1)
    if seq_len > 64:  # long enough to be worth a contiguous copy
        features = features.contiguous()
    if seq_len > 4096.0:
        print("long sequence:", seq_len)
    return PROJECT(features)
