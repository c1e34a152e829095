"""reorder-print, a wrong fix. The mean square is a sum divided by 16, the draws' width: a layer of another width
is normalised wrongly (contract limit-still-applies)."""
import torch

torch._dynamo.config.reorderable_logging_functions.add(print)  # .add keeps what other code put in the set


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) / 16 + 1e-6) * weight
    clipped = (normed.abs() > limit).sum()
    # A reorderable print runs after the graph, with the tensor values the graph computed.
    print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
