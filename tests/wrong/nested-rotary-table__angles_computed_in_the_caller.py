"""nested-rotary-table, "fixed" in the caller: `rotary_angles` is left as it ships, with its
`int(positions.max())`, and `apply_rotary` stops calling it and computes each token's angles from its position
itself. `decoder` compiles as one graph with the same outputs, but the task asks for the break to be fixed in the
function it is in, and the helper still breaks for every other caller (contract fixed-in-the-helper)."""

import torch
from torch import nn


def rotary_angles(positions: torch.Tensor, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The rotation angle of each position (batch, seq) for each pair of features: (batch, seq, dim // 2)."""
    inv_freq = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float32, device=positions.device) / dim)
    # TODO: a table with one row per position, up to the largest in the batch, then one row looked up per token.
    table_size = int(positions.max()) + 1
    table = torch.arange(table_size, dtype=torch.float32, device=positions.device)[:, None] * inv_freq
    return table[positions]


def apply_rotary(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    dim = x.shape[-1]
    inv_freq = 1.0 / 10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float32, device=positions.device) / dim)
    # Each token's angles straight from its position: no table, so no size read out of the data.
    angles = positions[..., None].to(torch.float32) * inv_freq
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
