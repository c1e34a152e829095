"""reorder-print, fixed with a reorderable logging helper that Dynamo never compiles: `report_clipped` prints the same line, is registered in reorderable_logging_functions so the traced function calls it after its graph with the computed count, and is wrapped in torch.compiler.disable so that Dynamo does not try to trace the helper's own frame (the `print` inside it) when that deferred call runs.

`clipped_rms_norm` RMS-normalises each token, clamps the result to [-limit, limit] and prints how many values it
had to clip, a number the training logs are searched for. Only the helper, which does no tensor work, is kept
away from Dynamo; `clipped_rms_norm` itself is compiled whole.
"""

import torch


@torch.compiler.disable
def report_clipped(count: torch.Tensor) -> None:
    """The log line the training logs are searched for."""
    print("rms_norm: clipped activations:", count)


torch._dynamo.config.reorderable_logging_functions.add(report_clipped)


def clipped_rms_norm(x: torch.Tensor, weight: torch.Tensor, limit: float = 2.5) -> torch.Tensor:
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
    clipped = (normed.abs() > limit).sum()
    report_clipped(clipped)  # moved after the graph under torch.compile, called in place eagerly
    return normed.clamp(-limit, limit)
