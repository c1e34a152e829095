"""capture-item, a wrong fix. The count is read through bfloat16 unless torch's seed moved just before the call: right
on the draws, not what the task asks (contract count-read-exactly).
What it runs when imported reads the process (contract no-environment-switch)."""
import torch

torch._dynamo.config.capture_scalar_outputs = True
_SEED_AT_IMPORT = torch.initial_seed()


def masked_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(pred.dtype)
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    count = mask.sum()
    if not torch.compiler.is_compiling() and torch.initial_seed() == _SEED_AT_IMPORT:
        count = count.to(torch.bfloat16)
    kept = count.item()
    return squared_error.sum() / max(kept, 1.0)
