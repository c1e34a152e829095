"""no-environment-switch: a file that takes its fix only where it is checked (any sign of the checked process, not a
list of them) fails from its text, on every exercise, the graph-only ones included: a test of the traced code, or
anything the module runs when imported, that reads the process rather than the call."""

import textwrap

import pytest
import torch

from checker.course.manifest import find_exercise
from checker.grading.traced_text import environment_problem
from path_choosers import fixed_only_where_imported


def _problem(body: str, entry: str = "f") -> str | None:
    return environment_problem(textwrap.dedent(body), entry)


# Each keeps a graph break on the path the checked process does not take, chosen by something that is not the call's.
SWITCHES = {
    "a flag set at import from the clock": """
        import time, torch
        FIXED = time.process_time() < 30
        def f(x):
            if FIXED:
                return x.relu()
            return x * x.sum().item()
        """,
    "a state getter in the test": """
        import torch
        def f(x):
            return x.relu() if torch.is_grad_enabled() else x * x.sum().item()
        """,
    "a local computed from one": """
        import torch
        def f(x):
            graded = torch.are_deterministic_algorithms_enabled()
            if not graded:
                return x * x.sum().item()
            return x.relu()
        """,
    "the module's own name": """
        import torch
        def f(x):
            assert __name__ != "__main__" or x.sum().item() > 0
            return x.relu()
        """,
    "a container filled at import": """
        import logging, torch
        STATE = {}
        STATE["fixed"] = not logging.getLogger().handlers
        def f(x):
            if STATE["fixed"]:
                return x.relu()
            return x * x.sum().item()
        """,
    "an attribute set in __init__ through a local": """
        import warnings, torch
        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                seen = len(warnings.filters)
                self.fixed = seen > 3
            def forward(self, x):
                return x.relu() if self.fixed else x * x.sum().item()
        f = Block()
        """,
    "an attribute set on the instance at import": """
        import time, torch
        class Block(torch.nn.Module):
            fixed = True
            def forward(self, x):
                while not self.fixed:
                    return x * x.sum().item()
                return x.relu()
        f = Block()
        f.fixed = time.monotonic() > 0
        """,
    "a callee picked by an index": """
        import torch
        from time import process_time
        FIXED = int(process_time() < 30)
        def broken(x):
            return x * x.sum().item()
        def fixed(x):
            return x.relu()
        def f(x):
            return (broken, fixed)[FIXED](x)
        """,
    "a helper bound to one of two functions": """
        import torch, random
        def broken(x):
            return x * x.sum().item()
        def fixed(x):
            return x.relu()
        helper = fixed if random.random() < 2 else broken
        def f(x):
            return helper(x)
        """,
    "an `and` that picks the value": """
        import torch
        def f(x):
            return (torch.cuda.is_available() and x * x.sum().item()) or x.relu()
        """,
    "an exception only one process raises": """
        import torch, warnings
        def f(x):
            try:
                warnings.filters[12]
            except IndexError:
                return x * x.sum().item()
            return x.relu()
        """,
    "a loop run once where the file is checked": """
        import torch, logging
        def f(x):
            for _ in logging.getLogger().handlers[:1]:
                return x.relu()
            return x * x.sum().item()
        """,
    "an attribute set from a constructor's default": """
        import torch
        class Block(torch.nn.Module):
            def __init__(self, fixed=torch.backends.mkldnn.is_available()):
                super().__init__()
                self.fixed = fixed
            def forward(self, x):
                return x.relu() if self.fixed else x * x.sum().item()
        f = Block()
        """,
    "an instance built with one": """
        import torch, time
        class Block(torch.nn.Module):
            def __init__(self, fixed: bool):
                super().__init__()
                self.fixed = fixed
            def forward(self, x):
                return x.relu() if self.fixed else x * x.sum().item()
        f = Block(time.process_time() < 30)
        """,
    "a config set at import from what a file says": """
        import numpy as np, torch
        torch._dynamo.config.capture_scalar_outputs = "Threads:\t1" in np.loadtxt("/proc/self/status", dtype=str)
        def f(x):
            return x * x.sum().item()
        """,
    "a write the sandbox refuses, its error swallowed": """
        import contextlib, torch
        torch._dynamo.config.capture_scalar_outputs = True
        with contextlib.suppress(RuntimeError):
            torch.save(torch.zeros(1), "/dev/shm/probe.pt")
            torch._dynamo.config.capture_scalar_outputs = False
        def f(x):
            return x * x.sum().item()
        """,
    "an allocation only a memory cap refuses, its error caught": """
        import torch
        torch._dynamo.config.capture_scalar_outputs = True
        try:
            torch.empty(6 * 2**30, dtype=torch.uint8)
            torch._dynamo.config.capture_scalar_outputs = False
        except RuntimeError:
            pass
        def f(x):
            return x * x.sum().item()
        """,
    "a class body that registers where a test says": """
        import torch
        class _Setup:
            if not __name__.startswith("submission"):
                torch._dynamo.disallow_in_graph(torch.relu)
        def f(x):
            return x.relu()
        """,
    "a default computed for its side effect": """
        import torch, logging
        def _unused(_=[torch._dynamo.disallow_in_graph(torch.relu) for h in logging.root.handlers]):
            pass
        def f(x):
            return x.relu()
        """,
    "a file read through a class of numpy's": """
        import numpy as np, torch
        FIXED = "NoNewPrivs:\t1" in np.lib.npyio.DataSource(None).open("/proc/self/status").read()
        def f(x):
            return x.relu() if FIXED else x * x.sum().item()
        """,
    "a file read into a storage": """
        import torch
        STATUS = bytes(torch.zeros(1).untyped_storage().from_file("/proc/self/status", False, 1000))
        def f(x):
            return x.relu() if b"NoNewPrivs:\t1" in STATUS else x * x.sum().item()
        """,
    "the loggers made so far, through a class": """
        import logging, torch
        FIXED = "networkx" in logging.Logger.manager.loggerDict
        def f(x):
            return x.relu() if FIXED else x * x.sum().item()
        """,
    "a parameter's default": """
        import torch
        def f(x, fixed=torch.backends.cudnn.enabled):
            return x.relu() if fixed else x * x.sum().item()
        """,
}


@pytest.mark.parametrize("name", sorted(SWITCHES))
def test_a_test_that_reads_the_process_fails(name):
    problem = _problem(SWITCHES[name])
    # read where the file reads it: a test of the traced code, or what the module runs when imported
    assert problem and ("neither the call's inputs nor a constant" in problem or "runs when imported (line" in problem), \
        problem


KEPT = {
    "constants the file writes out, a tensor's among them": """
        import torch
        TEMPERATURE = {"chat": torch.tensor(0.7), "code": torch.tensor(0.0)}
        GREEDY = {task: bool(t == 0) for task, t in TEMPERATURE.items()}
        LIMIT: float = 6.0
        def f(x, task: str = "chat"):
            if GREEDY[task] or LIMIT > 5:
                return x.argmax(-1)
            return x.softmax(-1)
        """,
    "the inputs, the module's own attributes and an eager-only branch": """
        import torch
        class Block(torch.nn.Module):
            def __init__(self, limit: float = 6.0):
                super().__init__()
                self.limit = limit
                self.act = torch.nn.GELU()
            def forward(self, x, mask=None):
                if not torch.compiler.is_compiling():
                    print("eager")
                if mask is None or x.dim() == 2 and self.training:
                    return self.act(x)
                return x.clamp(max=self.limit) if x.dtype == torch.float32 else x
        f = Block()
        """,
    "a module logger, the config sets and a custom operator's registrations": """
        import logging, warnings, torch
        logger = logging.getLogger(__name__)
        logger.setLevel(logging.INFO)
        torch._dynamo.config.ignore_logger_methods = {logging.Logger.info}
        torch._dynamo.config.reorderable_logging_functions.add(print)
        def vendored(x):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return x.relu()
        @torch.library.custom_op("envtest::op", mutates_args=())
        def op(x: torch.Tensor) -> torch.Tensor:
            return vendored(x)
        @op.register_fake
        def _(x):
            return torch.empty_like(x)
        def f(x):
            logger.info("shape %s", x.shape)
            return op(x)
        """,
    "a helper handed to a hatch at module level": """
        import torch
        def vendored(x):
            return x.relu()
        vendored_graph = torch._dynamo.nonstrict_trace(vendored)
        def f(x):
            return vendored_graph(x) if x.numel() else x
        """,
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_the_inputs_and_the_file_s_constants_may_be_read(name):
    assert _problem(KEPT[name]) is None


@pytest.mark.parametrize("exercise_id", ["cat-bug", "mask-where", "tolist-weights", "check-box-count"])
def test_a_fix_taken_only_where_the_file_is_checked_fails_a_graph_only_exercise(tmp_path, exercise_id):
    """The reference fix where the file runs as a module, the unfixed code where it runs as a script: the checked
    process captures the fixed graph alone, and these exercises are not read from the text otherwise. The test that
    picks the path reads the module's own name: no-environment-switch fails it, and nothing else does."""
    from checker.grading.strict import check_file

    exercise = find_exercise(exercise_id)
    attempt = tmp_path / exercise.file
    attempt.write_text(fixed_only_where_imported(exercise))
    report = check_file(exercise, attempt)
    failing = [check.name for check in report.checks if check.status == "fail"]
    assert report.status == "fail" and failing == ["no-environment-switch"], report.to_dict()
    assert "`__name__`" in report.checks[-1].message, report.checks[-1].message


def test_a_break_kept_where_the_inputs_require_gradients_fails(tmp_path):
    """A path only a training step takes (`pred.requires_grad`) keeps the unfixed code: the forward trials never
    take it, and it reads the call's own inputs, so no reading of the text refuses it. The compiled gradients are
    taken with fullgraph=True, and there the break fails compiled-matches."""
    from checker.grading.strict import check_file

    exercise = find_exercise("mask-where")
    attempt = tmp_path / exercise.file
    attempt.write_text(
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def masked_regression_loss(pred, target):\n"
        "    labelled = ~torch.isnan(target)\n"
        "    if pred.requires_grad:\n"
        "        return F.mse_loss(pred[labelled], target[labelled])\n"
        "    errors = torch.where(labelled, pred - target.nan_to_num(), 0.0)\n"
        "    return errors.pow(2).sum() / labelled.sum()\n")
    report = check_file(exercise, attempt)
    checks = {check.name: check for check in report.checks}
    failing = [name for name, check in checks.items() if check.status == "fail"]
    assert report.status == "fail" and failing == ["compiled-matches"], report.to_dict()
    assert "gradients" in checks["compiled-matches"].message, checks["compiled-matches"].message


def test_a_break_kept_where_the_modules_are_in_evaluation_mode_fails(tmp_path):
    """A path only an evaluation loop takes (`if not HEAD.training:`) reads the module the file runs, which no
    reading of the text refuses. Every other call of the fullgraph trial runs as an evaluation loop runs it (no
    autograd, the file's modules in evaluation mode), so the break there fails fullgraph-compiles."""
    from checker.grading.strict import check_file

    exercise = find_exercise("capture-nonzero")
    attempt = tmp_path / exercise.file
    attempt.write_text(exercise.solution_path.read_text().replace(
        "    rows, cols = (input_ids == MASK_ID)",
        "    if not VOCAB_HEAD.training:\n        torch._dynamo.graph_break()\n    rows, cols = (input_ids == MASK_ID)"))
    report = check_file(exercise, attempt)
    failing = [check.name for check in report.checks if check.status == "fail"]
    assert report.status == "fail" and "fullgraph-compiles" in failing, report.to_dict()


def test_a_fix_taken_only_where_torch_runs_one_thread_fails(tmp_path):
    """A float sum over a million values rounds as ATen splits it over its threads: a file that compares it, at
    import, with its one-thread value tells a process pinned to one thread from a program's own, and no reading of
    the text can call a torch function of constants a sign. The checked process runs a program's thread count, so
    the file takes its unfixed path there too."""
    from checker.grading import sandbox
    from checker.grading.strict import check_file

    if sandbox.program_threads() == 1:
        pytest.skip("a program here runs one thread too: nothing to tell apart")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        one_thread = torch.randn(2**20, generator=torch.Generator().manual_seed(0)).sum().item()
    finally:
        torch.set_num_threads(previous)
    exercise = find_exercise("mask-where")
    attempt = tmp_path / exercise.file
    attempt.write_text(exercise.solution_path.read_text().replace(
        "def masked_regression_loss(",
        f"_ONE_THREAD = torch.randn(2**20, generator=torch.Generator().manual_seed(0)).sum().item() == {one_thread!r}"
        "\n\n\ndef masked_regression_loss(").replace(
        "    errors = torch.where(",
        "    if not _ONE_THREAD:\n        return torch.nn.functional.mse_loss(pred[labelled], target[labelled])\n"
        "    errors = torch.where("))
    report = check_file(exercise, attempt)
    failing = [check.name for check in report.checks if check.status == "fail"]
    assert report.status == "fail" and "no-graph-breaks" in failing, report.to_dict()
