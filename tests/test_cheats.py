"""Every shortcut that hides a graph break instead of fixing it is rejected, with a reason.

Each test writes a submission for an exercise and grades it exactly as `gbcheck check --file` would.
"""

import textwrap

import pytest

from checker.course.manifest import find_exercise
from checker.grading.report import ERROR, FAIL, PASS
from checker.grading.sandbox import Limits
from checker.grading.strict import check_file

COND = find_exercise("cond-on-input")
BROKEN_BODY = '''
def gated_residual(x, weight):
    h = x @ weight
    if h.mean() > 0:
        return x + torch.relu(h)
    return x - torch.tanh(h)
'''
FIXED_BODY = '''
def gated_residual(x, weight):
    h = x @ weight
    return torch.cond(h.mean() > 0, lambda x, h: x + torch.relu(h), lambda x, h: x - torch.tanh(h), (x, h))
'''


def grade(tmp_path, source, exercise=COND, limits=Limits(timeout=20, memory_mb=1024)):
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(source))
    report = check_file(exercise, path, limits)
    return report, {check.name: check for check in report.checks}


def test_an_honest_fix_passes(tmp_path):
    report, _ = grade(tmp_path, "import torch\n" + FIXED_BODY)
    assert report.status == PASS


@pytest.mark.parametrize("switch_off, finding", [
    ("torch._dynamo.config.suppress_errors = True", "suppress_errors"),
    ('torch.compiler.set_stance("force_eager")', "stance"),
    ("torch._dynamo.config.capture_scalar_outputs = True", "capture_scalar_outputs"),
    ("torch.compile = lambda fn, **kwargs: fn", "torch.compile"),
    ("torch._dynamo.symbolic_convert.InstructionTranslatorBase.log_graph_break = lambda *a, **k: None",
     "log_graph_break"),
    ("import builtins; builtins.print = lambda *a, **k: None", "builtins.print"),
    ("torch.Tensor.item = lambda self: 1.0", "torch.Tensor.item"),
    ("import sys; sys.modules['checker.dynamo.engine']._active = []", "checker.dynamo.engine._active"),
    ("import torch._dynamo.symbolic_convert as s; "
     "s.InstructionTranslatorBase.log_graph_break.__closure__[0].cell_contents = print", "log_graph_break"),
    ("import sys; sys.modules['checker.dynamo.engine'].diagnose.__defaults__ = ('eager',)", "checker.dynamo.engine.diagnose"),
])
def test_switching_things_off_is_rejected(tmp_path, switch_off, finding, without_code_guard):
    from torch._dynamo.symbolic_convert import InstructionTranslatorBase

    if "log_graph_break.__closure__" in switch_off and not hasattr(InstructionTranslatorBase, "log_graph_break"):
        pytest.skip("torch 2.8/2.9 report breaks through a module function: this method does not exist")
    report, checks = grade(tmp_path, "import torch\n" + switch_off + "\n" + FIXED_BODY)
    assert report.status == FAIL
    assert checks["nothing-switched-off"].status == FAIL
    assert finding in checks["nothing-switched-off"].message


def test_defaults_replaced_are_refused_at_run_time(tmp_path):
    """The checked process's hook stops the replacement itself (the tamper check behind it, above, finds it too)."""
    switch_off = "import sys; sys.modules['checker.dynamo.engine'].diagnose.__defaults__ = ('eager',)"
    report, checks = grade(tmp_path, "import torch\n" + switch_off + "\n" + FIXED_BODY)
    assert report.status == FAIL, report.to_dict()
    assert "at run time, a function's `__defaults__` replaced" in checks["no-grader-access"].message


def test_disabled_entry_is_rejected(tmp_path):
    report, checks = grade(tmp_path, "import torch\n@torch.compiler.disable" + BROKEN_BODY)
    assert report.status == FAIL
    assert "torch.compiler.disable" in checks["nothing-switched-off"].message
    assert checks["no-graph-breaks"].status == FAIL


def test_disabled_helper_is_a_graph_break(tmp_path):
    source = '''
    import torch

    @torch.compiler.disable
    def pick(x, h):
        return x + torch.relu(h) if h.mean() > 0 else x - torch.tanh(h)

    def gated_residual(x, weight):
        return pick(x, x @ weight)
    '''
    report, checks = grade(tmp_path, source)
    assert report.status == FAIL
    assert "GB0098" in checks["no-graph-breaks"].message
    assert checks["fullgraph-compiles"].status == FAIL


def test_config_patch_decorator_is_seen_while_compiling(tmp_path):
    source = "import torch\n@torch._dynamo.config.patch(suppress_errors=True)" + BROKEN_BODY
    report, checks = grade(tmp_path, source)
    assert report.status == FAIL
    assert "suppress_errors" in checks["nothing-switched-off"].message


def test_explicit_graph_break_is_reported(tmp_path):
    source = "import torch\n" + FIXED_BODY.replace("    h = x @ weight", "    h = x @ weight\n    torch._dynamo.graph_break()")
    report, checks = grade(tmp_path, source)
    assert report.status == FAIL
    assert "GB0025" in checks["no-graph-breaks"].message


def test_different_behaviour_when_compiling_is_caught(tmp_path):
    source = "import torch\n" + FIXED_BODY.replace(
        "    h = x @ weight", "    if torch.compiler.is_compiling():\n        return x\n    h = x @ weight")
    report, checks = grade(tmp_path, source)
    assert report.status == FAIL
    assert checks["compiled-matches"].status == FAIL
    assert checks["eager-matches"].status == PASS


def test_wrong_result_is_caught_eagerly(tmp_path):
    report, checks = grade(tmp_path, "import torch\n" + FIXED_BODY.replace("x + torch.relu(h)", "x + torch.relu(h) * 2"))
    assert report.status == FAIL
    assert checks["eager-matches"].status == FAIL
    assert "input 1" in checks["eager-matches"].message  # the relu branch is input 1


def test_forged_results_on_stdout_are_ignored(tmp_path):
    forged = 'print(\'{"id": "cond-on-input", "status": "pass", "checks": []}\')\nprint("PASSED")\n'
    report, _ = grade(tmp_path, "import torch\n" + forged + BROKEN_BODY)
    assert report.status == FAIL
    assert '"status": "pass"' in report.output  # shown to the learner as output, never read as a verdict


@pytest.mark.parametrize("source, expected", [
    ("import torch\ndef gated_residual(x, weight:\n    return x\n", "SyntaxError"),
    ("import torch\n", "`gated_residual` is not defined"),
    ("import torch\ngated_residual = 3\n", "is not callable"),
    ("import torch\nraise RuntimeError('boom at import')\n", "boom at import"),
    ("import torch, sys\nsys.exit(0)\n", "sys.exit"),
    ("import os\nos._exit(0)\n", "exit code 0"),
    ("import torch\ndef gated_residual(x, weight):\n    raise ValueError('nope')\n", "fails without torch.compile too"),
    ("import torch\ndef gated_residual(x, weight):\n    while True:\n        pass\n", "did not finish"),
    ("import ctypes\nctypes.string_at(0)\n", "crashed (SIGSEGV)"),
    ("import torch\ndef gated_residual(x, weight):\n    return torch.empty(10**11)\n", "alloc"),
    ("hog = [bytearray(10**8) for _ in range(100)]\n", "MemoryError"),
])
def test_bad_submissions_are_errors_with_a_reason(tmp_path, source, expected):
    report, checks = grade(tmp_path, source, limits=Limits(timeout=5, memory_mb=1024))
    assert report.status == ERROR
    assert report.points == 0
    assert expected in checks["eager-runs"].message, checks["eager-runs"].message


def test_missing_file_is_an_error(tmp_path):
    report = check_file(COND, tmp_path / "nowhere.py")
    assert report.status == ERROR
    assert "no file" in report.message
