"""The course's invariant: every unfixed exercise fails with its expected break, every solution passes."""

import pytest

from checker.course.manifest import load_exercises
from checker.dynamo import torch_support
from checker.grading.plain import output_difference
from checker.grading.report import ERROR, FAIL, PASS
from checker.grading.strict import check_file

EXERCISES = load_exercises()


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_solution_passes(exercise):
    if exercise.skip:  # declared in the manifest for this torch
        pytest.skip(exercise.skip)
    report = check_file(exercise, exercise.solution_path)
    assert report.status == PASS, report.to_dict()
    assert report.points == exercise.points
    # A fix that calls the file's own operator cannot be replayed by the grader: the report says so.
    skipped = {"replay-matches"} if exercise.opaque_calls else set()
    assert all(check.status == PASS for check in report.checks if check.name not in skipped), report.to_dict()
    assert report.seed


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_unfixed_exercise_shows_its_expected_break(exercise):
    if exercise.skip:  # declared in the manifest for this torch
        pytest.skip(exercise.skip)
    report = check_file(exercise, exercise.exercise_path)
    assert report.points == 0
    gb_ids = {gb["gb_id"] or gb["gb_type"] for gb in report.graph_breaks}  # as `gbcheck verify` shows them
    checks = {check.name: check for check in report.checks}
    if not exercise.expected_break:  # an exercise about recompilation: nothing breaks, it compiles too often
        assert report.status == FAIL and not gb_ids, report.to_dict()
        assert checks["no-graph-breaks"].status == PASS and checks["compiled-matches"].status == PASS
        assert checks["no-recompilation"].status == FAIL
        assert f"allows {exercise.max_compilations}" in checks["no-recompilation"].message
        assert checks["replay-matches"].status == FAIL  # the grader counts the graphs it replays too
    elif exercise.fails_eagerly:
        assert exercise.expected_break in gb_ids, report.to_dict()
        assert report.status == ERROR
        assert checks["eager-runs"].status == ERROR
        assert "fails without torch.compile too" in checks["eager-runs"].message
    else:
        assert exercise.expected_break in gb_ids, report.to_dict()
        assert report.status == FAIL
        assert checks["eager-runs"].status == PASS
        assert checks["eager-matches"].status == PASS  # the unfixed code is right, just not compilable
        assert checks["no-graph-breaks"].status == FAIL
        assert exercise.expected_break in checks["no-graph-breaks"].message
    assert report.hint == exercise.hints[0]
    assert report.chapter == exercise.chapter
    # The shipped file reaches into nothing: what Dynamo does on its behalf (resuming after a break) is not
    # taken for the file's doing by the checked process's hook (code_guard.py).
    assert "no-grader-access" not in checks, checks["no-grader-access"].message


@pytest.mark.parametrize("exercise", [ex for ex in EXERCISES if not ex.fails_eagerly], ids=lambda ex: ex.id)
def test_original_and_solution_agree_eagerly(exercise):
    """The reference is the solution; it must compute what the original computes, on every input."""
    if exercise.skip:
        pytest.skip(exercise.skip)
    from checker.grading.sandbox import Limits, run_job
    from checker.grading.strict import reference_outcome
    from checker.grading.trial import run_trial

    original = run_job(lambda: run_trial(exercise, str(exercise.exercise_path), "eager"))
    reference = reference_outcome(exercise, Limits())
    assert original.payload["stage"] == "done" and original.payload["diagnosis"]["error"] is None
    assert len(original.payload["outputs"]) == len(exercise.inputs)
    for got, want in zip(original.payload["outputs"], reference.payload["outputs"]):
        assert output_difference(got, want, exercise.rtol, exercise.atol) is None


def test_every_technique_of_the_source_page_has_an_exercise():
    categories = {ex.category for ex in EXERCISES}
    assert {"incorrect-code", "data-dependent", "printing-logging"} <= categories
    assert len(EXERCISES) >= 9
    allowed = {key for ex in EXERCISES for key in ex.allowed_config}
    ignore_logging = torch_support.config_name("ignore_logging_functions", "ignore_logger_methods")  # before 2.11
    assert {"capture_scalar_outputs", "reorderable_logging_functions", ignore_logging} <= allowed


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_exercise_file_is_a_learner_task(exercise):
    """Like a rustlings exercise: a TODO where the learner acts, progressive hints, a solution twin."""
    text = exercise.exercise_path.read_text()
    assert "TODO" in text
    assert exercise.solution_path.exists()
    assert "TODO" not in exercise.solution_path.read_text()
    assert len(exercise.hints) >= 2 and all(hint.strip() for hint in exercise.hints)
    assert f"gbcheck check {exercise.id}" in text


@pytest.mark.parametrize("exercise", load_exercises(apply_variants=False), ids=lambda ex: ex.id)
def test_hints_escalate_to_the_chapter(exercise):
    """The first hints make the learner think; the last one, on every release, sends to the chapter."""
    for hints in [exercise.hints, *(variant.hints for variant in exercise.variants if variant.hints)]:
        assert "chapter" in hints[-1].lower(), f"{exercise.id}: the last hint does not name the chapter"


def test_output_difference_handles_nested_outputs():
    import torch

    from checker.grading.plain import plain

    value = (torch.ones(2), {"loss": torch.zeros(())}, 3)
    assert output_difference(plain(value), plain(value), 1e-6, 1e-6) is None
    changed = (torch.ones(2), {"loss": torch.ones(())}, 3)
    assert "not close" in output_difference(plain(changed), plain(value), 1e-6, 1e-6)
    assert output_difference(plain((1, 2)), plain([1, 2]), 0, 0) is not None  # tuple is not list


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_fresh_draws_take_the_branches_of_their_examples(exercise):
    from checker.grading.coverage import draw_problems

    assert draw_problems(exercise) == []


def test_a_generator_that_strays_from_its_branch_fails_the_course():
    from dataclasses import replace

    from checker.grading.coverage import draw_problems

    exercise = next(ex for ex in EXERCISES if ex.id == "cond-on-input")
    tanh_case = exercise.inputs[1]
    relu_weight = {"randn": [8, 8], "scale": 0.1, "shift": 0.2}  # the relu case's weight, drawn for the tanh case
    strayed = replace(exercise, inputs=(exercise.inputs[0], replace(tanh_case, draw_args=({}, relu_weight))))
    problems = draw_problems(strayed)
    assert problems and "input 2" in problems[0] and "misses lines" in problems[0]


@pytest.mark.parametrize("fields, problem", [
    ("", "needs expected_break"),
    ("max_compilations = -1", "whole number of graphs"),
    ("max_compilations = true", "whole number of graphs"),
    ('max_compilations = "2"', "whole number of graphs"),
])
def test_an_exercise_declares_a_break_or_a_compilation_limit(tmp_path, fields, problem):
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
inputs = [{{ args = [1] }}]
{fields}
""", encoding="utf-8")
    course = dataclasses.replace(find_course(), manifest_path=tmp_path / "exercises.toml")
    with pytest.raises(ManifestError, match=problem):
        load_exercises(course)


@pytest.mark.parametrize("formerly", ['["../01_cat_bug.py"]', '["notes.txt"]', '"19_running_mean_norm.py"'])
def test_a_former_file_name_is_a_plain_name_in_the_exercises_folder(tmp_path, formerly):
    """A workspace's old-named file is renamed on use: a former name must not reach outside its folder."""
    import dataclasses

    from checker.course.manifest import ManifestError
    from checker.course.resolver import find_course

    (tmp_path / "exercises.toml").write_text(f"""
[[exercise]]
id = "x"
title = "x"
file = "01_cat_bug.py"
formerly = {formerly}
entry = "f"
chapter = "recompilations"
category = "recompilations"
points = 1
hints = ["a hint"]
inputs = [{{ args = [1] }}]
max_compilations = 2
""", encoding="utf-8")
    course = dataclasses.replace(find_course(), manifest_path=tmp_path / "exercises.toml")
    with pytest.raises(ManifestError, match="formerly must list plain file names"):
        load_exercises(course)

def test_the_replay_rebuilds_a_graph_that_passes_a_list():
    """fx hands `torch.cat([a, b])` its list as an immutable_list: the grader's record must keep it a list."""
    import torch

    from checker.grading import replay

    gm = torch.fx.symbolic_trace(lambda a, b: torch.cat([a, b * 2], dim=-1))
    a, b = torch.ones(2), torch.arange(2.0)
    rebuilt, inputs, _ = replay.rebuild(replay.graph_record(gm, (a, b)))
    assert torch.equal(rebuilt(*replay.graph_inputs(inputs, [], (), {})), torch.cat([a, b * 2], dim=-1))



def test_recompiling_on_inputs_of_one_shape_reads_alike_whatever_the_call_order():
    """streaming-accuracy's inputs share one shape and its unfixed file compiles on every call: which call met
    which graph is the call order's, drawn anew each check, and the report (the book stores it) must not say so."""
    from checker.course import draws

    exercise = next(ex for ex in EXERCISES if ex.id == "streaming-accuracy")
    seeds = [draws.Seed(1, 1), draws.Seed(5, 5)]
    orders = [sorted(draws.call_order(len(exercise.inputs), seed.trial, "default")) for seed in seeds]
    assert orders[0] != orders[1], orders  # each seed calls another input twice
    messages = {check.message for seed in seeds for check in check_file(exercise, exercise.exercise_path, seed=seed).checks
                if check.name == "no-recompilation"}
    assert len(messages) == 1, messages
    assert "7 times over 7 calls" in messages.pop()  # six inputs, one of them called twice
