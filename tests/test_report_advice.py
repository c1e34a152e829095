"""What a report tells a learner points at the learner's own line and says nothing that does not apply.

Each test writes a submission for an exercise (named by id) and grades it as `gbcheck check --file` does:
an error raised inside torch is shown at the learner's statement that called into torch, with the cause;
a question is asked only where it applies; the hint fits the failure; and a file that fails exactly as the
manifest declares the unfixed exercise does says so in one line.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from checker.course.manifest import find_exercise
from checker.grading.report import ERROR, FAIL, render_text
from checker.grading.sandbox import Limits
from checker.grading.strict import check_file

REPO = Path(__file__).resolve().parent.parent
LIMITS = Limits(timeout=60, memory_mb=2048)

# The statement each wrong fix gets wrong, marked with `# <-`: the line the report must point at.
NMS_INDEXING_IN_BODY = '''
import torch


def box_iou(box, boxes):
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    intersection = (bottom_right - top_left).clamp(min=0).prod(dim=1)
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return intersection / ((box[2:] - box[:2]).prod() + areas - intersection)


def greedy_nms(boxes, scores, iou_threshold: float = 0.5):
    index = torch.arange(scores.shape[0], device=scores.device)
    keep = torch.zeros_like(scores, dtype=torch.bool)
    alive = scores > 0.05

    def candidates_left(keep, alive):
        return alive.any()

    def one_round(keep, alive):
        best = torch.where(alive, scores, -1.0).argmax()
        best_box = boxes[best]  # <-
        return keep | (index == best), alive & (box_iou(best_box, boxes) <= iou_threshold)

    keep, _ = torch.while_loop(candidates_left, one_round, (keep, alive))
    return keep
'''
CUSTOM_OP_WITHOUT_FAKE = '''
import numpy as np
import torch

RAW = np.array([0.0, 0.3, 0.5, 0.7, 0.9, 1.0])
CALIBRATED = np.array([0.0, 0.2, 0.35, 0.6, 0.85, 0.97])


@torch.library.custom_op("gbcourse::calibrate_confidence", mutates_args=())
def calibrate(confidence: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.interp(confidence.numpy(), RAW, CALIBRATED)).to(confidence.dtype)


def calibrated_predictions(logits, min_confidence: float = 0.5):
    confidence, labels = logits.softmax(dim=-1).max(dim=-1)
    calibrated = calibrate(confidence.detach())  # <-
    return torch.where(calibrated >= min_confidence, labels, -1)
'''
COND_BRANCHES_DISAGREE = '''
import torch


def gated_residual(x, weight):
    h = x @ weight
    return torch.cond(  # <-
        h.mean() > 0,
        lambda x, h: x + torch.relu(h),
        lambda x, h: (x - torch.tanh(h)).sum(),
        (x, h),
    )
'''
CASES = [  # id, submission, what torch's message or its cause says
    ("while-loop-nms", NMS_INDEXING_IN_BODY, "unbacked|data-dependent"),  # torch's words differ by release
    ("numpy-custom-op", CUSTOM_OP_WITHOUT_FAKE, "register_fake"),
    ("cond-on-input", COND_BRANCHES_DISAGREE, "torch.cond"),
]


def grade(tmp_path, exercise_id, source, limits=LIMITS):
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(source).lstrip())
    report = check_file(find_exercise(exercise_id), path, limits)
    return report, {check.name: check for check in report.checks}


def marked_line(source):
    """(number, text) of the line marked `# <-`, as the submission file holds it."""
    lines = textwrap.dedent(source).lstrip().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.rstrip().endswith("# <-"))
    return number, lines[number - 1].strip()


def lines_named(text):
    return {int(n) for n in re.findall(r"\bat line (\d+)", text)}


@pytest.mark.parametrize("exercise_id, source, said", CASES, ids=[case[0] for case in CASES])
def test_an_error_raised_inside_torch_is_shown_at_the_learners_line(tmp_path, exercise_id, source, said):
    report, checks = grade(tmp_path, exercise_id, source)
    number, _ = marked_line(source)
    compiled = checks["fullgraph-compiles"]
    assert compiled.status == FAIL
    if "UncapturedHigherOrderOpError" in compiled.message:
        # Some releases (2.8) raise the body's error at the while_loop call, with no frame of the body:
        # the learner's line is then that call's, still never one of torch's own files.
        number, said = _line_of(source, "torch.while_loop("), "while_loop"
    assert lines_named(compiled.message) == {number}, compiled.message  # not a line of torch's own files
    assert lines_named(checks["no-graph-breaks"].message) <= {number}
    assert any(words in compiled.message for words in said.split("|")), compiled.message
    assert lines_named(render_text(report)) == {number}


def _line_of(source, text):
    lines = textwrap.dedent(source).lstrip().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.mark.parametrize("exercise_id, source, said", CASES[:2], ids=[case[0] for case in CASES[:2]])
def test_the_report_names_the_statement_and_the_cause(tmp_path, exercise_id, source, said):
    report, checks = grade(tmp_path, exercise_id, source)
    _, statement = marked_line(source)
    if "UncapturedHigherOrderOpError" in checks["fullgraph-compiles"].message:  # as above: the call's line
        statement = textwrap.dedent(source).lstrip().splitlines()[_line_of(source, "torch.while_loop(") - 1].strip()
    assert f"(`{statement}`" in checks["fullgraph-compiles"].message
    assert statement in report.message
    if exercise_id == "numpy-custom-op":  # the cause torch wraps: the operator has no fake implementation
        assert "no fake impl registered" in report.message and "register_fake" in report.message


def test_the_json_report_points_at_the_learners_line(tmp_path):
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(CUSTOM_OP_WITHOUT_FAKE).lstrip())
    env = dict(os.environ, GBCHECK_PROGRESS=str(tmp_path / "progress.json"), NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "checker", "check", "numpy-custom-op", "--file", str(path), "--json"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    report = json.loads(done.stdout)
    number, _ = marked_line(CUSTOM_OP_WITHOUT_FAKE)
    compiled = next(c for c in report["checks"] if c["name"] == "fullgraph-compiles")
    assert lines_named(compiled["message"]) == {number}
    assert lines_named(report["message"]) == {number}


def test_the_stance_question_is_asked_only_where_nothing_stopped_compilation(tmp_path):
    _, checks = grade(tmp_path, "while-loop-nms", NMS_INDEXING_IN_BODY)
    assert checks["no-graph-breaks"].status == FAIL
    assert "default mode raised" in checks["no-graph-breaks"].message
    assert "stance" not in checks["no-graph-breaks"].message
    disabled = '''
    import torch

    torch.compiler.set_stance("force_eager")

    def gated_residual(x, weight):
        h = x @ weight
        return x + torch.relu(h) if h.mean() > 0 else x - torch.tanh(h)
    '''
    _, checks = grade(tmp_path, "cond-on-input", disabled)
    assert "is it disabled, skipped or run under another stance?" in checks["no-graph-breaks"].message


@pytest.mark.parametrize("source, fitting", [
    ("import torch\n\ndef gated_residual(x, weight)\n    return x\n", "SyntaxError at line 3"),
    ("import torch\nimport no_such_module_for_the_course\n", "import at line 2"),
    ("import torch\n\ndef gated_residual(x, weight):\n    return x.nonexistent_method()\n", "AttributeError at line 4"),
    ("import torch\n\ndef gated_residual(x, weight):\n    while True:\n        pass\n", "a loop whose condition"),
    ("import os\n\ndef gated_residual(x, weight):\n    os.abort()\n", "crashes"),
], ids=["syntax-error", "import-error", "eager-exception", "timeout", "crash"])
def test_a_failure_before_the_task_gets_a_hint_of_its_own(tmp_path, source, fitting):
    exercise = find_exercise("cond-on-input")
    report, _ = grade(tmp_path, exercise.id, source, limits=Limits(timeout=5, memory_mb=1024))
    assert report.status == ERROR
    assert fitting in report.hint, report.hint
    assert not any(hint in render_text(report) for hint in exercise.hints)
    assert not report.expected


def test_the_unfixed_bug_exercise_says_it_fails_on_purpose():
    exercise = find_exercise("cat-bug")
    report = check_file(exercise, exercise.original_path, LIMITS)
    assert report.status == ERROR
    assert "the bug the exercise asks you to fix" in report.expected and exercise.expected_break in report.expected
    assert render_text(report).splitlines()[1] == report.expected  # one line, right under the verdict
    assert report.to_dict()["expected"] == report.expected
    assert report.hint == exercise.hints[0]  # its failure is the exercise's: its own hint fits


def test_a_failure_other_than_the_declared_one_is_not_called_expected(tmp_path):
    shipped = find_exercise("cat-bug").original_path.read_text()
    assert "torch.cat(tokens, pos, dim=-1)" in shipped
    wrong = shipped.replace("torch.cat(tokens, pos, dim=-1)", "torch.cat((tokens, pos), dim=-1) * 2")
    report, checks = grade(tmp_path, "cat-bug", wrong)
    assert checks["eager-matches"].status == FAIL
    assert report.expected == ""


def test_a_graph_break_other_than_the_exercises_gets_the_hint_of_that_break(tmp_path):
    exercise = find_exercise("cond-on-input")
    source = '''
    import torch

    def gated_residual(x, weight):
        h = x @ weight
        print("gating", h.shape)
        return torch.cond(h.mean() > 0, lambda x, h: x + torch.relu(h), lambda x, h: x - torch.tanh(h), (x, h))
    '''
    report, checks = grade(tmp_path, exercise.id, source)
    assert checks["no-graph-breaks"].status == FAIL and exercise.expected_break not in checks["no-graph-breaks"].message
    assert report.hint not in exercise.hints
    assert "not the one this exercise starts from" in report.hint and "at line 5" in report.hint
    assert not report.expected


def test_a_break_outside_the_checked_file_is_named_with_its_file():
    """The logging contract turns the logger on, so default mode also breaks inside `logging`'s own
    LogRecord (GB0007 at its `time.time()`): the report names that file, never as the learner's "line 297"."""
    exercise = find_exercise("ignore-logger")
    report = check_file(exercise, exercise.exercise_path, LIMITS)
    own_lines = len(exercise.exercise_path.read_text().splitlines())
    places = [gb["place"] for gb in report.graph_breaks]
    assert any(place.startswith("logging/__init__.py, line ") for place in places), places
    for place in places:
        number = int(re.match(r"line (\d+)", place).group(1)) if place.startswith("line ") else None
        assert number is None or number <= own_lines, place
    text = render_text(report)
    assert re.search(r"at logging/__init__\.py, line \d+", text), text
    assert not re.search(rf"at line (\d{{{len(str(own_lines)) + 1},}})", text)  # no line past the file's end
