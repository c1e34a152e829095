"""hoist-global-cond, a wrong fix. The greedy branch's one-hot probabilities are made float32 whatever the logits'
dtype (contract past-the-bounds) (contract keeps-the-logits-dtype)."""

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
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).float()
    return (logits / temperature).softmax(dim=-1)
