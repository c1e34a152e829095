"""hoist-global-cond, a wrong fix. The logits divided by the temperature in the forward pass alone, so the backward
drops its factor: the probabilities are right, their gradients are not (a plain sum of a softmax's rows hides any
backward; the check weighs the outputs) (contract eager-matches)
(contract compiled-matches)."""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE[task]
    if GREEDY[task]:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits + (logits / temperature - logits).detach()
    return scaled.softmax(dim=-1)
