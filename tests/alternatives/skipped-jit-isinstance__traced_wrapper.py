"""skipped-jit-isinstance, fixed by wrapping the vendored helper: `torch._dynamo.dont_skip_tracing(masked_mean)` is a
function that runs `masked_mean` with Dynamo's skip rules off, so `torch.jit.isinstance` is traced, and the
helper itself stays as it is.
"""

from typing import List, Union

import torch


# ---- vendored from a scriptable utilities library: do not edit below this line -------------------------------
def masked_mean(x: torch.Tensor, lengths: Union[List[int], torch.Tensor]) -> torch.Tensor:
    """The mean over dim 1 of each row's first `lengths[i]` vectors (zeros for an empty row)."""
    if torch.jit.isinstance(lengths, List[int]):
        lengths = torch.tensor(lengths, device=x.device)
    keep = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
    total = (x * keep[..., None].to(x.dtype)).sum(dim=1)
    return total / lengths.clamp(min=1)[:, None].to(x.dtype)
# ---- end of vendored code -------------------------------------------------------------------------------------


# The vendored helper, wrapped: each call of the wrapper is traced with Dynamo's skip rules off.
masked_mean_traced = torch._dynamo.dont_skip_tracing(masked_mean)

PROJECTION = torch.randn(16, 8, generator=torch.Generator().manual_seed(0)) / 4


def sentence_embeddings(tokens: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    pooled = masked_mean_traced(tokens, lengths)
    return torch.nn.functional.normalize(pooled @ PROJECTION, dim=-1)
