"""Exercise: a debugging guard that every sublayer calls, and a graph break in each call.

`encoder` is a small transformer encoder. While it was being trained, someone added `warn_if_exploding`, a
guard that logs a warning when activations grow too large, and called it from the attention, from the
feed-forward network and from each layer's output. Compiled, every one of those calls breaks the graph, several
calls deep. The warning is for eager debugging runs. Find the frame the breaks are really in, fix them there,
and make `encoder` compile as one graph with `fullgraph=True`, with the same outputs, still warning when it runs
eagerly, and without changing any config.
Check your fix with:  gbcheck check nested-activation-guard
"""

import logging

import torch
from torch import nn

logger = logging.getLogger("encoder")


def warn_if_exploding(x: torch.Tensor, where: str, limit: float = 1e4) -> torch.Tensor:
    # TODO: a debugging check, called from three places in every layer.
    if x.abs().amax() > limit:
        logger.warning("activations above %g in %s", limit, where)
    return x


class SelfAttention(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).softmax(dim=-1)
        return warn_if_exploding(self.out(weights @ v), "attention")


class FeedForward(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return warn_if_exploding(self.down(torch.nn.functional.gelu(self.up(x))), "feed-forward")


class EncoderLayer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention, self.feed_forward = SelfAttention(dim), FeedForward(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        x = x + self.feed_forward(self.norm2(x))
        return warn_if_exploding(x, "layer output")


class Encoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.first, self.second = EncoderLayer(dim), EncoderLayer(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x))


torch.manual_seed(0)
encoder = Encoder()
