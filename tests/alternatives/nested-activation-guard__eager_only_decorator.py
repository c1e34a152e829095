"""nested-activation-guard, fixed with an eager-only decorator: the check keeps its test and its warning, and a small decorator around it runs it only when torch.compiler.is_compiling() is False and always returns the activations unchanged, so compiled code has no branch on a tensor and eager runs still log.

The decorator wraps the one helper every caller uses, so all six call sites are fixed at once; its return value
is the input tensor itself, so outputs and gradients stay the encoder's own.
"""

import functools
import logging

import torch
from torch import nn

logger = logging.getLogger("encoder")


def eager_only_check(check):
    """Run `check(x, ...)` in eager mode only; hand `x` back unchanged either way."""

    @functools.wraps(check)
    def guarded(x: torch.Tensor, *args, **kwargs) -> torch.Tensor:
        if not torch.compiler.is_compiling():
            check(x, *args, **kwargs)
        return x

    return guarded


@eager_only_check
def warn_if_exploding(x: torch.Tensor, where: str, limit: float = 1e4) -> None:
    if x.abs().amax() > limit:
        logger.warning("activations above %g in %s", limit, where)


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
