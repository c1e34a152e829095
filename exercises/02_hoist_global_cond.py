"""Exercise: a branch on a tensor that never changes.

`next_token_probs` turns a language model's logits into next-token probabilities with each task's decoding
temperature; a temperature of 0 means greedy decoding. The temperatures come from the checkpoint as tensors, so
`if temperature == 0` is a data-dependent branch for Dynamo (GB0170), even though its answer never changes.
Make `next_token_probs` compile as one graph with `fullgraph=True`, with the same results as now.
Check your fix with:  gbcheck check hoist-global-cond
"""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE[task]
    # TODO: `temperature` is a tensor, so Dynamo cannot decide this `if` while tracing.
    if temperature == 0:
        # Greedy: all the probability on the most likely token.
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return (logits / temperature).softmax(dim=-1)
