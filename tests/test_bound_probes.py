"""The probes past a file's bounds (checker/grading/bound_probes.py, draws.probe_draws): which integers the text
reading finds, which dtype probe a file gets, and the draws made past them. The checks themselves run on real files
in tests/wrong/ (each `(contract past-the-bounds)`) and tests/alternatives/ (a correct fix with a bound passes)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from checker.course import draws
from checker.course.manifest import find_exercise, load_exercises
from checker.grading.bound_probes import bounds_in, dtype_probe, probes_for
from checker.grading.trial import read_source

EXERCISES = load_exercises()


def _bounds(code: str) -> tuple[int, ...]:
    return bounds_in(textwrap.dedent(code))


@pytest.mark.parametrize("code, bound", [
    ("def f(x):\n    if x.shape[1] > 4096:\n        print(x)\n", 4096),
    ("LIMIT = 1 << 12\ndef f(x):\n    if x.shape[0] >= LIMIT:\n        x = x.half()\n", 4096),
    ("class M:\n    def __init__(self):\n        self.long = 64 * 64\n    def f(self, x):\n"
     "        return x if len(x) < self.long else x.half()\n", 4096),
    ("def f(x, longest=4096):\n    while x.size(0) > longest:\n        x = x[1:]\n    return x\n", 4096),
    ("def f(x):\n    return x[:64].mean()\n", 64),
    ("def f(x):\n    return x.narrow(0, 0, min(x.shape[0], 2048))\n", 2048),
    ("def f(x):\n    match x.shape[0]:\n        case 1000:\n            return x\n    return -x\n", 1000),
    ("BUCKETS = (8, 512)\ndef f(x):\n    return bisect.bisect(BUCKETS, x.shape[0])\n", 512),
    ("def f(x):\n    big = x.numel() > (2 ** 10 if True else 0)\n    return big\n", 1024),
])
def test_a_bound_the_text_tests_is_found(code, bound):
    assert bound in _bounds(code)


@pytest.mark.parametrize("code", [
    "import torch\nLAYER = torch.nn.Linear(16, 4096)\ndef f(x):\n    return LAYER(x).mean(dim=-1) > 0\n",
    "def f(x, steps=4096):\n    for _ in range(steps):\n        x = x * 0.5\n    return x\n",
    "def f(x):\n    return x.reshape(4096, -1)\n",
])
def test_an_integer_no_test_reads_is_not_a_bound(code):
    assert 4096 not in _bounds(code)


def test_a_file_python_cannot_parse_has_no_bounds():
    assert bounds_in("def f(:\n") == () and bounds_in(None) == ()


@pytest.mark.parametrize("code, wanted", [
    ("def f(x):\n    if x.dtype == torch.float64:\n        return x.tolist()\n    return x\n", "all"),
    ("def f(x):\n    return x if x.is_floating_point() and x.element_size() > 4 else -x\n", "all"),
    ("def f(x):\n    kind = x.dtype\n    if kind is torch.float64:\n        return x.tolist()\n    return x\n", "all"),
    ("def f(x):\n    return x.float() * 2\n", "eager"),
    ("def f(x):\n    return x.to(torch.bfloat16)\n", "eager"),
    ("def f(x):\n    return (x > 0).sum()\n", "eager"),
    ("def f(:\n", "all"),  # unreadable: probed in every mode (the check fails on its import anyway)
])
def test_the_dtype_probe_follows_what_the_text_does_with_dtypes(code, wanted):
    assert dtype_probe(code) == wanted


def test_probes_grow_each_size_past_the_bounds_and_stay_small():
    exercise = find_exercise("cat-bug", EXERCISES)  # two cases of (2, 5, 8)
    made = draws.probe_draws(exercise, 7, (3, 4096, 1 << 17))
    shapes = sorted({tuple(probe.args[0].shape) for probe in made})
    # one past the smallest bound above every drawn size (4096) and one past the largest (131072), while a tensor
    # holds at most PROBE_ELEMENTS_AT_MOST elements: 2 * 5 * 131073 is more, so each size grows to 4097 alone
    assert shapes == [(2, 5, 4097), (2, 4097, 8), (4097, 5, 8)]
    assert len(made) == 6 and {probe.case for probe in made} == {0, 1}
    assert all(probe.args[0].numel() <= draws.PROBE_ELEMENTS_AT_MOST and not probe.eager_only for probe in made)
    assert [tuple(p.args[0].shape) for p in made] == [tuple(p.args[0].shape) for p in draws.probe_draws(
        exercise, 7, (3, 4096, 1 << 17))]  # the same for the same seed: a report's --seed repeats them


def test_a_dtype_probe_casts_the_random_floating_inputs_alone():
    exercise = find_exercise("tolist-weights", EXERCISES)
    made = draws.probe_draws(exercise, 3, (), "eager")
    assert made and all(probe.eager_only for probe in made)
    assert all(arg.dtype == torch.float64 for probe in made for arg in probe.args if isinstance(arg, torch.Tensor))
    assert draws.probe_draws(exercise, 3, (), "") == []


def test_the_course_files_get_probes_only_where_they_test_a_size_or_a_dtype():
    """No solution of the course tests a size past its examples', and few name a dtype: a probe costs a compilation
    in each mode, so the checks of the course's own fixes stay as fast as they were."""
    probed = {exercise.id for exercise in EXERCISES
              if any(not p.eager_only for p in probes_for(exercise, 1, read_source(exercise.solution_path)))}
    assert probed == set()


def _size_tests(code: str, *args: torch.Tensor) -> list[dict[tuple[int, int], int]]:
    """The growths the guards of `code`'s function `f`, compiled as the fullgraph trial compiles it, ask for."""
    from checker.dynamo import engine
    from checker.grading.guard_bounds import growths

    namespace: dict = {"torch": torch}
    exec(textwrap.dedent(code), namespace)  # noqa: S102 - the test's own function
    diagnosis = engine.diagnose(namespace["f"], [(args, {})], "default", dynamic=True)
    return [growth for _, growth in growths(namespace["f"], diagnosis.shape_envs)]


@pytest.mark.parametrize("test, size", [
    ("x.shape[0] > 4096.0", 4097),  # a float bound: no integer in the text
    ("x.shape[0] > int('4096')", 4097),  # computed while the file runs
    ("x.shape[0] - 1 > 4095", 4097),  # folded into arithmetic
    ("x.numel() > 70000", 70000 // 8 + 1),  # a bound on a product of sizes: rows past 8750, at 8 columns
    ("x.shape[0] == 4097", 4097),  # an equality's one point
])
def test_a_guard_shows_where_a_size_changes_the_path(test, size):
    code = f"def f(x):\n    if {test}:\n        return x * 2\n    return x + 1\n"
    assert {(0, 0): size} in _size_tests(code, torch.randn(6, 8))


def test_a_nearer_test_hides_a_farther_one_until_traced_past_it():
    """Once `n > 64` is a guard, Dynamo decides `n > 4096` without one: only a trace past 64 shows it, which is why
    the trial traces again at each growth (guard_bounds.deeper; the check of it: tests/wrong/cat-bug__*nearer*)."""
    code = ("def f(x):\n    if x.shape[0] > 64:\n        x = x.contiguous()\n"
            "    if x.shape[0] > 4096.0:\n        return x * 2\n    return x + 1\n")
    assert _size_tests(code, torch.randn(6, 8)) == [{(0, 0): 65}]
    assert {(0, 0): 4097} in _size_tests(code, torch.randn(65, 8))


def test_a_size_pinned_by_python_is_probed_near_and_far():
    code = "def f(x):\n    if x.shape[0].bit_length() > 12:\n        return x * 2\n    return x + 1\n"
    found = _size_tests(code, torch.randn(6, 8))
    assert {(0, 0): 7} in found and {(0, 0): 1 << 14} in found


def test_a_size_an_operation_fixes_asks_for_no_probe():
    """A matmul's inner size is a guard of the operation's own shape rule: at another size the reference raises
    too, so no probe is drawn for it; nor for a function that tests no size."""
    code = "W = torch.randn(8, 3)\ndef f(x):\n    return (x @ W).relu()\n"
    assert _size_tests(code, torch.randn(6, 8)) == []


def test_the_grader_rebuilds_only_growths_of_tensors_it_can_draw():
    exercise = find_exercise("while-loop-nms", EXERCISES)  # literal boxes, random scores
    made = draws.guarded_draws(exercise, 5, [[0, [[0, 0, 1001], [1, 0, 1001]]],  # both grown: boxes tiled
                                             [0, [[0, 1, 1 << 30]]],  # too many elements
                                             [9, [[0, 0, 7]]], [0, [[5, 0, 7]]], [0, [[0, 0, True]]],  # no such
                                             "garbage", [0, "garbage"], [0, [[0, 0, 1001], [1, 0, 1001]]]])  # again
    assert [tuple(tuple(arg.shape) for arg in draw.args[:2]) for draw in made] == [((1001, 4), (1001,))]
    boxes = made[0].args[0]
    assert torch.equal(boxes[6:12], boxes[:6])  # the literal's rows again
