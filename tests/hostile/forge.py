"""Shared by the forged-frames submissions: write finished-looking result frames to the result pipe, then exit.

Not a submission itself. It computes the eager outputs of the unfixed function on the manifest's
example inputs, finds the pipe the checker reads results from in /proc/self/fd, and writes one frame per
mode claiming one graph, no break, outputs equal to the reference and nothing switched off.
"""
import contextlib
import fcntl
import io
import os

import torch

from checker.course.manifest import build_call, find_exercise


def write_only_pipes():
    """Every write-only pipe this process holds that it did not inherit through exec (close-on-exec: made by
    this Python process or its parent), newest first: the result pipe is one of them."""
    found = []
    for name in sorted(os.listdir("/proc/self/fd"), key=int, reverse=True):
        fd = int(name)
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if (fd > 2 and target.startswith("pipe:") and not os.get_inheritable(fd)
                and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY):
            found.append(fd)
    return found


def forge(exercise_id, fn, graphs=None, calls=None, parameters=("x", "weight")):
    exercise = find_exercise(exercise_id)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        outputs = [fn(*args, **kwargs) for args, kwargs in
                   (build_call(case, index) for index, case in enumerate(exercise.inputs))]
    frames = []
    for mode in ("eager", "fullgraph", "default"):
        diagnosis = {"mode": mode, "error": None, "graphs": [{"ops": ["matmul", "add"]}], "graph_breaks": [],
                     "config_changed": [], "stances": [], "calls": calls or []}
        frame = {"mode": mode, "stage": "done", "diagnosis": diagnosis, "outputs": outputs,
                 "stdout": printed.getvalue(), "tampering": [], "output_end": None}
        if mode == "default" and graphs is not None:
            frame["graphs"], frame["parameters"] = graphs, list(parameters)
        buffer = io.BytesIO()
        torch.save(frame, buffer)
        frames.append(len(buffer.getvalue()).to_bytes(8, "big") + buffer.getvalue())
    for fd in write_only_pipes():
        try:
            for data in frames:
                while data:
                    data = data[os.write(fd, data):]
        except BrokenPipeError:  # nobody reads this one: not the result pipe
            continue
        os._exit(0)
