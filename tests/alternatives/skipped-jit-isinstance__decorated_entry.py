"""skipped-jit-isinstance, fixed with `torch._dynamo.dont_skip_tracing` as a decorator of the entry: Dynamo traces
every function called from it as if no trace rule skipped it, so `torch.jit.isinstance` is traced (it compares
Python types only) and the unchanged helper is one graph with the rest.

Wider than the reference's `with` block: the decorator reaches everything `sentence_embeddings` calls.
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


PROJECTION = torch.randn(16, 8, generator=torch.Generator().manual_seed(0)) / 4


@torch._dynamo.dont_skip_tracing  # everything this function calls is traced, torch.jit.isinstance included
def sentence_embeddings(tokens: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    pooled = masked_mean(tokens, lengths)
    return torch.nn.functional.normalize(pooled @ PROJECTION, dim=-1)
