"""Exercise: sentence embeddings pooled by a helper from a TorchScript-era library.

`sentence_embeddings` averages each sentence's token vectors with `masked_mean`, vendored from a library written
to be scriptable, which the team does not edit. The helper takes the lengths as a list or as a tensor and tells
the two apart with `torch.jit.isinstance`, a function Dynamo skips on purpose (GB0007, "Attempted to call
function marked as skipped"), so the graph is cut around the call. Make `sentence_embeddings` compile as one
graph with `fullgraph=True`, with the same results as now, without changing the vendored code.
Check your fix with:  gbcheck check skipped-jit-isinstance
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
    # TODO: Dynamo skips a function the helper calls, and you may not change the helper.
    pooled = masked_mean(tokens, lengths)
    return torch.nn.functional.normalize(pooled @ PROJECTION, dim=-1)
