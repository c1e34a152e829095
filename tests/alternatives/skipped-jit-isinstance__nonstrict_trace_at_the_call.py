"""skipped-jit-isinstance, fixed with `nonstrict_trace` applied to the vendored function where it is called.
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


def sentence_embeddings(tokens: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    pooled = torch._dynamo.nonstrict_trace(masked_mean)(tokens, lengths)
    return torch.nn.functional.normalize(pooled @ PROJECTION, dim=-1)
