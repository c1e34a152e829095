"""Submissions written to defeat the checker, not to fix anything: each ends in fail or error, and says why.

Each file in tests/hostile/ is a real submission. The first kinds make the checked process's own report
look right (fixed inputs reproduced, the recorder blinded from inside); the last kinds write that report
themselves (forged result frames, with or without a graph). The grader's fresh draws, its replay of the
recorded graphs and the tamper check's coverage of code objects and checker globals answer them.
"""

import inspect
from pathlib import Path

import pytest

from checker.course.manifest import find_exercise, load_exercises
from checker.grading.report import ERROR, FAIL, PASS
from checker.grading.sandbox import Limits
from checker.grading.strict import check_file

HOSTILE = Path(__file__).parent / "hostile"
LIMITS = Limits(timeout=30, memory_mb=2048)


def grade(name, exercise_id):
    report = check_file(find_exercise(exercise_id), HOSTILE / name, LIMITS)
    return report, {check.name: check for check in report.checks}


def test_branch_chosen_by_call_count_fails():
    report, checks = grade("call_count.py", "cond-on-input")
    assert report.status == FAIL, report.to_dict()
    # The modes' own orders make the count miss the branch most of the time; the replay, every time.
    assert checks["replay-matches"].status == FAIL
    assert "computes something else than the reference" in checks["replay-matches"].message


def test_outputs_hard_coded_to_the_examples_fail():
    report, checks = grade("hard_coded_outputs.py", "cond-on-input")
    assert report.status == FAIL, report.to_dict()
    assert checks["eager-matches"].status == FAIL
    assert "a fresh draw of input" in checks["eager-matches"].message
    assert checks["replay-matches"].status == FAIL


def test_recorder_blinded_through_module_state_fails():
    report, checks = grade("blind_module_state.py", "capture-item")
    assert report.status == FAIL, report.to_dict()
    assert "checker.dynamo.engine._active" in checks["nothing-switched-off"].message
    assert "split into several graphs" in checks["replay-matches"].message


@pytest.mark.parametrize("name", ["swap_code_checker.py", "swap_code_dynamo.py"])
def test_code_swapped_in_place_is_refused_at_run_time(name):
    from torch._dynamo import symbolic_convert

    if name == "swap_code_dynamo.py" and not hasattr(symbolic_convert.InstructionTranslatorBase, "log_graph_break"):
        pytest.skip("torch 2.8/2.9 report breaks through a module function: the file finds no method to swap")
    report, checks = grade(name, "capture-item")
    assert report.status == FAIL, report.to_dict()
    assert "at run time, a function's `__code__` replaced" in checks["no-grader-access"].message


@pytest.mark.parametrize("name, swapped", [
    ("swap_code_checker.py", "checker.dynamo.engine.Recording.on_graph_break"),
    ("swap_code_dynamo.py", "InstructionTranslatorBase.log_graph_break"),
])
def test_code_swapped_in_place_fails_the_tamper_check(name, swapped, without_code_guard):
    from torch._dynamo import symbolic_convert

    report, checks = grade(name, "capture-item")
    method = getattr(symbolic_convert.InstructionTranslatorBase, "log_graph_break", None)
    if method is None and swapped.startswith("InstructionTranslatorBase"):  # torch 2.8/2.9 have no such method
        assert report.status in (FAIL, ERROR), report.to_dict()
        return
    assert report.status == FAIL, report.to_dict()
    assert swapped in checks["nothing-switched-off"].message
    # The stand-ins have torch 2.11's signatures; on 2.10 the swapped method fails outright, and the
    # replay has no graphs to judge.
    if method is not None and "exc" in inspect.signature(method).parameters:
        assert "split into several graphs" in checks["replay-matches"].message
    else:
        assert checks["replay-matches"].status != "pass"


@pytest.mark.parametrize("name, exercise_id", [
    ("forged_frames_cond.py", "cond-on-input"),
    ("forged_frames_print.py", "reorder-print"),
])
def test_forged_result_frames_fail(name, exercise_id, without_code_guard):
    report, checks = grade(name, exercise_id)
    assert report.status in (FAIL, ERROR), report.to_dict()
    assert checks["replay-matches"].status == FAIL
    assert "no record of the graphs" in checks["replay-matches"].message


def test_forged_graph_right_on_the_examples_only_fails(without_code_guard):
    report, checks = grade("forged_graph.py", "cond-on-input")
    assert report.status in (FAIL, ERROR), report.to_dict()
    assert checks["replay-matches"].status == FAIL
    assert "computes something else than the reference" in checks["replay-matches"].message


def test_same_seed_draws_the_same_inputs_and_verdict():
    from checker.course.draws import Seed

    exercise = find_exercise("cond-on-input")
    first = check_file(exercise, HOSTILE / "hard_coded_outputs.py", LIMITS)
    again = check_file(exercise, HOSTILE / "hard_coded_outputs.py", LIMITS, seed=Seed.parse(first.seed))
    assert again.seed == first.seed
    assert [c.to_dict() for c in again.checks] == [c.to_dict() for c in first.checks]
    other = check_file(exercise, HOSTILE / "hard_coded_outputs.py", LIMITS, seed=Seed(1, 2))
    assert other.seed == "1-2"


def test_each_mode_calls_the_draws_in_an_order_of_its_own_with_repeats():
    from checker.course import draws

    exercise = find_exercise("cond-on-input")
    fresh = draws.draws(exercise, 7)
    assert [d.case for d in fresh] == [0, 1]
    assert draws.draws(exercise, 7)[0].args[0].equal(fresh[0].args[0])  # a seed reproduces its draws
    assert not draws.draws(exercise, 8)[0].args[0].equal(fresh[0].args[0])
    orders = [draws.call_order(len(fresh), seed, mode) for seed in range(5) for mode in ("eager", "default")]
    assert all(sorted(set(order)) == list(range(len(fresh))) and len(order) == len(fresh) + 1 for order in orders)
    assert len({tuple(order) for order in orders}) > 1


def test_the_replay_draws_past_the_trial_with_the_same_signatures():
    """A replay generator (nested-rotary-table's positions) draws values no trial draw reaches, in calls that the
    trial's graphs cover: the same shapes and dtypes, on every exercise."""
    from checker.course import draws

    for exercise in load_exercises():
        trial, replayed = draws.draws(exercise, 5), draws.draws(exercise, 5, replay=True)
        assert [draws.signature(d) for d in trial] == [draws.signature(d) for d in replayed], exercise.id
    rotary = find_exercise("nested-rotary-table")
    assert max(int(d.args[1].max()) for d in draws.draws(rotary, 5, 4)) < 64
    assert min(int(d.args[1].max()) for d in draws.draws(rotary, 5, 4, replay=True)) > 1 << 20


def test_what_an_example_fixes_for_the_caller_is_drawn_once_per_check_for_trial_and_replay_alike():
    """A domain value (a head width, a caller's threshold) is one per check: every call of the trial and of the
    replay has it, so the trial's graphs serve the replay; other checks draw others, none the examples' own."""
    from checker.course import draws

    exercise = find_exercise("nonstrict-vendored")
    widths = set()
    for seed in range(12):
        trial = draws.draws(exercise, seed)
        replayed = draws.draws(exercise, seed + 1000, 3, replay=True, domain_seed=seed)
        assert [draws.signature(d) for d in trial] == [draws.signature(d) for d in replayed[::3]]
        chosen = draws.domain_values(exercise, seed)
        assert [d.args[0].shape[-1] for d in trial] == [chosen["width"], chosen["wide"]]
        widths.add((chosen["width"], chosen["wide"]))
    assert len(widths) > 1 and not any(4 in pair for pair in widths)
    stack = find_exercise("stack-frames")
    assert len({d.args[1] for d in draws.draws(stack, 3)}) == 1  # one context per check: no call compiles again


@pytest.mark.parametrize("domain, draw, problem", [
    ("{ width = [6, 8] }", '{ randn = [2, "height"] }', "not all in its domain"),
    ('{ width = ["six"] }', '{ randn = [2, "width"] }', "list of numbers"),
    ("{ width = [6, 8] }", '{ domain = "width", seed = 3 }', "stands alone"),
])
def test_a_draw_names_only_values_of_its_exercise_domain(tmp_path, domain, draw, problem):
    import dataclasses

    from checker.course.manifest import ManifestError
    from checker.course.resolver import find_course

    (tmp_path / "exercises.toml").write_text(f"""
[[exercise]]
id = "x"
title = "x"
file = "01_cat_bug.py"
entry = "f"
chapter = "recompilations"
category = "recompilations"
points = 1
hints = ["a hint"]
max_compilations = 2
domain = {domain}
inputs = [{{ args = [{{ randn = [2, 4] }}], draw = {{ args = [{draw}] }} }}]
""", encoding="utf-8")
    course = dataclasses.replace(find_course(), manifest_path=tmp_path / "exercises.toml")
    with pytest.raises(ManifestError, match=problem):
        load_exercises(course)


def test_a_graph_fullgraph_quietly_captures_is_refused_where_default_mode_breaks():
    """The unfixed mask-where under fullgraph=True: one graph, right values, but a boolean mask inside."""
    import torch

    from checker.dynamo import torch_support

    if not torch_support.fullgraph_captures().dynamic_shapes:
        pytest.skip("this torch's fullgraph=True breaks on a boolean mask too: there is no such graph")

    from checker.course import draws
    from checker.grading import audit, replay
    from checker.grading.trial import import_file, run_trial

    exercise = find_exercise("mask-where")
    unfixed = getattr(import_file(str(exercise.exercise_path), prefix="test_unfixed_"), exercise.entry)
    captured = []
    compiled = torch.compile(unfixed, fullgraph=True,
                             backend=lambda gm, inputs: captured.append((gm, inputs)) or gm.forward)
    trial_draws, replay_draws = draws.draws(exercise, 3), draws.draws(exercise, 4)
    order = list(range(len(trial_draws)))
    calls = []
    for draw in trial_draws:
        result = compiled(*draw.args)
        calls.append({"graphs": [0], "returned": 0})
        assert result is not None
    torch._dynamo.reset()
    trial = {"stage": "done", "graphs": [replay.graph_record(*captured[0])], "parameters": ["pred", "target"],
             "diagnosis": {"calls": calls}}
    expected = run_trial(exercise, str(exercise.solution_path), "eager",
                         calls=[(d.args, d.kwargs) for d in replay_draws], watch=False)["outputs"]
    verdict = audit.judge(exercise, trial, order, trial_draws, replay_draws, expected)
    assert verdict["status"] == FAIL
    assert "output shape depends on the data" in verdict["message"]


def test_one_graph_claimed_for_every_length_fails(without_code_guard):
    """Frames that report one compilation, around the real graph of one length, for a recompilation exercise."""
    report, checks = grade("forged_single_graph.py", "stack-frames")
    assert report.status in (FAIL, ERROR), report.to_dict()
    assert checks["no-recompilation"].status == PASS  # the frames say one graph, and are believed there
    assert checks["replay-matches"].status == FAIL
    assert "replayed by the grader" in checks["replay-matches"].message


def test_loop_body_replayed_on_fresh_draws_catches_fixed_rounds():
    """The replay rebuilds torch.while_loop with its condition and body graphs, and runs them on fresh draws."""
    report, checks = grade("while_loop_fixed_rounds.py", "while-loop-nms")
    assert report.status == FAIL, report.to_dict()
    assert checks["eager-matches"].status == "pass"
    assert checks["replay-matches"].status == FAIL
    assert "computes something else than the reference" in checks["replay-matches"].message


@pytest.mark.parametrize("name, exercise_id", [
    ("namespace_by_getstate.py", "capture-item"),
    ("namespace_by_descriptor.py", "check-box-count"),
])
def test_a_module_namespace_read_without_naming_it_fails_the_gate(name, exercise_id):
    """`object.__getstate__(torch)` and a cached_property's `__get__` read a module's namespace as `vars` would:
    from there to `sys.modules` and the checker's trial code. The gate refuses both from the file's text."""
    report, checks = grade(name, exercise_id)
    assert report.status == FAIL, report.to_dict()
    assert checks["no-grader-access"].status == FAIL
    assert "__getstate__" in checks["no-grader-access"].message or "__get__" in checks["no-grader-access"].message
