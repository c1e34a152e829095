"""Hostile (stack-frames): the unfixed exercise, reporting one compilation where Dynamo made one per length.

At import it compiles the unfixed function itself on the first example, records the graph Dynamo really
captured (as the checker would), and forges result frames claiming that this one graph ran every call:
no recompilation, as far as the frames say. The graph was unrolled for one length, so the grader's
replay on the other lengths finds it wrong.
"""
import os
import sys

import torch

from checker.course.draws import REPEATS
from checker.course.manifest import build_call, find_exercise
from checker.grading import replay

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from forge import forge  # noqa: E402


def stack_frames(features, context=3):
    windows = [features[:, t:t + context].flatten(1) for t in range(features.shape[1] - context + 1)]
    return torch.stack(windows, dim=1)


captured = []


def keep(gm, example_inputs):
    captured.append(replay.graph_record(gm, example_inputs))
    return gm.forward


exercise = find_exercise("stack-frames")
args, kwargs = build_call(exercise.inputs[0], 0)
torch.compile(stack_frames, backend=keep, fullgraph=True)(*args, **kwargs)
calls = [{"graphs": [0], "returned": 0}] * (len(exercise.inputs) + REPEATS)
forge("stack-frames", stack_frames, graphs=captured[:1], calls=calls, parameters=("features", "context"))
