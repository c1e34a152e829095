"""Text that becomes code: torch has many functions that run a string (fx's `_method_from_src`, jit's
`execWrapper` and `_eval_no_call`, the `eval` of a string annotation in `torch.library.infer_schema`). The gate
reads a string written in the file as code; the audit hook of the checked process (code_guard.py) reads one built
at run time. Either way a string that reaches into the checker fails `no-grader-access`."""

import subprocess
import sys
import textwrap

import pytest

from checker.course.manifest import find_exercise
from checker.grading import gate
from checker.grading.report import FAIL, PASS
from checker.grading.sandbox import Limits
from checker.grading.strict import check_file

LIMITS = Limits(timeout=60, memory_mb=2048)

UNFIXED_COND = '''
def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    if h.mean() > 0:
        return x + torch.relu(h)
    return x - torch.tanh(h)
'''


@pytest.mark.parametrize("text", [
    'import torch\nm = torch.fx.graph_module._method_from_src("_m", "import sys\\ndef _m():\\n    return sys.modules", {})',
    'import torch\nbox = {}\ntorch.jit.unsupported_tensor_ops.execWrapper("import sys", {"box": box}, {})',
    'import torch\ndef f(x: "(__import__(\'sys\').modules, torch.Tensor)[1]") -> torch.Tensor:\n    return x',
    'import torch\ndef f(x: torch.Tensor) -> "torch.sys.modules":\n    return x',
    'import torch\nnames = ["torch.sys.modules"]',
])
def test_a_string_that_reaches_into_the_checker_is_read_as_code(text):
    found = gate.problems(text)
    assert found and any("in a string" in problem or "execWrapper" in problem for problem in found), found


@pytest.mark.parametrize("text", [
    'import functools\nfunctools.update_wrapper(g, obj, assigned=("__globals__",), updated=())',
    'import functools\nw = functools.wraps(obj, ("__module__",))',
    'import torch\ntorch.fx.graph_module._copy_attr(obj, grab, "__name__")',
    'import torch\ntorch.fx.Interpreter.fetch_attr(me, "weight")',
    'import torch\ntorch.jit.annotations._eval_no_call(text, {}, None)',
    'import torch\ntree = torch.jit.frontend.ast.parse("1")',
    'name = "__globals__"', 'parts = ("sys", "modules")',
    'import torch\nmodule = torch.inspect.getmodule(obj)', 'import torch\nframes = torch.fx.node.inspect.stack(0)',
    'import enum\nenum.EnumType._convert_("E", "x", lambda name: True)', 'where = "checker.grading.sandbox"',
    'class C:\n    __module__ = "x"', 'C.__module__ = name',
])
def test_a_lookup_of_an_attribute_by_a_string_is_refused(text):
    """Helpers that read or write an attribute named by a string, and the names they would be handed."""
    assert gate.problems(text), text


@pytest.mark.parametrize("text", [
    'import dataclasses\nBoxes = dataclasses.make_dataclass("Boxes", [("x", int)])\nBoxes.__module__ = __name__',
    'import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        return fn(*a)\n    return inner',
    'mode = "eval"', 'modes = ("train/eval", "open")', 'schema = "mylib::op(Tensor x) -> Tensor"',
    'def f(x):\n    """Seconds per call of `layer(x)`, timed from outside after a warm-up."""\n    return x',
    'import torch\ndef f(x: "torch.Tensor") -> "torch.Tensor":\n    return x',
    'from torch.utils import benchmark\nt = benchmark.Timer("layer(x)", globals={})',
])
def test_a_plain_string_is_not_taken_for_code(text):
    assert gate.problems(text) == []


# The string is built when the file runs, so no text check sees it; jit's parser of type comments evaluates the
# attribute walk, with `t` looked up through the callback it is given.
BUILT_AT_IMPORT = '''
import torch
modules = torch.jit.annotations.parse_type_line("# type: (int) -> " + "t.s" + "ys.mo" + "dules", lambda name: torch, None)
''' + UNFIXED_COND

CAUGHT = '''
import torch
try:
    modules = torch.jit.annotations.parse_type_line("# type: (int) -> " + "t.s" + "ys.mo" + "dules", lambda name: torch, None)
except PermissionError:
    modules = None
''' + UNFIXED_COND.replace("if h.mean() > 0:\n        return x + torch.relu(h)\n    return x - torch.tanh(h)",
                           "return torch.where(h.mean() > 0, x + torch.relu(h), x - torch.tanh(h))")

BUILT_IN_THE_ENTRY = '''
import torch


def gated_residual(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    h = x @ weight
    torch.jit.annotations.parse_type_line("# type: (int) -> " + "t.s" + "ys.mo" + "dules", lambda name: torch, None)
    return torch.where(h.mean() > 0, x + torch.relu(h), x - torch.tanh(h))
'''


@pytest.mark.parametrize("text", [BUILT_AT_IMPORT, CAUGHT, BUILT_IN_THE_ENTRY], ids=["at-import", "caught", "in-entry"])
def test_a_string_built_at_run_time_and_run_as_code_fails_the_gate(tmp_path, text):
    path = tmp_path / "03_cond_on_input.py"
    path.write_text(text)
    assert gate.problems(text) == []  # nothing in the text: the checked process's hook finds it
    report = check_file(find_exercise("cond-on-input"), path, LIMITS)
    checks = {check.name: check for check in report.checks}
    assert report.status != PASS and checks["no-grader-access"].status == FAIL, report.to_dict()
    assert "at run time, text run as code ('t.sys.modules'" in checks["no-grader-access"].message


def test_the_hook_leaves_what_python_and_torch_compile_for_a_plain_file_alone(tmp_path):
    """A dataclass, a namedtuple with defaults, a timer's statement and compiled functions, one of them resumed
    after a graph break, in a process with the hook: each is compiled on the file's behalf or by Dynamo (which sets
    up the resumed comprehension's function), and none of it reaches into the checker."""
    learner = tmp_path / "learner.py"
    learner.write_text(textwrap.dedent('''
        import collections, dataclasses, timeit
        import torch

        @dataclasses.dataclass(frozen=True)
        class Box:
            low: float
            high: float = 1.0

        Pair = collections.namedtuple("Pair", "a b", defaults=(2,))
        seconds = timeit.timeit("sum(range(10))", number=3)
        compiled = torch.compile(lambda x: torch.relu(x) + Box(0.0).high, backend="eager", fullgraph=True)
        print(compiled(torch.ones(2)).tolist(), Pair(1).b, seconds > 0)

        def order(x):
            pairs = sorted([(v, i) for i, v in enumerate(x.tolist())])  # a graph break: Dynamo resumes after it
            return torch.tensor([i for _, i in pairs]) * 2

        print(torch.compile(order, backend="eager")(torch.tensor([3.0, 1.0, 2.0])).tolist())
        try:
            eval("__imp" + "ort__('sys')")
        except PermissionError as err:
            print("refused:", err)
    '''))
    program = textwrap.dedent(f'''
        from checker.grading import code_guard, trial
        code_guard.install(None)
        trial.import_file({str(learner)!r})
    ''')
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "[2.0, 2.0] 2 True" in run.stdout and "[2, 4, 0]" in run.stdout
    assert "refused: no-grader-access: text run as code" in run.stdout and "`__import__`" in run.stdout


def test_a_module_the_file_imports_from_beside_it_is_read_as_its_code():
    """tests/hostile/forged_frames_cond.py puts its own folder on sys.path and imports forge.py, which writes
    result frames: the gate sees only the importing file, the hook reads forge.py's source as it is compiled."""
    from pathlib import Path

    hostile = Path(__file__).parent / "hostile"
    report = check_file(find_exercise("cond-on-input"), hostile / "forged_frames_cond.py", LIMITS)
    checks = {check.name: check for check in report.checks}
    assert report.status != PASS and checks["no-grader-access"].status == FAIL, report.to_dict()
    assert "at run time, text run as code" in checks["no-grader-access"].message


def test_the_hook_refuses_a_syntax_tree_a_borrowed_file_name_and_swapped_code(tmp_path):
    """A syntax tree's constants can be any object (whose repr would run while the hook reads it), code compiled
    under the name of a torch or Python file would pass for theirs on the call stack, and a function whose code or
    defaults are replaced no longer runs what the gate read: by the file's own code, or by a helper of Python's
    (on a function of torch's, or on the file's own)."""
    learner = tmp_path / "learner.py"
    learner.write_text(textwrap.dedent('''
        import ast, functools, os
        from unittest import mock
        import torch

        def swapped():
            return 0

        def set_code():
            swapped.__code__ = (lambda: 1).__code__

        def set_defaults():
            swapped.__defaults__ = (1,)

        def helper_sets_defaults():
            mock.patch.object(torch.nn.functional.dropout, "__defaults__", (0.0, False, False)).start()

        def helper_sets_code():
            functools.update_wrapper(swapped, lambda: 2, assigned=("__code__",), updated=())

        for make in (lambda: compile(ast.parse("1"), "<tree>", "eval"), lambda: compile("x = 1", os.__file__, "exec"),
                     set_code, set_defaults, helper_sets_defaults, helper_sets_code):
            try:
                make()
                print("it compiled")
            except PermissionError as err:
                print("refused:", err)
    '''))
    program = f"from checker.grading import code_guard, trial\ncode_guard.install(None)\ntrial.import_file({str(learner)!r})"
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "it compiled" not in run.stdout, run.stdout
    assert "a syntax tree, or an object other than text, compiled as code" in run.stdout
    assert "text compiled under the name of a file of torch's, Python's or the checker's" in run.stdout
    assert "a function's `__code__` replaced" in run.stdout and "a function's `__defaults__` replaced" in run.stdout
    assert run.stdout.count("a function's `__defaults__` replaced") == 2
    assert run.stdout.count("a function's `__code__` replaced") == 2
    assert run.stdout.count("refused: ") == 6
    # each straight to the descriptor, for the grader (mock's putting back what it replaced, refused too, adds one)
    assert run.stderr.count("gbcheck refused code: ") == 7



def test_the_hook_refuses_an_objects_class_swapped(tmp_path):
    """A module given a class of the file's own answers every attribute look-up as that class says: refused at
    run time, however the attribute's name was built. A class of the file's own is still the file's to change."""
    learner = tmp_path / "learner.py"
    learner.write_text(textwrap.dedent('''
        import torch

        class Lying(type(torch)):
            pass

        class Mine:
            size = 1

        try:
            object.__setattr__(torch, "__cl" + "ass__", Lying)
            print("it changed")
        except PermissionError as err:
            print("refused:", err)
        Mine.size = 2
        print("own class:", Mine.size)
    '''))
    program = f"from checker.grading import code_guard, trial\ncode_guard.install(None)\ntrial.import_file({str(learner)!r})"
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "refused: no-grader-access: an object's class replaced" in run.stdout, run.stdout
    assert "own class: 2" in run.stdout and "it changed" not in run.stdout
    assert run.stderr.count("gbcheck refused code: ") == 1


def test_the_hook_refuses_a_descriptor_opened_by_number_to_write(tmp_path):
    """The checked process's result pipe is a descriptor: a file object made of its number (a logging stream's raw
    file, re-made with another descriptor) would write result frames of its own. Reading one is left alone."""
    learner = tmp_path / "learner.py"
    learner.write_text(textwrap.dedent('''
        import io, os

        readable, writable = os.pipe()
        try:
            io.FileIO(writable, "wb", closefd=False)
            print("it opened")
        except PermissionError as err:
            print("refused:", err)
        io.FileIO(readable, "rb", closefd=False)
        print("read: left alone")
    '''))
    program = f"from checker.grading import code_guard, trial\ncode_guard.install(None)\ntrial.import_file({str(learner)!r})"
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "refused: no-grader-access: file descriptor" in run.stdout and "opened to write" in run.stdout, run.stdout
    assert "read: left alone" in run.stdout and "it opened" not in run.stdout


def test_the_checked_process_has_one_audit_hook_that_hands_each_event_to_its_handlers():
    """confine's and code_guard's handlers share one hook (each hook costs a Python call on every one of a
    check's tens of thousands of events): registered in order, each called for its own events only, a refusal
    stops those after it, and a frame `CALLER` up is the code that raised the event."""
    script = textwrap.dedent('''
        import sys
        added = []
        sys.addaudithook(lambda event, args: added.append(1) if event == "sys.addaudithook" else None)
        from checker.grading import audit_hook
        calls = []

        def first(event, args):
            calls.append(("first", event, sys._getframe(audit_hook.CALLER).f_code.co_name))
            if args and args[0] == "refused":
                raise PermissionError("refused")

        audit_hook.watch(["gbcheck.test"], first)
        audit_hook.watch(["gbcheck.test", "gbcheck.other"], lambda event, args: calls.append(("second", event)))

        def raiser():
            sys.audit("gbcheck.test", "fine")
            sys.audit("gbcheck.other")
            sys.audit("gbcheck.unwatched")
            try:
                sys.audit("gbcheck.test", "refused")
            except PermissionError:
                calls.append("refused")

        raiser()
        print(len(added), calls)
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("1 [('first', 'gbcheck.test', 'raiser'), ('second', 'gbcheck.test'), "
                                   "('second', 'gbcheck.other'), ('first', 'gbcheck.test', 'raiser'), 'refused']")
