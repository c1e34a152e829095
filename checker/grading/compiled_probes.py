"""The probes that compile: a contract's expression calls them (checker/course/contracts.py, grading/probes.py).

Compiling is the costly part of a check, so each has a stand-in on the reference (`STAND_INS`), whose compiled
code the course proves equal to its eager code and within its counts (`gbcheck verify` runs these probes on the
solutions, in a trial): a check compiles a probe once, in the checked process, not twice.
"""

from __future__ import annotations

from typing import Any

import torch

from checker.dynamo import engine


def compiled(module: Any) -> Any:
    """For a contract's expression: the module compiled (Dynamo's eager backend), as a learner would time it. A
    timer the layer keeps inside itself, skipped while Dynamo traces, times nothing of it."""
    return torch.compile(module, backend="eager")


def run_compiled(function: Any) -> Any:
    """For a contract's expression: `function` compiled (Dynamo's eager backend) and called as compiled even inside
    a probe, which otherwise runs eagerly: what the compiled code computes for arguments the draws do not pass (a
    branch on `is_compiling()` is taken as it is when compiled). On the reference, `run_as_is` stands in for it."""
    # static shapes: each probe's sizes traced as they are, which costs a quarter of a symbolic trace of a second size
    compiled_function = torch.compile(function, backend="eager", dynamic=False)

    def call(*args: Any, **kwargs: Any) -> Any:
        with engine._set_stance("default"):
            return compiled_function(*args, **kwargs)
    return call


def compilations(function: Any, calls: list[tuple[Any, ...]], most: int) -> bool:
    """For a contract's expression (`compilations(stack_frames, [(x, 3), ...], most=2)`): whether `function`,
    compiled afresh, compiles into at most `most` graphs over `calls`, one argument tuple each, in their order,
    whatever the draws' lengths were: a file that compiles again past some length the draws never reach is seen.
    It stops at the first graph past `most` (an unfixed file breaks or recompiles on every call, and each costs a
    trace). On the reference, `within_count` stands in for it."""
    graphs = []

    def count(graph: Any, example_inputs: Any) -> Any:
        graphs.append(None)
        if len(graphs) > most:
            raise _TooMany
        return graph.forward

    torch._dynamo.reset()  # what earlier compilations of the function learned of its sizes is not this count's
    counted = torch.compile(function, backend=count)
    try:
        with engine._set_stance("default"):
            for args in calls:
                counted(*args)
    except Exception:  # noqa: BLE001 - Dynamo wraps what the backend raised
        if len(graphs) <= most:
            raise
    return len(graphs) <= most  # also where the file swallowed the backend's error (`suppress_errors`)


class _TooMany(Exception):
    """`compilations` has counted a graph past its `most`."""


def within_count(function: Any, calls: list[tuple[Any, ...]], most: int) -> bool:
    """`compilations` on the reference: the course's solution compiles within its count (`gbcheck verify` proves
    it, on the trial side), so a check compiles the probe once, not twice."""
    return True


def run_as_is(function: Any) -> Any:
    """`run_compiled` on the reference: its compiled code computes what its eager code does (the course proves it:
    `gbcheck verify`), so the probe runs it eagerly there, and a check compiles once, not twice."""
    return function


STAND_INS = {"run_compiled": run_as_is, "compilations": within_count}
