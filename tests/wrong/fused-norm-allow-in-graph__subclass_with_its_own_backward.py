"""fused-norm-allow-in-graph, "fixed" as the reference does, with `allow_in_graph`, but on a subclass of the
vendored `RMSNormFunction` that defines a `backward` of its own, the gradient worked out again: the block compiles
as one graph with the same outputs, and the re-derived backward gives the same numbers, but the task asks for the
gradients of the hand-written backward, and the block no longer calls the Function that has it
(contract vendored-called)."""

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


class RMSNorm(RMSNormFunction):
    """The vendored forward, with the backward worked out again from y = x * rstd * weight."""

    @staticmethod
    def backward(ctx, grad_y):
        x, weight, rstd = ctx.saved_tensors
        g = grad_y * weight
        grad_x = g * rstd - x * rstd.pow(3) * (g * x).mean(dim=-1, keepdim=True)
        grad_weight = (grad_y * x * rstd).flatten(0, -2).sum(dim=0)
        return grad_x, grad_weight, None


# Dynamo puts each call of the function into the graph as it is, without tracing its forward: safe here, since it
# reads only its arguments, keeps no state and never branches on a tensor's value.
torch.compiler.allow_in_graph(RMSNorm)


class Block(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32):
        super().__init__()
        self.norm_weight = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = RMSNorm.apply(x, self.norm_weight, 1e-6)
        return x + self.down(torch.nn.functional.gelu(self.up(h)))


torch.manual_seed(0)
block = Block()
