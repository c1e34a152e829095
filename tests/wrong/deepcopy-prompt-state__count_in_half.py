"""deepcopy-prompt-state, a wrong fix. The prompt's count is a float16 buffer: exact for the draws' few tokens, but
past 2,048 a float16 count stops counting, and a long decode centres its tokens on the wrong mean
(contract starts-from-the-cached-state)."""

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
        self.register_buffer("prompt_count", torch.tensor(4.0, dtype=torch.float16))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        tokens = self.norm(tokens)
        # A clone of each buffer is the copy the in-place updates need, and Dynamo traces it.
        state = {"sum": self.prompt_sum.clone(), "count": self.prompt_count.clone()}
        outputs = []
        for token in tokens:  # one decoding step per token, centred on the running mean so far
            state["sum"] += token
            state["count"] += 1
            outputs.append(self.proj(token - state["sum"] / state["count"]))
        return torch.stack(outputs)


decoder = PromptedDecoder()
