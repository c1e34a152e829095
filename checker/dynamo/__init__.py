"""What torch does: the diagnosis engine and the facts it rests on.

`engine` runs a function eagerly or under torch.compile and records every graph and graph break as
structure, `frames` finds the learner's own frame in what torch raised (`cells` names a notebook cell
as the reader sees it); `torch_support` is the supported range and every difference between releases,
found by feature detection; `registry` is torch's graph-break registry with the course's notes on each id
(`graph_breaks.toml`). The bottom layer: it imports torch and nothing else of the checker.
"""
