"""reorder-print, "fixed" by keeping the reorderable print but running it only while Dynamo traces the function: the
compiled runs print the count, but an eager call now prints nothing, where the task asks for the same text as in
eager mode (contract prints-preserved) (contract prints-for-a-batch-of-sequences)."""

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)  # .add keeps what other code put in the set


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > limit).sum()
    if torch.compiler.is_compiling():
        # A reorderable print runs after the graph, with the tensor values the graph computed.
        print("rms_norm: clipped activations:", clipped)
    return normed.clamp(-limit, limit)
