"""Where the graph cannot tell, the grader reads the file: the `untraced` and `call` constructs of the structure
contracts (checker/grading/traced_text.py, grading/contracts.py).

A trace of the unfixed code is already the fixed graph for a print, a logger call, a warning, a clock read, a
deep copy, a class statement or a `requires_grad_` in the traced code, so the grade of those lessons rests on
the file's text as the grader reads it, never on what the checked process says. These tests run no torch:
they read files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker.course.manifest import find_exercise, load_exercises
from checker.grading.contracts import contract_checks
from checker.grading.report import FAIL, PASS
from checker.grading.traced_text import untraced_problem

ROOT = Path(__file__).resolve().parent.parent
TEXT_CONTRACTS = [(exercise, contract) for exercise in load_exercises() for contract in exercise.contracts
                  if contract.file_has.startswith(("untraced ", "config ", "hatch "))]
# What a task keeps using: the unfixed file does it too, so only the fixes are held to it here.
KEPT_CONTRACTS = [(exercise, contract) for exercise in load_exercises() for contract in exercise.contracts
                  if contract.file_has.startswith("reaches ")]


def _fixes(exercise, everywhere: bool = False) -> list[Path]:
    """The reference and the alternative fixes that can be done on this torch (an alternative's docstring says
    "Needs torch.x.y." or "Needs torch 2.9 or later" where it cannot everywhere); `everywhere`: all of them."""
    from checker.dynamo import torch_support

    def runs_here(path: Path) -> bool:
        text = path.read_text(encoding="utf-8")
        return all(torch_support.has_feature(f) for f in re.findall(r"^Needs (torch\.[\w.]+)\.$", text, re.M)) and \
            not any(torch_support.torch_before(r) for r in re.findall(r"^Needs torch (\d+\.\d+) or later", text, re.M))

    files = [exercise.solution_path, *sorted((ROOT / "tests" / "alternatives").glob(f"{exercise.id}__*.py"))]
    return [path for path in files if not path.name.endswith(".rejected.py") and (everywhere or runs_here(path))]


def _check(exercise, contract, source: str):
    """The contract's check on `source`, with a report as a forge would make it: every observation there."""
    forged_verdict = {"status": PASS, "holds": []}
    checks = contract_checks(exercise, {}, {"observed": {}}, forged_verdict, source, exercise.exercise_path.read_text())
    return next(check for check in checks if check.name == contract.name)


def test_the_lessons_the_graph_cannot_tell_are_read_from_the_text():
    graded = {exercise.id for exercise, contract in TEXT_CONTRACTS if contract.file_has.startswith("untraced")}
    assert {"hoist-global-cond", "nested-rotary-table", "streaming-accuracy", "reorder-print", "eager-only-print", "ignore-logger", "warn-at-init",
            "nested-activation-guard",
            "deepcopy-prompt-state", "freeze-at-init", "module-level-dataclass", "time-from-outside",
            "stats-off-hot-path", "capstone-block", "fused-norm-allow-in-graph"} <= graded


@pytest.mark.parametrize("exercise,contract", TEXT_CONTRACTS,
                         ids=lambda item: getattr(item, "id", getattr(item, "name", "")))
def test_the_unfixed_file_fails_whatever_its_report_says_and_every_fix_passes(exercise, contract):
    unfixed = _check(exercise, contract, exercise.exercise_path.read_text())
    assert unfixed.status == FAIL and contract.says in unfixed.message
    fixes = _fixes(exercise)
    assert len(_fixes(exercise, everywhere=True)) >= 3  # the reference and at least two other correct fixes
    for path in fixes:
        assert _check(exercise, contract, path.read_text()).status == PASS, path.name


# Each: an exercise, a way to take the fix out of its solution (old text -> new), and what the report then names.
UNDONE = [
    ("eager-only-print", ("if not torch.compiler.is_compiling():", "if True:"), "`print`"),
    ("reorder-print", ("torch._dynamo.config.reorderable_logging_functions.add(print)", "pass"), "`print`"),
    ("ignore-logger", ("torch._dynamo.config.ignore_logging_functions.add(logger.info)", "pass"), "`logger.info`"),
    ("nested-activation-guard", ("not torch.compiler.is_compiling() and ", ""), "`logger.warning`"),
    ("deepcopy-prompt-state", ('state = {"sum": self.prompt_sum.clone(), "count": self.prompt_count.clone()}',
                               'state = copy.deepcopy({"sum": self.prompt_sum, "count": self.prompt_count})'),
     "`copy.deepcopy`"),
    ("capstone-block", ("if not torch.compiler.is_compiling():", "if True:"), "`print`"),
    ("fused-norm-allow-in-graph", ("torch.compiler.allow_in_graph(RMSNormFunction)", "pass"), "import statement"),
]


@pytest.mark.parametrize("exercise_id,edit,named", UNDONE, ids=[case[0] for case in UNDONE])
def test_taking_the_fix_out_of_the_solution_fails_the_construct(exercise_id, edit, named):
    exercise = find_exercise(exercise_id)
    contract = next(c for c in exercise.contracts if c.file_has.startswith("untraced"))
    solution = exercise.solution_path.read_text()
    if edit[0] not in solution and exercise.applied:  # this torch's solution is a variant, fixed otherwise
        pytest.skip(f"the solution on {', '.join(exercise.applied)} is another")
    assert edit[0] in solution
    check = _check(exercise, contract, "import copy\n" + solution.replace(edit[0], edit[1], 1))
    assert check.status == FAIL and named in check.message


EAGER_ONLY_PRINT = find_exercise("eager-only-print")
PRINTED = 'print("attention: scores", scores.shape, "mask", causal.shape)'
# The unfixed print, hidden from a reading that looks only at the entry's own calls by name.
HIDDEN = {
    "an alias": ("say = print\n", "say(", PRINTED.replace("print(", "say(")),
    "a helper": ("def show(*parts):\n    print(*parts)\n\n\n", "", PRINTED.replace("print(", "show(")),
    "a helper's helper": ("def show(*parts):\n    emit(parts)\n\n\ndef emit(parts):\n    print(*parts)\n\n\n", "",
                          PRINTED.replace("print(", "show(")),
    "a lambda": ("", "", f"(lambda: {PRINTED})()"),
    "a decorator that calls what it wraps": (
        "def traced(fn):\n    def inner(*a):\n        return fn(*a)\n    return inner\n\n\n"
        "@traced\ndef show(*parts):\n    print(*parts)\n\n\n", "", PRINTED.replace("print(", "show(")),
    "a class built in the call": ("class Show:\n    def __init__(self, *parts):\n        print(*parts)\n\n\n", "",
                                  PRINTED.replace("print(", "Show(")),
    "the else of a compiling test": ("", "",
                                     f"if torch.compiler.is_compiling():\n        pass\n    else:\n        {PRINTED}"),
    "a lambda in a module global": ("say = lambda *parts: print(*parts)\n\n\n", "", PRINTED.replace("print(", "say(")),
    "a static method": ("class Out:\n    @staticmethod\n    def show(*parts):\n        print(*parts)\n\n\n", "",
                        PRINTED.replace("print(", "Out.show(")),
    "a factory's closure": ("def make():\n    def show(*parts):\n        print(*parts)\n    return show\n\n\n"
                            "show = make()\n\n\n", "", PRINTED.replace("print(", "show(")),
    "a method of an object the reading cannot type": (
        "class Out:\n    def emit(self, *parts):\n        print(*parts)\n\n\ndef out():\n    return Out()\n\n\n", "",
        PRINTED.replace("print(", "out().emit(")),
    "an object's __call__ picked from a tuple": (
        "class Show:\n    def __call__(self, *parts):\n        print(*parts)\n\n\nsay = (Show(),)[0]\n\n\n", "",
        PRINTED.replace("print(", "say(")),
    "a dict of functions": ('SHOW = {"p": print}\n\n\n', "", PRINTED.replace("print(", 'SHOW["p"](')),
    "a class attribute": ("class Out:\n    show = print\n\n\n", "", PRINTED.replace("print(", "Out.show(")),
    "a tuple unpacked": ("say, = (print,)\n\n\n", "", PRINTED.replace("print(", "say(")),
    "functools.partial": ("import functools\nsay = functools.partial(print)\n\n\n", "",
                          PRINTED.replace("print(", "say(")),
    "the compiling side of a conditional expression": (
        "", "", f"None if not torch.compiler.is_compiling() else {PRINTED}"),
    "a conditional expression on a test that is not is_compiling()": (
        "", "", f"None if torch.is_grad_enabled() else {PRINTED}"),
    "an is_compiling() that is not the first test of an or": (
        "", "", f"if torch.compiler.is_compiling() or True:\n        {PRINTED}"),
}


def test_the_eager_side_of_a_conditional_expression_is_not_traced():
    source = EAGER_ONLY_PRINT.exercise_path.read_text().replace(
        PRINTED, f"None if torch.compiler.is_compiling() else {PRINTED}")
    assert untraced_problem(source, "causal_attention", "print") is None


@pytest.mark.parametrize("how", sorted(HIDDEN))
def test_a_print_hidden_in_the_traced_code_is_still_found(how):
    before_entry, _, call = HIDDEN[how]
    source = EAGER_ONLY_PRINT.exercise_path.read_text()
    assert PRINTED in source
    source = source.replace(PRINTED, call)
    source = source.replace("\ndef causal_attention(", f"\n{before_entry}def causal_attention(", 1)
    problem = untraced_problem(source, "causal_attention", "print")
    if how == "the else of a compiling test":  # eager runs take the else: the print is where only they reach it
        assert problem is None
        return
    assert problem is not None and "`print`" in problem, how


def test_names_are_matched_as_python_resolves_them():
    source = ("import torch\nimport time as clock\nfrom copy import deepcopy as dc\n\n\n"
              "def f(x):\n    t = clock.monotonic()\n    return dc(x), t\n")
    assert "`time.monotonic`" in untraced_problem(source, "f", "time.*")
    assert "`copy.deepcopy`" in untraced_problem(source, "f", "copy.deepcopy")
    assert untraced_problem(source, "f", "print") is None
    method = "import torch\n\n\ndef f(m, x):\n    m.weight.requires_grad_(False)\n    return x\n"
    assert "requires_grad_" in untraced_problem(method, "f", ".requires_grad_")


def test_a_module_entry_is_traced_from_its_forward_and_its_submodules_but_not_its_constructor():
    source = ("import warnings\nimport torch\n\n\nclass Inner(torch.nn.Module):\n    def forward(self, x):\n"
              "        warnings.warn('inner')\n        return x\n\n\nclass Outer(torch.nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n        warnings.warn('built')\n"
              "        self.layers = torch.nn.ModuleList([Inner() for _ in range(2)])\n\n"
              "    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n"
              "        return x\n\n\n"
              "model = Outer()\n")
    problem = untraced_problem(source, "model", "warnings.warn")
    assert problem is not None and "line 7" in problem  # Inner.forward's
    assert untraced_problem(source.replace("warnings.warn('inner')", "pass"), "model", "warnings.warn") is None


def test_an_entry_the_text_does_not_show_fails_closed():
    source = "import torch\n\n\ndef build():\n    return torch.nn.Identity()\n\n\nmodel = build()\n"
    assert "cannot find" in untraced_problem(source, "model", "print")
    exercise = find_exercise("eager-only-print")
    contract = next(c for c in exercise.contracts if c.file_has.startswith("untraced"))
    assert _check(exercise, contract, source.replace("model", "causal_attention")).status == FAIL


def test_a_hatch_construct_counts_a_decorator_and_names_every_choice_when_none_is_there():
    exercise = find_exercise("bisect-polyfill")
    contract = next(c for c in exercise.contracts if c.file_has.startswith("hatch "))
    decorated = exercise.exercise_path.read_text().replace(
        "\ndef pad_to_bucket(", "\n@torch._dynamo.nonstrict_trace\ndef pad_to_bucket(", 1)
    assert _check(exercise, contract, decorated).status == PASS
    unfixed = _check(exercise, contract, exercise.exercise_path.read_text())
    assert "calls none of" in unfixed.message and "`torch.compiler.substitute_in_graph`" in unfixed.message


HOIST = find_exercise("hoist-global-cond")


@pytest.mark.parametrize("test_line,found", [
    ("    if temperature == 0:", True),  # the unfixed test itself
    ("    scaled = temperature * 2\n    if scaled == 0:", True),  # through a local computed from it
    ("    if TEMPERATURE[task] == 0:", True),
    ("    assert temperature >= 0\n    if task == 'extraction':", True),
    ("    greedy = True if temperature == 0 else False\n    if greedy:", True),
    ("    if task == 'extraction':", False),  # a branch on a Python string: decided while tracing
])
def test_a_branch_on_the_tensor_global_is_found_however_it_reads_it(test_line, found):
    source = HOIST.exercise_path.read_text()
    assert "    if temperature == 0:" in source
    problem = untraced_problem(source.replace("    if temperature == 0:", test_line, 1), HOIST.entry,
                               "branch-on:TEMPERATURE")
    assert (problem is not None and "a branch on `TEMPERATURE`" in problem) == found, problem


def test_only_what_puts_a_function_in_a_left_out_set_leaves_its_calls_out():
    source = REORDER.exercise_path.read_text()
    added = "import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
    assert untraced_problem(added + source, REORDER.entry, "print") is None
    decorator = "@torch._dynamo.config.patch(reorderable_logging_functions={print})"
    patched = source.replace(f"\ndef {REORDER.entry}(", f"\n{decorator}\ndef {REORDER.entry}(", 1)
    assert untraced_problem(patched, REORDER.entry, "print") is None
    for not_added in ("torch._dynamo.config.reorderable_logging_functions.discard(print)\n",
                      "def unused():\n    torch._dynamo.config.reorderable_logging_functions.add(print)\n"):
        assert untraced_problem("import torch\n" + not_added + source, REORDER.entry, "print") is not None, not_added


def test_a_file_the_reading_cannot_follow_fails_closed_and_the_grader_lives_on():
    deep = "def f(x):\n    return (" * 1 + "(" * 400 + "x" + ")" * 401 + "\n"
    assert untraced_problem(deep, "f", "print") is not None
    chain = "def f(x):\n    return x" + ".a" * 900 + "\n"  # as long as Python parses: the reading loops, not recurses
    assert untraced_problem(chain, "f", "print") is None
    too_long = chain.replace(".a" * 900, ".a" * 50_000)  # Python cannot parse it
    assert untraced_problem(too_long, "f", "print") is not None
    assert untraced_problem("def f(x):\n    return x\0\n", "f", "print") is not None


REORDER = find_exercise("reorder-print")


@pytest.mark.parametrize("setting,turned_on", [
    ("torch._dynamo.config.capture_scalar_outputs = True", True),
    ("import torch._dynamo.config as cfg\ncfg.capture_scalar_outputs = True", True),
    ("@torch._dynamo.config.patch(capture_scalar_outputs=True)\ndef unused():\n    pass", True),
    ("@torch._dynamo.config.patch({'capture_scalar_outputs': True})\ndef unused():\n    pass", True),
    ("torch._dynamo.config.capture_scalar_outputs = False", False),
    ("torch._dynamo.config.capture_dynamic_output_shape_ops = True", False),
    # where it is not turned on whenever the file is imported, or is turned off again
    ("if False:\n    torch._dynamo.config.capture_scalar_outputs = True", False),
    ("if torch.__version__ == '0':\n    torch._dynamo.config.capture_scalar_outputs = True", False),
    ("torch._dynamo.config.capture_scalar_outputs = True\ntorch._dynamo.config.capture_scalar_outputs = False", False),
])
def test_a_config_construct_is_a_setting_turned_on_however_the_config_is_named(setting, turned_on):
    exercise = find_exercise("capture-item")
    contract = next(c for c in exercise.contracts if c.file_has.startswith("config "))
    source = exercise.exercise_path.read_text().replace("\nimport torch\n", f"\nimport torch\n{setting}\n", 1)
    assert setting in source
    assert (_check(exercise, contract, source).status == PASS) == turned_on


FUSED_NORM = find_exercise("fused-norm-allow-in-graph")
HELD = ("self.down = nn.Linear(hidden, dim)", "self.down = nn.Linear(hidden, dim)\n        self.fn = {0}")
# Ways to reach the vendored forward, and its import, that are not `RMSNormFunction.apply` spelled out.
APPLY_HIDDEN = {
    "the class held by the module": [HELD, ("RMSNormFunction.apply(x", "self.fn.apply(x")],
    "an alias of the class": [("class Block", "F = RMSNormFunction\n\n\nclass Block"),
                              ("RMSNormFunction.apply(x", "F.apply(x")],
    "an alias of apply": [("class Block", "norm = RMSNormFunction.apply\n\n\nclass Block"),
                          ("RMSNormFunction.apply(x", "norm(x")],
    "a subclass that keeps the forward": [("class Block", "class Sub(RMSNormFunction):\n    pass\n\n\nclass Block"),
                                          ("RMSNormFunction.apply(x", "Sub.apply(x")],
    "a hatch inside a function that may never run": [
        ("class Block", "def later():\n    torch.compiler.allow_in_graph(RMSNormFunction)\n\n\nclass Block")],
}


def _edited(source: str, edits, held: str = "RMSNormFunction") -> str:
    for old, new in edits:
        assert old in source
        source = source.replace(old, new.format(held), 1)
    return source


@pytest.mark.parametrize("how", APPLY_HIDDEN)
def test_the_vendored_import_is_found_however_the_function_is_reached(how):
    source = _edited(FUSED_NORM.exercise_path.read_text(), APPLY_HIDDEN[how])
    assert "an import statement" in untraced_problem(source, FUSED_NORM.entry, "import")


def test_a_hatch_keeps_the_import_out_but_not_an_effect():
    solution = FUSED_NORM.solution_path.read_text()
    held = _edited(solution, APPLY_HIDDEN["the class held by the module"])
    imported = solution.replace("torch.compiler.allow_in_graph(RMSNormFunction)",
                                "from torch.compiler import allow_in_graph\nallow_in_graph(RMSNormFunction)")
    subclass = (ROOT / "tests/alternatives/fused-norm-allow-in-graph__subclass_forward.py").read_text()
    held_subclass = _edited(subclass, [HELD, ("RMSNormWithoutKernel.apply(x", "self.fn.apply(x")],
                            "RMSNormWithoutKernel")
    for fix in (held, imported, held_subclass):
        assert untraced_problem(fix, FUSED_NORM.entry, "import") is None
    # A print under the same hatch would run only when the graph is made: the reading still counts it.
    saved = "ctx.save_for_backward(x, weight, rstd)"
    printing = solution.replace(saved, f"print(x.shape)\n        {saved}")
    assert "`print`" in untraced_problem(printing, FUSED_NORM.entry, "print|import")


@pytest.mark.parametrize("exercise,contract", KEPT_CONTRACTS,
                         ids=lambda item: getattr(item, "id", getattr(item, "name", "")))
def test_every_fix_keeps_using_what_the_task_keeps(exercise, contract):
    assert _check(exercise, contract, exercise.exercise_path.read_text()).status == PASS
    fixes = _fixes(exercise)
    assert len(_fixes(exercise, everywhere=True)) >= 3
    for path in fixes:
        assert _check(exercise, contract, path.read_text()).status == PASS, path.name


def test_a_hatch_or_a_vendored_function_nothing_reaches_does_not_count():
    """The hatch called in a function nothing calls or under a module-level `if`, and the vendored function left
    unused beside logic copied inline: the graph may be right, but the task is not done."""
    exercise = find_exercise("bisect-polyfill")
    hatch = next(c for c in exercise.contracts if c.file_has.startswith("hatch "))
    called = next(c for c in exercise.contracts if c.file_has.startswith("reaches "))
    solution = exercise.solution_path.read_text()
    decorator = "@torch.compiler.substitute_in_graph(bisect.bisect_left)\n"
    assert decorator in solution
    undecorated = solution.replace(decorator, "", 1)
    registration = "torch.compiler.substitute_in_graph(bisect.bisect_left)(_bisect_left)\n"
    assert _check(exercise, hatch, undecorated + registration).status == PASS  # at module level: it takes effect
    for dead in (undecorated + "\n\ndef never_called():\n    " + registration,
                 undecorated + "if False:\n    " + registration):
        assert "where it takes effect" in _check(exercise, hatch, dead).message
    unfixed = exercise.exercise_path.read_text()
    unused = unfixed.replace("padded = pad_to_bucket(tokens)", "padded = tokens", 1)
    assert unused != unfixed and "does not use `pad_to_bucket`" in _check(exercise, called, unused).message
    dead = unfixed.replace("padded = pad_to_bucket(tokens)", "padded = tokens\n    if tokens.shape[0] < 0:\n"
                           "        padded = pad_to_bucket(tokens)", 1)
    assert "does not use `pad_to_bucket`" in _check(exercise, called, dead).message  # a branch that may not run
    # a call Python never runs (after the return), or whose result nothing reads, is not a use
    unread = (unfixed.replace("padded = pad_to_bucket(tokens)", "padded = tokens\n    pad_to_bucket(tokens)", 1),
              unfixed.replace("padded = pad_to_bucket(tokens)", "padded = tokens\n    unread = pad_to_bucket(tokens)", 1))
    for source in unread:
        assert source != unfixed and "does not use `pad_to_bucket`" in _check(exercise, called, source).message
    entry = re.search(r"\n    return [^\n]*\n", unfixed[unfixed.index("padded = pad_to_bucket(tokens)"):]).group(0)
    after_return = unfixed.replace("padded = pad_to_bucket(tokens)", "padded = tokens", 1).replace(
        entry, entry + "    pad_to_bucket(tokens)\n", 1)
    assert "does not use `pad_to_bucket`" in _check(exercise, called, after_return).message


def test_a_dataclass_nothing_builds_keeps_no_boxes():
    exercise = find_exercise("module-level-dataclass")
    built = next(c for c in exercise.contracts if c.file_has == "reaches Boxes")
    solution = exercise.solution_path.read_text()
    assert _check(exercise, built, solution).status == PASS
    kept = "\n".join(line for line in solution.splitlines() if "Boxes(" not in line or "class " in line)
    assert "does not use `Boxes`" in _check(exercise, built, kept).message


# How the kept call's result reaches (or does not reach) what the function returns: a flow the reading must follow,
# and a use that hands nothing on.
HANDED_ON = {
    "through a tuple, a loop and a list": "    parts = []\n    for b in (BOXES,):\n        parts.append(b.area())\n"
                                          "    total, = (sum(parts),)\n    return loss + 0.0 * total\n",
    "through a walrus and an attribute read later": "    holder.last = (b := BOXES)\n    return loss + holder.last.area().sum()\n",
    "into a tensor written in place": "    out = torch.zeros(())\n    out.add_(BOXES.area().sum())\n    return loss + out\n",
}
NOT_HANDED_ON = {
    "only asserted": "    assert isinstance(BOXES, Boxes)\n    return loss\n",
    "only printed": "    print(BOXES)\n    return loss\n",
    "only branched on": "    if BOXES.area().sum() > 1e9:\n        loss = loss + 1\n    return loss\n",
    "bound over and over, read by nothing returned": "    seen = BOXES\n    seen = seen.area()\n    return loss\n",
}


@pytest.mark.parametrize("how", [*HANDED_ON, *NOT_HANDED_ON])
def test_a_kept_call_counts_where_its_result_reaches_the_return(how):
    """`Boxes(...)` built from the inputs on every call (written BOXES above): it counts where what it makes
    flows, through any bindings, to the returned value or to state read later; not where it goes nowhere."""
    exercise = find_exercise("module-level-dataclass")
    built = next(c for c in exercise.contracts if c.file_has == "reaches Boxes")
    solution = exercise.solution_path.read_text()
    tail = solution[solution.index("    predicted = Boxes("):]
    body = "    loss = F.l1_loss(pred, target)\n" + (HANDED_ON | NOT_HANDED_ON)[how].replace(
        "BOXES", "Boxes(pred[:, :2], pred[:, 2:].exp())")
    source = solution.replace(tail, body) + "\n\nclass _Holder:\n    last = None\n\n\nholder = _Holder()\n"
    result = _check(exercise, built, source)
    if how in HANDED_ON:
        assert result.status == PASS, result.message
    else:
        assert "does not use `Boxes`" in result.message


def test_a_kept_call_counts_where_it_is_given_the_inputs():
    """`np.interp` on constants, beside a curve computed otherwise, applies no curve to the confidences."""
    exercise = find_exercise("numpy-custom-op")
    kept = next(c for c in exercise.contracts if c.file_has == "reaches numpy.interp")
    solution = exercise.solution_path.read_text()
    call = "np.interp(confidence.numpy(), RAW, CALIBRATED)"
    assert call in solution and _check(exercise, kept, solution).status == PASS
    constant = solution.replace(call, f"np.interp(0.5, RAW, CALIBRATED) * 0 + {call.replace('np.interp', 'fake')}")
    assert "does not use `numpy.interp`" in _check(exercise, kept, constant).message
    through_a_local = solution.replace(call, "np.interp(values, RAW, CALIBRATED)").replace(
        "    return torch.from_numpy", "    values = confidence.numpy()\n    return torch.from_numpy")
    assert _check(exercise, kept, through_a_local).status == PASS


GUARD = "if not torch.compiler.is_compiling():"
# The solution's guard kept, with what makes the definition the reading follows not the code that runs.
NOT_WHAT_RUNS = {
    "the entry bound again": ("", "\n\ncausal_attention = print\n"),
    "the entry defined again in a branch": ("", "\n\nif True:\n    def causal_attention(q, k, v):\n        print(q)\n"
                                                "        return q\n"),
    "a decorator the reading cannot follow": ("@(lambda f: f)\n", ""),
}


@pytest.mark.parametrize("how", NOT_WHAT_RUNS)
def test_a_definition_that_may_not_be_what_runs_fails_closed(how):
    decorator, after = NOT_WHAT_RUNS[how]
    solution = EAGER_ONLY_PRINT.solution_path.read_text()
    assert untraced_problem(solution, "causal_attention", "print") is None
    source = solution.replace("\ndef causal_attention(", f"\n{decorator}def causal_attention(", 1) + after
    assert "cannot" in untraced_problem(source, "causal_attention", "print"), how


@pytest.mark.parametrize("guard", [
    "compiling = torch.compiler.is_compiling()\n    compiling = False\n    if not compiling:",  # bound again
    "torch = None\n    if not torch.compiler.is_compiling():",  # a local `torch`: not the module's test
])
def test_a_guard_that_may_not_test_compiling_is_no_guard(guard):
    solution = EAGER_ONLY_PRINT.solution_path.read_text()
    assert GUARD in solution
    problem = untraced_problem(solution.replace(GUARD, guard, 1), "causal_attention", "print")
    assert problem is not None and "`print`" in problem


RUN_CONTRACTS = [(exercise, contract) for exercise in load_exercises() for contract in exercise.contracts
                 if contract.file_has.startswith("runs ") and " from " not in contract.file_has]  # effects kept


def _without_calls_of(source: str, names: list[str]) -> str:
    """The source with every statement that is a call of one of `names` (as written) turned into `pass`."""
    import ast

    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and ast.unparse(node.value.func) in names:
            indent = lines[node.lineno - 1][:node.col_offset]
            lines[node.lineno - 1] = indent + "pass"
            for number in range(node.lineno, node.end_lineno):
                lines[number] = ""
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("exercise,contract", RUN_CONTRACTS,
                         ids=lambda item: getattr(item, "id", getattr(item, "name", "")))
def test_the_effect_a_task_keeps_is_read_from_the_text_and_follows_its_deletion(exercise, contract):
    """The print, log or warning a task keeps: every fix still calls it where the file runs it (the grader's
    reading, beside what the checked process observes), and deleting that call fails the construct."""
    for path in [exercise.exercise_path, *_fixes(exercise)]:
        assert _check(exercise, contract, path.read_text()).status == PASS, path.name
    solution = exercise.solution_path.read_text()
    deleted = _without_calls_of(solution, contract.file_has.split()[1].split("|"))
    assert deleted != solution
    check = _check(exercise, contract, deleted)
    assert check.status == FAIL and "no longer calls" in check.message


def test_the_timing_helper_must_time():
    """A `time_layer` that returns a constant passes the interface contract (a positive float); the grader's
    reading asks for a clock or a timer in it, which every fix has."""
    exercise = find_exercise("time-from-outside")
    times = next(c for c in exercise.contracts if c.name == "timing-helper-times")
    for path in [exercise.solution_path, *_fixes(exercise)]:
        assert _check(exercise, times, path.read_text()).status == PASS, path.name
    solution = exercise.solution_path.read_text()
    start = solution.index("def time_layer(")
    end = solution.index("\n\n\n", start)
    constant = solution[:start] + ("def time_layer(layer, x, calls=10):\n    layer(x)\n    TIMINGS['layer'] = 0.001\n"
                                   "    return TIMINGS['layer']") + solution[end:]
    check = _check(exercise, times, constant)
    assert check.status == FAIL and "calls none of" in check.message
