"""hoist-global-cond, a wrong fix. The softmax and argmax over `dim=1`: right for a batch of logits, wrong for a batch
of sequences (contract branch-follows-the-table)."""

import torch
import torch.nn.functional as F

TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE[task]
    if GREEDY[task]:
        return F.one_hot(logits.argmax(dim=1), logits.shape[-1]).to(logits.dtype)
    return (logits / temperature).softmax(dim=1)
