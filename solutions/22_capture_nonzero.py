"""Exercise: a masked-language-model head that only scores the masked tokens.

`masked_token_logits` finds the [MASK] tokens of a batch with `nonzero` and projects only their hidden states to
the vocabulary: the projection is the expensive part, and the loss needs no other position. How many rows the
result has depends on the data, so in default mode `nonzero` is a graph break (GB0036, "Dynamic shape
operator"). Here the variable-length result is the point: keep `nonzero`, and make the function compile as one
graph, in default mode too, with the same results as now.
Check your fix with:  gbcheck check capture-nonzero
"""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    # With capture_dynamic_output_shape_ops, the number of masked tokens is a symbolic size inside the graph.
    rows, cols = (input_ids == MASK_ID).nonzero(as_tuple=True)
    return VOCAB_HEAD(hidden[rows, cols])  # [number of masked tokens, vocabulary]
