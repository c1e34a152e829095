"""capstone-block, fixed with torch.where, torch.no_grad() and torch.logical_and: the print moves into an eager-only helper that returns early while compiling, the mask is always applied with `torch.where` (a no-op without padding), the entropy is computed under `no_grad` as a 0-d tensor instead of a Python number, and the two conditions are combined as tensors, so the outputs are the block's own and `float(block.attention_entropy)` still works after the step.

Every fix removes a break without changing a value: `torch.where(keep, scores, -inf)` picks exactly what
`masked_fill(~keep, -inf)` did (and with no padding leaves the scores as they are, as the shortcut did), the
entropy tensor holds the number `.item()` returned, and `logical_and` on two 0-d bools is Python's `and` on
them, evaluated in the graph.
"""

import math

import torch
from torch import nn


def _debug_shapes(x: torch.Tensor, keep: torch.Tensor) -> None:
    """Eager debugging output; the shapes are constants while Dynamo traces, so compiled code skips it."""
    if torch.compiler.is_compiling():
        return
    print(f"encoder block: x {tuple(x.shape)}, keep {tuple(keep.shape)}")


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2, max_abs: float = 50.0):
        super().__init__()
        self.heads, self.max_abs = heads, max_abs
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.attention_entropy = torch.zeros(())  # a 0-d tensor; the training loop logs float(...) of it

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        _debug_shapes(x, keep)
        q, k, v = self.qkv(self.norm1(x)).view(batch, seq, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        # Always mask: where every key is kept this returns the scores unchanged, so no shortcut is needed.
        scores = torch.where(keep[:, None, None, :], scores, float("-inf"))
        attn = scores.softmax(dim=-1)
        with torch.no_grad():  # a statistic for the logs: no autograd history, and no sync to Python here
            self.attention_entropy = -(attn * attn.clamp_min(1e-9).log()).sum(dim=-1).mean()
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(batch, seq, dim))
        x = x + self.mlp(self.norm2(x))
        peak = x.abs().amax()
        overflow = torch.logical_and(peak > self.max_abs, keep.any())  # rescale only real activations that ran away
        return torch.where(overflow, x * (self.max_abs / peak), x)


torch.manual_seed(0)
block = EncoderBlock()
