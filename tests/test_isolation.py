"""Checks are isolated: from each other, from the grader, and from whatever the learner's code does."""

import logging
import os
import textwrap
import time
import warnings

import torch

from checker.course.manifest import find_exercise
from checker.dynamo import engine
from checker.grading.report import ERROR, FAIL, PASS
from checker.grading.sandbox import Job, Limits, run_jobs
from checker.grading.strict import check_file
from checker.grading.trial import ProcessState

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


def test_the_graders_own_work_runs_beside_the_child_and_stays_out_of_its_reach():
    made: list[str] = []
    started: list[float] = []

    def child():
        time.sleep(1.0)
        return list(made), time.monotonic()  # the grader's list as the child sees it, after the grader filled it

    def meanwhile():
        started.append(time.monotonic())
        made.append("the reference's outputs")

    outcome = run_jobs([child], Limits(timeout=10), meanwhile=meanwhile)[0]
    seen, ended = outcome.payload
    assert made == ["the reference's outputs"] and seen == []
    assert started[0] < ended  # it ran while the child did, not after


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


def test_a_job_sends_a_result_per_stage_and_each_stage_has_its_own_timeout():
    def stages():
        import time
        for stage in range(3):
            time.sleep(1.2)  # 3.6 s in all, over the 2 s limit, but each stage is within it
            yield stage

    outcome = run_jobs([Job(stages, results=3)], Limits(timeout=2))[0]
    assert outcome.complete and not outcome.timed_out
    assert outcome.results == [0, 1, 2]


def test_stages_finished_before_a_hang_are_kept():
    def stages():
        yield "eager result"
        while True:
            pass

    outcome = run_jobs([Job(stages, results=3)], Limits(timeout=1))[0]
    assert outcome.timed_out and not outcome.complete
    assert outcome.results == ["eager result"]
    assert outcome.payload is None and "did not finish" in outcome.problem


def test_a_setting_made_while_one_mode_runs_does_not_reach_the_next(tmp_path):
    # Set only when the function runs eagerly (the first mode); a fresh process compiling it never sees it.
    path = tmp_path / "sneaky.py"
    path.write_text(textwrap.dedent('''
        import torch
        def clipped_rms_norm(x, weight, limit=2.5):
            if not torch.compiler.is_compiling():
                torch._dynamo.config.reorderable_logging_functions = {print}
            normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight
            clipped = (normed.abs() > limit).sum()
            print("rms_norm: clipped activations:", clipped)
            return normed.clamp(-limit, limit)
    '''))
    report = check_file(find_exercise("reorder-print"), path)
    checks = {check.name: check for check in report.checks}
    assert checks["eager-runs"].status == PASS
    assert checks["fullgraph-compiles"].status == FAIL
    assert "GB0059" in {gb["gb_id"] for gb in report.graph_breaks}


def test_process_state_is_put_back_between_modes():
    state = ProcessState.save()
    try:
        logger = logging.getLogger("submission_state_test")
        logger.addHandler(logging.StreamHandler())
        logging.getLogger().setLevel(logging.CRITICAL)
        torch._dynamo.config.capture_scalar_outputs = True
        torch.compiler.set_stance("force_eager")
        warnings.simplefilter("ignore")
        torch.manual_seed(123)
        draw = torch.rand(3)
        torch.set_default_dtype(torch.float64)
        state.restore()
        assert logger.handlers == [] and logging.getLogger().level == state.loggers[""][1]
        assert torch._dynamo.config.capture_scalar_outputs is False
        assert torch._dynamo.eval_frame._stance.stance == "default"
        assert warnings.filters == state.warning_filters
        assert torch.get_default_dtype() == torch.float32
        torch.manual_seed(123)
        state.restore()
        assert not torch.equal(torch.rand(3), draw)  # the generator is back where it was, not reseeded
    finally:
        state.restore()  # this test runs in the test process itself: leave nothing behind


def test_learner_output_is_shown_once_not_once_per_mode(tmp_path):
    path = tmp_path / "chatty.py"
    path.write_text('import torch\nprint("hello from import")\n' + textwrap.dedent('''
        def masked_mse(pred, target, mask):
            return pred.sum()
    '''))
    report = check_file(CAPTURE, path)
    assert report.output.count("hello from import") == 1


def _open_files() -> list[str]:
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:  # the descriptor listdir itself used
            pass
    return targets


def test_a_check_cannot_reach_another_checks_result_pipe_or_output():
    def slow():
        import time
        time.sleep(1.5)
        return "first"

    grader_had = set(_open_files())
    first, second = run_jobs([slow, _open_files], Limits(timeout=10), parallel=2)
    assert first.payload == "first"  # its result still arrived whole
    new = [target for target in second.payload if target not in grader_had]
    assert sum(target.startswith("pipe:") for target in new) == 1  # its own result pipe, not the first's
    assert not any("pidfd" in target for target in new)


def test_an_oversized_result_is_refused_not_buffered():
    outcome = run_jobs([lambda: torch.zeros(20_000_000)], Limits(timeout=20))[0]  # 80 MB
    assert not outcome.complete and outcome.payload is None
    assert "over the 64 MiB limit" in outcome.problem


def test_a_hang_in_a_later_mode_keeps_the_earlier_verdicts(tmp_path):
    path = tmp_path / "second-import-hangs.py"  # every mode imports the file afresh: eager first
    # The mark goes in the check's scratch folder (TMPDIR), the one place a checked file may write.
    path.write_text("import os, tempfile\nmark = os.path.join(tempfile.gettempdir(), 'imported-once')\n"
                    "if os.path.exists(mark):\n    while True:\n        pass\n"
                    "open(mark, 'w').close()\n" + find_exercise("cond-on-input").solution_path.read_text())
    report = check_file(find_exercise("cond-on-input"), path, Limits(timeout=3))
    checks = {check.name: check for check in report.checks}
    assert checks["eager-runs"].status == PASS and checks["eager-matches"].status == PASS
    assert checks["fullgraph-compiles"].status == ERROR and "did not finish" in checks["fullgraph-compiles"].message
    assert "stopped in the fullgraph run" in checks["no-graph-breaks"].message


def test_a_polyfill_a_file_registers_reaches_neither_its_next_import_nor_a_later_check():
    """`substitute_in_graph` registers a polyfill for the whole process and refuses a second one: the file runs
    each mode in a process of its own, and the reference is audited in a child, so that the solution passes twice
    in a row and the unfixed file, checked after it in the same grader, still meets the C function."""
    polyfill = find_exercise("bisect-polyfill")
    assert check_file(polyfill, polyfill.solution_path).status == PASS
    assert check_file(polyfill, polyfill.solution_path).status == PASS  # registered again, in fresh processes
    unfixed = check_file(polyfill, polyfill.exercise_path)
    assert unfixed.status == FAIL and "GB0007" in {gb["gb_id"] for gb in unfixed.graph_breaks}
