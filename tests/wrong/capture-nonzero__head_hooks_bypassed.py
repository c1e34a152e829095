"""capture-nonzero, a wrong fix. The head is applied as `F.linear` of its weight and bias instead of called: the
same logits, but a hook on the head (a temperature, an adapter, an observer) no longer runs
(contract every-mask-projected)."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    # With capture_dynamic_output_shape_ops, the number of masked tokens is a symbolic size inside the graph.
    rows, cols = (input_ids == MASK_ID).nonzero(as_tuple=True)
    return torch.nn.functional.linear(hidden[rows, cols], VOCAB_HEAD.weight, VOCAB_HEAD.bias)  # [number of masked tokens, vocabulary]
