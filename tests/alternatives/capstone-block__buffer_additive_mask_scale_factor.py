"""capstone-block, fixed with a statistics buffer, an additive -inf mask and a rescaling factor: the eager-only print goes, the padding becomes a bias of 0 or -inf added to every score, the entropy is copied into a non-persistent 0-d buffer, and the overflow test picks a factor (max_abs / peak or 1.0) in the graph, so the outputs are the block's own and `float(block.attention_entropy)` still reads the step's entropy.

Adding 0 leaves a score exactly as it is and adding -inf gives the -inf `masked_fill` wrote, so the softmax is
unchanged, padded or not; `x * 1.0` is `x` exactly, so the factor reproduces both branches of the old `where`;
the buffer is not in the state dict, and `.detach()` keeps the statistic out of the gradients. The print only
showed shapes for eager debugging and is not something the task asks to keep.
"""

import math

import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2, max_abs: float = 50.0):
        super().__init__()
        self.heads, self.max_abs = heads, max_abs
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        # read by the training loop for its logs, with float(block.attention_entropy), after each step
        self.register_buffer("attention_entropy", torch.zeros(()), persistent=False)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, seq, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        # 0 on real tokens, -inf on padding: added to every score, padded or not (no data-dependent shortcut).
        padding_bias = torch.zeros(keep.shape, dtype=scores.dtype, device=scores.device)
        padding_bias = padding_bias.masked_fill(~keep, float("-inf"))
        attn = (scores + padding_bias[:, None, None, :]).softmax(dim=-1)
        entropy = -(attn * attn.clamp_min(1e-9).log()).sum(dim=-1).mean()
        self.attention_entropy.copy_(entropy.detach())  # stays a tensor: no .item() in the hot path
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(batch, seq, dim))
        x = x + self.mlp(self.norm2(x))
        peak = x.abs().amax()
        overflow = keep.any() & (peak > self.max_abs)  # rescale only real activations that ran away
        return x * torch.where(overflow, self.max_abs / peak, torch.ones_like(peak))


torch.manual_seed(0)
block = EncoderBlock()
