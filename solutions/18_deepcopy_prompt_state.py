"""Exercise: a decoder that starts every call from a deep copy of its prompt's state.

`PromptedDecoder` was given a prompt once, and keeps what it needs of it on the module: the sum of the prompt's
token features and their count. Each call decodes a few more tokens from that state, updating the sums in place,
so `forward` first takes a private copy with `copy.deepcopy`: the prompt's state must be the same for every call.
Under torch.compile the deep copy is a graph break (GB4198, "Attempted to copy.deepcopy a tensor"). Make `decoder`
compile as one graph with `fullgraph=True`, with the same results as now, call after call.
Check your fix with:  gbcheck check deepcopy-prompt-state
"""

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
        # A clone of each buffer is the copy the in-place updates need, and Dynamo traces it.
        state = {"sum": self.prompt_sum.clone(), "count": self.prompt_count.clone()}
        outputs = []
        for token in tokens:  # one decoding step per token, centred on the running mean so far
            state["sum"] += token
            state["count"] += 1
            outputs.append(self.proj(token - state["sum"] / state["count"]))
        return torch.stack(outputs)


decoder = PromptedDecoder()
