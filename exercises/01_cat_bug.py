"""Exercise: a graph break that is really a bug.

`add_position_features` appends sinusoidal position features to token features and projects the result back
to the model width. Under torch.compile it reports a graph break (GB0112, "TypeError when making fake tensor
call"), but the compiler is not the problem: the function is wrong and fails without torch.compile too.
Run it eagerly first (or under `torch.compiler.set_stance("force_eager")`), read the error and fix the bug.
Check your fix with:  gbcheck check cat-bug
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
    # TODO: this line fails with or without torch.compile.
    features = torch.cat(tokens, pos, dim=-1)
    return PROJECT(features)
