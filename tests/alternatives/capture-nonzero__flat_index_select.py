"""capture-nonzero, fixed with the config set at module level and a `nonzero` over the flattened mask with `index_select`: row-major flattening lists the [MASK] positions in the same order as the 2-D `nonzero`, so the same hidden states are projected, and only those, into the same [number of masked tokens, vocabulary] result.

`torch._dynamo.config.capture_dynamic_output_shape_ops = True` lets Dynamo keep `nonzero` in the graph with an
unbacked number of rows (the only config this exercise allows); it is set when the file is imported, so it
applies whenever the function is compiled. The selection itself is a 1-D `nonzero` and an `index_select` on
the [batch * length, hidden] view of the states.
"""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    flat_hidden = hidden.flatten(0, 1)  # [batch * length, hidden], row-major like nonzero's order
    positions = (input_ids.flatten() == MASK_ID).nonzero().squeeze(1)  # [number of masked tokens]
    return VOCAB_HEAD(flat_hidden.index_select(0, positions))  # [number of masked tokens, vocabulary]
