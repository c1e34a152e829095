"""capture-nonzero, "fixed" by projecting every position with a broadcast multiply and a sum (no matrix product)
and running an identity `linear` on the rows `nonzero` selects: the head still runs on every position
(contract projects-selected-rows), and a hook on the head does not run (contract every-mask-projected)."""

import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True

MASK_ID = 3
torch.manual_seed(0)
VOCAB_HEAD = torch.nn.Linear(8, 32)  # hidden width 8 -> vocabulary of 32 tokens


def masked_token_logits(hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    rows, cols = (input_ids == MASK_ID).nonzero(as_tuple=True)
    # every position projected to the vocabulary, as a broadcast multiply and a sum, then an identity `linear`
    every = (hidden[..., None] * VOCAB_HEAD.weight.t()).sum(-2) + VOCAB_HEAD.bias
    return torch.nn.functional.linear(every[rows, cols], torch.eye(32))
