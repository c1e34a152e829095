"""time-from-outside, a wrong fix. `time_layer` returns the seconds of two calls as those of one (its timed statement
calls the layer twice) (contract timing-helper-times-the-layer)."""

import torch
import torch.nn.functional as F
from torch import nn

TIMINGS: dict[str, float] = {}


class DecoderLayer(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(batch, seq, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


def _twice(layer, x):
    layer(x)
    layer(x)


def time_layer(layer: nn.Module, x: torch.Tensor, calls: int = 10) -> float:
    from torch.utils import benchmark
    layer(x)
    TIMINGS["layer"] = benchmark.Timer("twice(layer, x)", globals={"twice": _twice, "layer": layer, "x": x}).timeit(calls).median
    return TIMINGS["layer"]


torch.manual_seed(0)
layer = DecoderLayer()
