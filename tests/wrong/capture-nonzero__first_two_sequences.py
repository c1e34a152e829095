"""capture-nonzero, a wrong fix. `nonzero` runs on the first two sequences, so the [MASK] tokens of a third are not
projected (contract masks-of-every-sequence)."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    # With capture_dynamic_output_shape_ops, the number of masked tokens is a symbolic size inside the graph.
    rows, cols = (input_ids[:2] == MASK_ID).nonzero(as_tuple=True)
    return VOCAB_HEAD(hidden[rows, cols])  # [number of masked tokens, vocabulary]
