"""Checks are isolated: from each other, from the grader, and from whatever the learner's code does."""

import os
import textwrap

import torch

from checker import engine
from checker.manifest import find_exercise
from checker.report import FAIL, PASS
from checker.sandbox import Limits, run_jobs
from checker.strict import check_file

CAPTURE = find_exercise("capture-item")


def test_config_set_by_one_check_does_not_leak_into_the_next():
    before = engine.config_snapshot()
    fixed = check_file(CAPTURE, CAPTURE.solution_path)  # sets capture_scalar_outputs = True
    unfixed = check_file(CAPTURE, CAPTURE.exercise_path)
    assert fixed.status == PASS
    assert unfixed.status == FAIL
    assert "GB0124" in {gb["gb_id"] for gb in unfixed.graph_breaks}
    assert engine.config_differences(before) == set()  # the grader's own config is untouched
    assert torch._dynamo.config.capture_scalar_outputs is False


def test_grader_state_survives_a_submission_that_patches_torch(tmp_path):
    path = tmp_path / "patch.py"
    path.write_text(textwrap.dedent('''
        import torch
        torch.compile = None
        torch._dynamo.config.suppress_errors = True
        def gated_residual(x, weight):
            return x
    '''))
    compile_before = torch.compile
    report = check_file(find_exercise("cond-on-input"), path)
    assert report.status == FAIL
    assert torch.compile is compile_before
    assert torch._dynamo.config.suppress_errors is False


def test_a_job_runs_in_its_own_process_and_group():
    outcomes = run_jobs([lambda: (os.getpid(), os.getpgid(0))] * 2, Limits(timeout=10), parallel=2)
    (pid1, group1), (pid2, group2) = (o.payload for o in outcomes)
    assert len({pid1, pid2, os.getpid()}) == 3
    assert pid1 == group1 and pid2 == group2


def test_a_hanging_job_is_killed_with_what_it_started(tmp_path):
    marker = tmp_path / "grandchild-alive"

    def job():
        if os.fork() == 0:  # a grandchild that would outlive its parent
            import time
            time.sleep(3)
            marker.write_text("still running")
            os._exit(0)
        while True:
            pass

    outcome = run_jobs([job], Limits(timeout=1))[0]
    assert outcome.timed_out and outcome.payload is None
    import time
    time.sleep(3.5)
    assert not marker.exists()


def test_results_travel_as_data_not_code():
    class Sneaky:
        def __reduce__(self):
            return (os.system, ("touch /tmp/gbcheck-pwned",))

    outcome = run_jobs([lambda: {"x": Sneaky()}], Limits(timeout=10))[0]
    assert outcome.payload is None  # weights_only loading refuses it (or the child cannot even send it)
    assert not os.path.exists("/tmp/gbcheck-pwned")
