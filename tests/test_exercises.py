"""The course's invariant: every unfixed exercise fails with its expected break, every solution passes."""

import pytest
import torch

from checker.manifest import load_exercises
from checker.report import ERROR, FAIL, PASS
from checker.strict import check_file

EXERCISES = load_exercises()


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_solution_passes(exercise):
    report = check_file(exercise, exercise.solution_path)
    assert report.status == PASS, report.to_dict()
    assert report.points == exercise.points
    assert all(check.status == PASS for check in report.checks)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_unfixed_exercise_shows_its_expected_break(exercise):
    report = check_file(exercise, exercise.exercise_path)
    assert report.points == 0
    gb_ids = {gb["gb_id"] for gb in report.graph_breaks}
    assert exercise.expected_break in gb_ids, report.to_dict()
    checks = {check.name: check for check in report.checks}
    if exercise.fails_eagerly:
        assert report.status == ERROR
        assert checks["eager-runs"].status == ERROR
        assert "fails without torch.compile too" in checks["eager-runs"].message
    else:
        assert report.status == FAIL
        assert checks["eager-runs"].status == PASS
        assert checks["eager-matches"].status == PASS  # the unfixed code is right, just not compilable
        assert checks["no-graph-breaks"].status == FAIL
        assert exercise.expected_break in checks["no-graph-breaks"].message
    assert report.hint == exercise.hints[0]
    assert report.chapter == exercise.chapter


@pytest.mark.parametrize("exercise", [ex for ex in EXERCISES if not ex.fails_eagerly], ids=lambda ex: ex.id)
def test_original_and_solution_agree_eagerly(exercise):
    """The reference is the solution; it must compute what the original computes, on every input."""
    from checker.strict import reference_outcome
    from checker.sandbox import Limits, run_job
    from checker.trial import run_trial

    original = run_job(lambda: run_trial(exercise, str(exercise.exercise_path), "eager"))
    reference = reference_outcome(exercise, Limits())
    assert original.payload["stage"] == "done" and original.payload["diagnosis"]["error"] is None
    for got, want in zip(original.payload["outputs"], reference.payload["outputs"]):
        torch.testing.assert_close(got, want, rtol=exercise.rtol, atol=exercise.atol)


def test_every_technique_of_the_source_page_has_an_exercise():
    categories = {ex.category for ex in EXERCISES}
    assert {"incorrect-code", "data-dependent", "printing-logging"} <= categories
    assert len(EXERCISES) >= 9
    allowed = {key for ex in EXERCISES for key in ex.allowed_config}
    assert {"capture_scalar_outputs", "reorderable_logging_functions", "ignore_logging_functions"} <= allowed


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda ex: ex.id)
def test_exercise_file_is_a_learner_task(exercise):
    """Like a rustlings exercise: a TODO where the learner acts, progressive hints, a solution twin."""
    text = exercise.exercise_path.read_text()
    assert "TODO" in text
    assert exercise.solution_path.exists()
    assert "TODO" not in exercise.solution_path.read_text()
    assert len(exercise.hints) >= 2 and all(hint.strip() for hint in exercise.hints)
    assert f"gbcheck check {exercise.id}" in text
