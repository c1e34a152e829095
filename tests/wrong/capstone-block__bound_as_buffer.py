"""capstone-block, a wrong fix. The bound `max_abs` is registered as a 0-d buffer instead of kept as a number: the
same outputs, but setting the bound after the block is built (`block.max_abs = 10.0`) raises TypeError
(contract rescales-at-its-own-bound)."""

import math

import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2, max_abs: float = 50.0):
        super().__init__()
        self.heads = heads
        self.register_buffer("max_abs", torch.tensor(float(max_abs)))
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.attention_entropy = 0.0  # read by the training loop for its logs

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        # Debugging output for eager runs only: the shapes are fixed while Dynamo traces.
        if not torch.compiler.is_compiling():
            print(f"encoder block: x {tuple(x.shape)}, keep {tuple(keep.shape)}")
        q, k, v = self.qkv(self.norm1(x)).view(batch, seq, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        # Always mask: with no padding, masked_fill changes nothing, so the data-dependent shortcut can go.
        scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
        attn = scores.softmax(dim=-1)
        # A detached tensor, not a Python number: the training loop's float(...) reads it after the step.
        self.attention_entropy = -(attn * attn.clamp_min(1e-9).log()).sum(dim=-1).mean().detach()
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(batch, seq, dim))
        x = x + self.mlp(self.norm2(x))
        peak = x.abs().amax()
        # `&`, not `and`: `and` asks Python for the truth of a tensor, a hidden data-dependent branch.
        overflow = (peak > self.max_abs) & keep.any()  # rescale only real activations that ran away
        return torch.where(overflow, x * (self.max_abs / peak), x)


torch.manual_seed(0)
block = EncoderBlock()
