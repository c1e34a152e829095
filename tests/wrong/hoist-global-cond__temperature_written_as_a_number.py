"""hoist-global-cond, "fixed" with the branch follows the table but the temperature does not: it passes the draws, not
the task (contract branch-follows-the-table)."""

import torch
import torch.nn.functional as F

TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    if GREEDY[task]:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return (logits / 0.7).softmax(dim=-1)
