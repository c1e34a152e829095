"""time-from-outside, fixed with time.perf_counter around whole calls, synchronising an accelerator first: `forward` has no timers left, so it compiles as one graph with the same outputs, and `time_layer` warms the layer up, then times `calls` calls of `layer(x)` from outside and returns the seconds per call.

Synchronising before reading the clock (on CUDA) makes the clock measure the kernels, not only their launch;
on the CPU the calls are synchronous and `perf_counter` alone is right.
"""

import time

import torch
import torch.nn.functional as F
from torch import nn


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
        # No clocks in here: the timing is done around whole calls, outside the compiled code.
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


def _synchronize(x: torch.Tensor) -> None:
    if x.is_cuda:  # queued kernels must finish before the clock is read
        torch.cuda.synchronize(x.device)


def time_layer(layer: nn.Module, x: torch.Tensor, calls: int = 10) -> float:
    """Seconds per call of `layer(x)`, measured from outside the (possibly compiled) layer after a warm-up."""
    with torch.no_grad():
        layer(x)  # warm-up: a compiled layer compiles on its first call, which must not be timed
        _synchronize(x)
        start = time.perf_counter()
        for _ in range(calls):
            layer(x)
        _synchronize(x)
        elapsed = time.perf_counter() - start
    return elapsed / calls


torch.manual_seed(0)
layer = DecoderLayer()
