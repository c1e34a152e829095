"""The checks that compare what the file computes with what the reference computes on the same fresh draws:
eager-matches and compiled-matches. Call by call, in each mode's own order: the outputs, the caller's tensors as
each call leaves them, and, through the eager calls and those compiled in default mode, the gradients a training step
takes.
"""

from __future__ import annotations

from typing import Any

from checker.course.manifest import Exercise
from checker.grading.plain import gradients_difference, output_difference
from checker.grading.report import FAIL, PASS, SKIP, CheckResult
from checker.grading.trial import compiled_gradients_asked


def eager_matches(exercise: Exercise, payload: dict[str, Any], ref: dict[str, Any]) -> CheckResult:
    """eager-matches: the eager mode's outputs, inputs as left and gradients (a mode that ran)."""
    return _compare("eager-matches", exercise, payload, ref)


def compiled_matches(exercise: Exercise, payloads: list[dict[str, Any] | None], ref: dict[str, Any]) -> CheckResult:
    """compiled-matches: the outputs, inputs as left and gradients of default mode, then the outputs and inputs as
    left of fullgraph mode."""
    for payload in payloads:
        if payload is None or payload["stage"] != "done" or payload["diagnosis"]["error"]:
            return CheckResult("compiled-matches", SKIP, "needs the function to compile and run first")
        result = _compare("compiled-matches", exercise, payload, ref, label=f"compiled ({payload['mode']} mode)")
        if result.status != PASS:
            return result
    return CheckResult("compiled-matches", PASS, "compiled outputs equal the reference on every input")


def _compare(name: str, exercise: Exercise, payload: dict[str, Any], ref: dict[str, Any],
             label: str = "eager") -> CheckResult:
    """The mode's outputs, call by call in its own order, against the reference on the same draws."""
    outputs, order = payload["outputs"], ref["orders"][payload["mode"]]
    expected = [ref["outputs"][draw] for draw in order]
    # The caller's tensors as each call left them: changed in place where the reference leaves them, a later use
    # of the same batch reads other values (a NaN mark cleaned away, a mask overwritten).
    left, left_expected = payload.get("inputs_after"), [ref["inputs_after"][draw] for draw in order]
    if not isinstance(left, list) or len(left) != len(outputs):
        return CheckResult(name, FAIL, "the checked process sent back no record of the inputs its calls left")
    for index, (got, want, got_left, want_left) in enumerate(zip(outputs, expected, left, left_expected)):
        case = ref["cases"][order[index]]
        note = exercise.inputs[case].note
        which = f"call {index + 1}, a fresh draw of input {case + 1}" + (f" ({note})" if note else "")
        if payload["mode"] == "eager" and index in ref.get("untrained", ()):
            which += (", run as an evaluation loop runs it: under no_grad, in evaluation mode, its tensors laid out "
                      "as a transposed view's")
        difference = output_difference(got, want, exercise.rtol, exercise.atol)
        if difference:
            return CheckResult(name, FAIL, f"the {label} output differs from the reference on {which}: {difference}")
        difference = output_difference(got_left, want_left, exercise.rtol, exercise.atol)
        if difference:
            return CheckResult(name, FAIL, f"the {label} call changed its inputs in place otherwise than the reference "
                               f"does, on {which} (the caller's tensors are not as the reference leaves them): "
                               f"{difference}")
    if len(outputs) != len(expected):
        return CheckResult(name, FAIL, f"{len(outputs)} of {len(expected)} calls returned")
    # And the gradients a training step takes, eagerly and compiled: compiled once default mode neither breaks nor
    # recompiles, as its report says (a report that says so, whoever wrote it, fails those checks), and returns a
    # floating-point tensor (outputs that equal the reference's above).
    mode = payload["mode"]
    if mode == "eager" or mode == "default" and compiled_gradients_asked(exercise, payload["diagnosis"], outputs):
        difference = gradients_difference(payload.get("gradients"), [ref["gradients"][draw] for draw in order],
                                          exercise.rtol, exercise.atol)
        if difference:
            return CheckResult(name, FAIL, f"the {label} outputs equal the reference's, but not their gradients: "
                               f"{difference}")
    return CheckResult(name, PASS, f"{label} output equals the reference on all {len(expected)} calls "
                       "(fresh inputs, in an order of this mode's own)")
