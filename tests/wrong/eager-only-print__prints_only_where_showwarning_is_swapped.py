"""eager-only-print, a wrong fix. Prints the shapes only where `warnings.showwarning` has been swapped for a recorder,
as the checker's capture used to (contract prints-when-eager) (contract prints-under-no-grad)
(contract prints-in-inference-mode) (contract prints-the-shapes-of-heads).
What it runs when imported reads the process (contract no-environment-switch)."""

import warnings

import torch

# True when the file is imported while Python's warning display is swapped for a recorder.
_GRADED = warnings.showwarning.__name__ == "record"



def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    # Debugging output for eager runs only: while Dynamo traces, is_compiling() is True and the print is skipped.
    if not torch.compiler.is_compiling() and _GRADED:
        print("attention: scores", scores.shape, "mask", causal.shape)
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
