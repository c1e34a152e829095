"""What a report advises besides its checks: the hint that fits the failure, and the line that says when a
failure is the one the exercise is about.

An exercise's hints are about its graph break. They fit a failure of the task (the break still there, a
wrong result, a contract); after a syntax error, a failed import, a missing function, an exception in
eager mode, a timeout or a crash they would send the learner the wrong way, so the hint names what to
fix first instead. Pure: reads the trial payloads the strict check already has.
"""

from __future__ import annotations

import signal
from typing import Any

from checker.course.manifest import Exercise
from checker.dynamo import frames, registry
from checker.grading import sandbox
from checker.grading.report import ERROR, FAIL, PASS, CheckResult

_BREAK_CHECKS = ("fullgraph-compiles", "no-graph-breaks")


def shown_breaks(breaks: list[dict[str, Any]]) -> set[str]:
    """The breaks by id, or by type where torch gives none (as `gbcheck verify` names them)."""
    return {gb.get("gb_id") or gb.get("gb_type") or "" for gb in breaks}


def hint_for(exercise: Exercise, level: int, payloads: dict[str, dict[str, Any] | None], outcome: sandbox.Outcome,
             checks: list[CheckResult], breaks: list[dict[str, Any]]) -> str:
    """The hint a failing report shows: the exercise's own (at `level`) where the failure is its task,
    one about the failure where the code could not be checked that far."""
    own = exercise.hints[min(level, len(exercise.hints) - 1)]
    eager = payloads.get("eager")
    if eager is None:
        return _stopped_hint(exercise, outcome)
    if eager["stage"] == "import":
        return _import_hint(eager["error"])
    if eager["stage"] == "entry":
        return f"The checker calls `{exercise.entry}`: keep a function of that name in the file."
    eager_error = eager["error"] if eager["stage"] == "call" else eager["diagnosis"]["error"]
    if eager_error and not exercise.fails_eagerly:  # a bug exercise's eager failure is its task
        return (f"Call `{exercise.entry}` without torch.compile (or under "
                f"`torch.compiler.set_stance(\"force_eager\")`) and fix the {eager_error['type']}"
                f"{_at(eager_error)} first: only code that runs eagerly can be checked under torch.compile.")
    stopped = next((mode for mode in ("fullgraph", "default") if payloads.get(mode) is None), None)
    if stopped:
        return _stopped_hint(exercise, outcome, compiled=True)
    first = next((c for c in checks if c.status in (ERROR, FAIL)), None)
    if first is not None and first.name == "past-the-bounds":
        return ("Your fix holds on inputs like the examples, but not on larger ones or in float64: a test in your "
                "code on a size or a dtype picks another path there. A fix does the same work on every input, "
                "whatever its size or dtype: drop the test, or make both paths compute the same thing in one graph.")
    if first is None or first.name not in _BREAK_CHECKS:
        return own
    raised = _compile_error(payloads)
    if raised and exercise.expected_break not in shown_breaks(breaks):
        return (f"Compiling now stops with an error{_at(raised)}, not at a graph break: that statement runs "
                "without torch.compile but not under it. Torch's message above says why.")
    return _other_break(exercise, breaks) or own


def expected_note(exercise: Exercise, payloads: dict[str, dict[str, Any] | None], checks: list[CheckResult],
                  breaks: list[dict[str, Any]]) -> str:
    """One line when the file fails exactly as the manifest declares the unfixed exercise does; else ""."""
    failing = {c.name for c in checks if c.status in (ERROR, FAIL)}
    status = {c.name: c.status for c in checks}
    shown = shown_breaks(breaks)
    if not exercise.expected_break:  # an exercise about recompilation
        if exercise.max_compilations and "no-recompilation" in failing and failing <= {"no-recompilation",
                                                                                        "replay-matches"}:
            times = f"{exercise.max_compilations} time" + ("s" if exercise.max_compilations != 1 else "")
            return (f"Expected: this is what the exercise asks you to fix (the function is compiled more than "
                    f"{times}, the most the exercise allows).")
        return ""
    if exercise.expected_break not in shown:
        return ""
    gb = next(gb for gb in breaks if exercise.expected_break in (gb.get("gb_id"), gb.get("gb_type")))
    where = f" at {place(gb)}" if gb.get("line") else ""
    if exercise.fails_eagerly:
        eager = payloads.get("eager") or {}
        error = eager["diagnosis"]["error"] if eager.get("stage") == "done" else None
        if error and status.get("eager-runs") == ERROR and failing <= {"eager-runs", *_BREAK_CHECKS}:
            line = f"line {error['line']} fails" if error.get("line") else "it fails"
            return (f"Expected: this is the bug the exercise asks you to fix ({line} without torch.compile "
                    f"too; torch.compile reports it as {exercise.expected_break}).")
        return ""
    if status.get("eager-runs") == PASS and status.get("eager-matches") == PASS and failing & set(_BREAK_CHECKS):
        return f"Expected: this is the graph break the exercise asks you to fix ({exercise.expected_break}{where})."
    return ""


def _compile_error(payloads: dict[str, dict[str, Any] | None]) -> dict[str, Any] | None:
    """The error a compiled mode raised that is not a graph break (fullgraph's first), if any."""
    for mode in ("fullgraph", "default"):
        payload = payloads.get(mode) or {}
        error = payload.get("diagnosis", {}).get("error") if payload.get("stage") == "done" else None
        if error and not (error.get("gb_id") or error.get("gb_type")):
            return error
    return None


def _other_break(exercise: Exercise, breaks: list[dict[str, Any]]) -> str:
    """A hint for a graph break that is not the exercise's, from the course's note on it ("" if none)."""
    if not breaks or not exercise.expected_break or exercise.expected_break in shown_breaks(breaks):
        return ""
    gb = breaks[0]
    note = registry.course_note(gb.get("gb_id"))
    if note is None:
        return ""
    return (f"{gb['gb_id']}{_at(gb)} is a graph break of its own, not the one this exercise starts from "
            f"({exercise.expected_break}). {note.fix}")


def _import_hint(error: dict[str, Any]) -> str:
    if error["type"] in ("SyntaxError", "IndentationError", "TabError"):
        return f"Fix the {error['type']}{_at(error)} first: nothing else can be checked until the file imports."
    if error["type"] in ("ImportError", "ModuleNotFoundError"):
        return (f"Fix the import{_at(error)} first: is the module's name spelt right, and is it installed in "
                "this Python? Nothing else can be checked until the file imports.")
    return (f"Fix the {error['type']}{_at(error)} first: the file fails while it is imported, before any "
            "function is called.")


def _stopped_hint(exercise: Exercise, outcome: sandbox.Outcome, compiled: bool = False) -> str:
    """For a process that did not finish: what to look for, by how it ended ("" when nothing fits)."""
    if outcome.refused:  # the check's message says what the grader refused
        return ""
    if outcome.timed_out and compiled:
        return (f"`{exercise.entry}` runs without torch.compile, but compiling it did not finish in time: "
                "is a Python loop being unrolled into a very large graph?")
    if outcome.timed_out:
        return (f"Call `{exercise.entry}` on one of the exercise's inputs without torch.compile and see "
                "whether it returns: a loop whose condition never changes runs until the check stops it.")
    if outcome.signal_number == signal.SIGKILL:
        return "Look for a tensor or a list far larger than the exercise needs: the process ran out of memory."
    if outcome.signal_number is not None:
        return (f"Call `{exercise.entry}` yourself, outside the checker, to see where the process crashes "
                "(an operation on invalid memory, a native extension?).")
    if outcome.exit_code is not None:
        return "Remove any sys.exit() or os._exit() call from the file: the checker must be able to call it."
    return ""


def place(record: dict[str, Any]) -> str:
    """Where a break or an error is, as a report names it (name_places below), or "line N"; "" without a line."""
    return record.get("place") or (f"line {record['line']}" if record.get("line") else "")


def _at(record: dict[str, Any]) -> str:
    where = place(record)
    if not where:
        return ""
    return f" at {where}" + (f" (`{record['source_line']}`)" if record.get("source_line") else "")


def name_places(path: str, payloads) -> None:
    """Give every break and error its `place` as a report names it: `line 25` in the checked file, else with
    its file (a break Dynamo met inside `logging`, say, is not the learner's line 297)."""
    for payload in payloads:
        diagnosis = (payload or {}).get("diagnosis") or {}
        for record in [*diagnosis.get("graph_breaks", ()), diagnosis.get("error"), (payload or {}).get("error")]:
            if record:
                record["place"] = frames.shown_place(record.get("filename"), record.get("line"), path,
                                                     record.get("entry"))
