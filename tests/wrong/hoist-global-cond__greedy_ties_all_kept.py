"""hoist-global-cond, a wrong fix. The greedy branch marks every logit equal to the largest: one token where no two
tie, a row that sums to 2 where they do (contract branch-follows-the-table)."""

import torch
import torch.nn.functional as F

# Decoding temperature per task, loaded with the checkpoint and never changed afterwards.
TEMPERATURE = {"chat": torch.tensor(0.7), "extraction": torch.tensor(0.0)}
GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}


def next_token_probs(logits: torch.Tensor, task: str) -> torch.Tensor:
    temperature = TEMPERATURE[task]
    # The temperatures never change, so the test was done once, above, into plain Python bools.
    if GREEDY[task]:
        # Greedy: all the probability on the most likely token.
        return (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
    return (logits / temperature).softmax(dim=-1)
