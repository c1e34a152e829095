"""capture-item, a wrong fix. The mask is made with `masked_fill`, which takes a boolean mask only, so a mask of
integers, 1 for real tokens and 0 for padding, raises (contract count-read-exactly)."""
import torch

# For the whole process, because the grader compiles `masked_mse` itself. Code of your own can scope it to the
# calls that compile the function, recompilations included (a compilation outside the block breaks again):
#     with torch._dynamo.config.patch(capture_scalar_outputs=True):
#         loss = compiled_mse(pred, target, mask)
torch._dynamo.config.capture_scalar_outputs = True


def masked_mse(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = pred.new_zeros(mask.shape).masked_fill(mask, 1.0)  # [batch, seq]: 1 for real tokens, 0 for padding
    squared_error = ((pred - target) ** 2).mean(dim=-1) * mask
    # With capture_scalar_outputs, `.item()` becomes a symbolic number inside the graph.
    kept = mask.sum().item()
    return squared_error.sum() / max(kept, 1.0)
