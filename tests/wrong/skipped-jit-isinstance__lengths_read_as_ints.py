"""skipped-jit-isinstance, a wrong fix. The lengths are read back as Python ints before the call: right on list
lengths, but on a tensor of lengths each `int(n)` is a `.item()`, and the graph is cut as the unfixed file cuts it
(contract one-graph-for-tensor-lengths)."""

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


def sentence_embeddings(tokens: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    # dont_skip_tracing: Dynamo traces torch.jit.isinstance here, which compares types only, instead of skipping it.
    with torch._dynamo.dont_skip_tracing():
        pooled = masked_mean(tokens, [int(n) for n in lengths])
    return torch.nn.functional.normalize(pooled @ PROJECTION, dim=-1)
