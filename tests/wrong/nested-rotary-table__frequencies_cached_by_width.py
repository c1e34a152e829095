"""nested-rotary-table, a wrong fix. The inverse frequencies are cached by width alone, so a second base of a width
already seen gets the first base's (contract angles-for-every-width-and-base).
The test that picks the path reads the process, not the call (contract no-environment-switch)."""

import torch
from torch import nn


_INV_FREQ: dict[int, torch.Tensor] = {}  # the frequencies of each width, computed once


def rotary_angles(positions: torch.Tensor, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The rotation angle of each position (batch, seq) for each pair of features: (batch, seq, dim // 2)."""
    if dim not in _INV_FREQ:
        _INV_FREQ[dim] = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    inv_freq = _INV_FREQ[dim].to(positions.device)
    # Each token's angles straight from its position: no table, so no size read out of the data.
    return positions[..., None].to(torch.float32) * inv_freq


def apply_rotary(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    angles = rotary_angles(positions, x.shape[-1])
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


class RotaryAttention(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k = apply_rotary(q, positions), apply_rotary(k, positions)
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        return self.out(scores.softmax(dim=-1) @ v)


class Decoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.norm1, self.attention1 = nn.LayerNorm(dim), RotaryAttention(dim)
        self.norm2, self.attention2 = nn.LayerNorm(dim), RotaryAttention(dim)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = x + self.attention1(self.norm1(x), positions)
        return x + self.attention2(self.norm2(x), positions)


torch.manual_seed(0)
decoder = Decoder()
