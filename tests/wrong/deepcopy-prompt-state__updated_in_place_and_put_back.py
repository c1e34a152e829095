"""deepcopy-prompt-state, "fixed" with no copy at all: the steps update the cached buffers in place and subtract
what they added once the loop is done. The outputs match within their tolerance, but every call starts from the
state the previous one left, which drifts by rounding (x + t - t is not always x), where the task asks for every
call to start from the state as it was cached (contract cached-state-left-as-it-was)."""

import torch


class PromptedDecoder(torch.nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, dim)
        # What the decoder keeps of its prompt: the sum of the prompt's 4 token features, and their count, as
        # buffers, which `.to(device)` moves and `state_dict()` saves (a dict attribute is neither moved nor saved).
        self.register_buffer("prompt_sum", torch.randn(dim) * 4)
        self.register_buffer("prompt_count", torch.tensor(4.0))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = self.norm(tokens)
        state = {"sum": self.prompt_sum, "count": self.prompt_count}  # no copy: the buffers themselves
        outputs = []
        for token in tokens:  # one decoding step per token, centred on the running mean so far
            state["sum"] += token
            state["count"] += 1
            outputs.append(self.proj(token - state["sum"] / state["count"]))
        self.prompt_sum -= tokens.sum(dim=0)  # put back what the steps added
        self.prompt_count -= tokens.shape[0]
        return torch.stack(outputs)


decoder = PromptedDecoder()
