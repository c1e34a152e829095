"""fused-norm-allow-in-graph, a wrong fix. The norm is given `x.float()`: the same for float32 blocks, but a block
cast to bfloat16 gets a float32 `h`, and its bfloat16 `up` layer raises (contract norm-as-vendored)."""

import torch
from torch import nn


# ---- vendored from a library of fused kernels: do not edit below this line ------------------------------------
class RMSNormFunction(torch.autograd.Function):
    """y = x / rms(x) * weight over the last dim, with a hand-written backward (the fused kernel's)."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        try:
            from fused_norm_kernels import rms_norm_forward  # the compiled kernel, where it is built
        except ImportError:
            rms_norm_forward = None
        if rms_norm_forward is not None:
            y, rstd = rms_norm_forward(x, weight, eps)
        else:
            rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
            y = x * rstd * weight
        ctx.save_for_backward(x, weight, rstd)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        grad_weight = (grad_y * x_hat).reshape(-1, x.shape[-1]).sum(dim=0)
        grad_x_hat = grad_y * weight
        grad_x = rstd * (grad_x_hat - x_hat * (grad_x_hat * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_weight, None
# ---- end of vendored code -------------------------------------------------------------------------------------

# Dynamo puts each call of the function into the graph as it is, without tracing its forward: safe here, since it
# reads only its arguments, keeps no state and never branches on a tensor's value.
torch.compiler.allow_in_graph(RMSNormFunction)


class Block(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32):
        super().__init__()
        self.norm_weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = RMSNormFunction.apply(x.float(), self.norm_weight, 1e-6)  # the fused kernel's dtype
        return x + self.down(torch.nn.functional.gelu(self.up(h)))


torch.manual_seed(0)
block = Block()
