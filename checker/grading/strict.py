"""The strict check: what "fixed" means, decided in the grader from trials run in sandboxed children.

A file passes an exercise only when every named check passes:
  eager-runs            it imports and runs without torch.compile ("fails without compile too" is a bug)
  eager-matches         its eager output equals the reference on every input
  fullgraph-compiles    torch.compile(fullgraph=True) succeeds on every input
  no-graph-breaks       default mode records zero breaks and captures the function's work in a graph
  compiled-matches      the compiled outputs equal the reference
  nothing-switched-off  no disabled entry, no stance change, no config beyond what the exercise allows,
                        no replaced torch function
  no-recompilation      (exercises about recompilation) default mode compiled the function into no more
                        graphs over all the inputs than the exercise allows (`max_compilations`)

  no-environment-switch (named only when it fails) no test in the traced code reads anything but the call's
                        inputs and the file's constants: where the file could tell the checked process from a
                        program of the learner's own, the graphs captured here need not be the program's
                        (grading/environment_reads.py)

  past-the-bounds       (named only when it fails) past the sizes the file's text or its guards test, and in
                        float64, the function does the reference's work, in one graph (bound_probes.py)
  replay-matches        the graphs the function was compiled to, rebuilt and replayed by the grader on
                        inputs drawn after the checked process ended, compute the reference
  and one check per behaviour contract of the exercise (what its task asks the code to keep doing:
  prints, warnings, logs, raising on invalid input, state, gradients, a helper, a construct; see
  contracts.py and checker/course/contracts.py)

Whose word counts. The three modes run one after the other in one sandboxed child (see trial.run_trials),
each on a fresh import, on inputs drawn fresh for this check and called in an order of their own per
mode (draws.py). Everything that child reports is written by a process that ran the learner's code, so
a determined file can fake it: the first six checks tell an honest learner what went wrong, but none of
them alone is trusted for a pass. The decisive fact is established by the grader itself: after the child
has ended, it draws a replay seed, and computes the reference and replays the recorded graphs on the new
draws itself, never importing the learner's file (audit.py; a sandboxed child instead where the solution
registers an operator, which must not outlive the check). replay.py says how, and what a submission can
still do. A pass needs every check, the replay included; where the graph calls the learner's own operator,
the replay puts the reference's step in its place; where it calls the file's Python (nonstrict_trace), the
replay cannot apply, and the report says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

from checker.course import draws
from checker.course.manifest import Exercise
from checker.course.resolver import reference_copies
from checker.dynamo import engine, registry
from checker.grading import advice, sandbox
from checker.grading.audit import audit_here, reference_here, run_audit
from checker.grading.bound_probes import all_probes, probe_checks, probes_for
from checker.grading.code_guard import refused_code
from checker.grading.confine import writes_check
from checker.grading.contracts import contract_checks
from checker.grading.gate import gate_check
from checker.grading.matches import compiled_matches, eager_matches
from checker.grading.report import ERROR, FAIL, PASS, SKIP, CheckResult, Report, plain_data
from checker.grading.switches import switched_off_check
from checker.grading.traced_text import environment_problem
from checker.grading.trial import TRIAL_MODES, read_source, registers_operators, run_trial, run_trials


@dataclass(frozen=True)
class Trials:
    """One file's trials: the outcome of the child that ran them, one result per mode that finished."""

    outcome: sandbox.Outcome
    probes: tuple[draws.Draw, ...] = ()  # the draws past the file's bounds it was also called on (bound_probes.py)

    def payload(self, mode: str) -> dict[str, Any] | None:
        index = TRIAL_MODES.index(mode)
        return self.outcome.results[index] if index < len(self.outcome.results) else None

    def all_probes(self, exercise: Exercise, seed: int) -> tuple[draws.Draw, ...]:
        return all_probes(exercise, seed, self.probes, self.outcome.results)


def trial_job(exercise: Exercise, path: str, seed: int, user: int | None = None,
              workdir: str | None = None, probes: tuple[draws.Draw, ...] = ()) -> sandbox.Job:
    """The sandbox job that runs every mode's trial of one file on the draws of the trial seed."""
    # The references (and a clone's copies of them), unreadable to the learner's code; not what holds the
    # checked file itself (verify's solutions, the tests' alternative fixes).
    checked = os.path.realpath(path)
    hidden = tuple(h for h in reference_copies(exercise.solution_path.parent) if not checked.startswith(h + os.sep))
    return sandbox.Job(lambda: run_trials(exercise, path, seed, list(probes)), user=user, workdir=workdir,
                       results=len(TRIAL_MODES) + 1, hidden=hidden)


def audit_job(exercise: Exercise, seed: draws.Seed, trials: Trials) -> sandbox.Job:
    """The grader's own run (audit.py), forked from the grader: it never imports the learner's file."""
    default = trials.payload("default")
    return sandbox.Job(lambda: run_audit(exercise, seed, default, probes=trials.all_probes(exercise, seed.trial)),
                       results=2)


def finish(exercise: Exercise, path: str, trials: Trials, trial_seed: int, limits: sandbox.Limits,
           hint_level: int = 0, replay_seed: int | None = None, source: str | None = None,
           pristine: bool = False, last: bool = False, on_trial: dict[str, Any] | None = None) -> Report:
    """After the trials have ended: draw the replay seed, audit, decide. `source` is the file's text as the
    grader read it before the trials began (the structure contracts read it). `pristine`: a grader that
    forks more checks keeps no reference in its memory, where a later child could find it: it audits in a child.
    `last`: this process forks no check after this one and ends (a class worker), so it audits itself, under
    a check's limits, and saves the fork. `on_trial`: the reference on the trial draws, made already in this
    process while the trial ran (`check_file`)."""
    seed = draws.Seed(trial_seed, draws.fresh_seed() if replay_seed is None else replay_seed)
    if last:  # nothing is forked from here again: what the audit loads or starts here reaches no later check
        sandbox.limit_this_process(limits, results=2)
        return decide(exercise, path, trials, audit_here(exercise, seed, trials.payload("default"), on_trial,
                                                         trials.all_probes(exercise, seed.trial)), hint_level, seed,
                      source)
    if audits_here(exercise, pristine):
        audit = audit_here(exercise, seed, trials.payload("default"), on_trial, trials.all_probes(exercise, seed.trial))
    else:
        audit = sandbox.run_job(audit_job(exercise, seed, trials), limits)
    return decide(exercise, path, trials, audit, hint_level, seed, source)


def audits_here(exercise: Exercise, pristine: bool) -> bool:
    """Whether a grader that forks more checks may audit in its own process. Kept out of it: the references of a
    pristine grader, a solution that registers an operator or a polyfill (see warm-up: a later check's file would
    find it), and the reference's backward pass of a gradients contract, after which (on CUDA builds, whose
    autograd starts device threads) no child forked from the grader could run one: "Unable to handle
    autograd's threading in combination with fork-based multiprocessing", measured on torch 2.15."""
    return not (pristine or exercise.opaque_calls or registers_operators(str(exercise.solution_path))
                or any(c.kind == "gradients" for c in exercise.contracts))


def reference_outcome(exercise: Exercise, limits: sandbox.Limits) -> sandbox.Outcome:
    """The solution run eagerly on the manifest's example inputs (a course check, not a grading one)."""
    return sandbox.run_job(lambda: run_trial(exercise, str(exercise.solution_path), "eager", watch=False), limits)


def check_file(exercise: Exercise, path: str | os.PathLike, limits: sandbox.Limits = sandbox.Limits(),
               hint_level: int = 0, seed: draws.Seed | None = None, pristine: bool = False,
               user: int | None = None, last: bool = False) -> Report:
    """Grade one file against one exercise: run the trials, then audit and decide. `seed` repeats a check;
    `pristine` and `last` as in `finish`; `user`: the uid the trials run as, for a grader running as root
    (sandbox.Job)."""
    path = os.path.abspath(path)
    if exercise.skip:
        return skipped_report(exercise, path)
    if not os.path.isfile(path):
        return error_report(exercise, path, f"There is no file at {path}.")
    engine.warm_up()
    trial_seed = draws.fresh_seed() if seed is None else seed.trial
    source = read_source(path)
    probes = tuple(probes_for(exercise, trial_seed, source))  # from the text the grader read, before the trial
    # Where this process audits, it runs the reference on the trial draws while the trial does: the trial seed
    # is all it needs, and the child, forked before, cannot see it.
    on_trial: list[dict[str, Any]] = []
    meanwhile = (lambda: on_trial.append(reference_here(exercise, trial_seed))) \
        if last or audits_here(exercise, pristine) else None
    outcome = sandbox.run_job(trial_job(exercise, path, trial_seed, user=user,
                                        workdir=os.path.dirname(path) if user is not None else None,
                                        probes=probes), limits, meanwhile=meanwhile)
    return finish(exercise, path, Trials(outcome, probes), trial_seed, limits, hint_level,
                  None if seed is None else seed.replay, source, pristine, last, on_trial[0] if on_trial else None)


def error_report(exercise: Exercise, path: str, message: str) -> Report:
    check = CheckResult("eager-runs", ERROR, message)  # no file to check: the exercise's hints do not apply
    return Report(id=exercise.id, status=ERROR, checks=(check,), graph_breaks=(), message=message,
                  file=path, points=0, max_points=exercise.points, chapter=exercise.chapter)


def skipped_report(exercise: Exercise, path: str) -> Report:
    """The exercise cannot be done on the installed torch, as the manifest declares: no points either way."""
    message = f"Skipped on this torch: {exercise.skip}."
    return Report(id=exercise.id, status=SKIP, checks=(CheckResult("torch-version", SKIP, message),),
                  graph_breaks=(), message=message, file=path, points=0, max_points=0, chapter=exercise.chapter)


def decide(exercise: Exercise, path: str, trials: Trials, audit: sandbox.Outcome, hint_level: int = 0,
           seed: draws.Seed | None = None, source: str | None = None) -> Report:
    """Turn trial and audit outcomes into named checks and a verdict. Pure: no processes, no I/O beyond
    the shipped exercise file an `unchanged` contract compares with."""
    ref = _audited_reference(exercise, audit)
    try:
        return _decide(exercise, path, trials, ref, audit, hint_level, seed, source)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as err:
        message = (f"The checked process sent back results the checker did not write ({type(err).__name__}: "
                   f"{err}): no verdict can rest on them.")
        check = CheckResult("replay-matches", FAIL, message)
        return Report(id=exercise.id, status=FAIL, checks=(check,), graph_breaks=(), message=message, file=path,
                      points=0, max_points=exercise.points, hint=exercise.hints[0], chapter=exercise.chapter,
                      output=trials.outcome.output, seed=str(seed or ""))


def _audited_reference(exercise: Exercise, audit: sandbox.Outcome) -> dict[str, Any]:
    """The reference on the check's draws; RuntimeError when it did not run (a broken course install)."""
    first = audit.results[0] if audit.results else None
    if not isinstance(first, dict) or first.get("stage") != "done":
        raise RuntimeError(f"the reference solution of {exercise.id} does not run: "
                           f"{audit.problem or (first or {}).get('problem')}\n{audit.output}")
    return first


def _decide(exercise: Exercise, path: str, trials: Trials, ref: dict[str, Any], audit: sandbox.Outcome,
            hint_level: int, seed: draws.Seed | None, source: str | None) -> Report:
    eager, fullgraph, default = (trials.payload(mode) for mode in TRIAL_MODES)
    source = source if source is not None else read_source(path)  # read once: three checks read the text
    advice.name_places(path, (eager, fullgraph, default))
    checks: list[CheckResult] = []

    eager_problem = _problem(trials, "eager")
    checks.append(CheckResult("eager-runs", ERROR, eager_problem) if eager_problem
                  else CheckResult("eager-runs", PASS, f"runs without torch.compile on {len(ref['outputs'])} fresh inputs"))
    checks.append(eager_matches(exercise, eager, ref) if not eager_problem
                  else CheckResult("eager-matches", SKIP, "needs the code to run eagerly first"))
    checks.append(_fullgraph_check(trials))
    checks.append(_breaks_check(trials))
    checks.append(compiled_matches(exercise, [trials.payload(mode) for mode in ("default", "fullgraph")], ref))
    checks.append(switched_off_check([trials.payload(mode) for mode in TRIAL_MODES],
                                     source))
    checks += [c for c in (writes_check(trials.outcome.output),) if c]
    if exercise.max_compilations:
        checks.append(_recompile_check(exercise, trials, seed))
    checks.append(_replay_check(trials, audit))
    checks += probe_checks(exercise, trials.all_probes(exercise, seed.trial) if seed else trials.probes,
                           trials.outcome, ref.get("probes"), map(trials.payload, TRIAL_MODES), checks)
    if exercise.contracts:
        payloads = {mode: trials.payload(mode) for mode in TRIAL_MODES}
        verdict = audit.results[1] if len(audit.results) > 1 else None
        checks += contract_checks(exercise, payloads, ref, verdict, source,
                                  _shipped(exercise))

    gate = gate_check(source, _shipped(exercise, always=True),
                      refused := refused_code(trials.outcome.output))
    checks += [gate] if gate.status != PASS else []  # a guard, not part of the task: named only when it fails
    checks += _environment_check(source, exercise.entry)
    breaks = _graph_breaks(default, fullgraph)
    kinds = {c.status for c in checks}  # what was refused at run time fails the file, even where it stopped the import
    status = FAIL if refused else ERROR if ERROR in kinds else FAIL if FAIL in kinds else PASS
    payloads = {mode: trials.payload(mode) for mode in TRIAL_MODES}
    hint = advice.hint_for(exercise, hint_level, payloads, trials.outcome, checks, breaks) if status != PASS else ""
    return Report(
        id=exercise.id, status=status, checks=tuple(checks), graph_breaks=tuple(breaks),
        message=_summary(exercise, status, checks, breaks), file=path,
        points=exercise.points if status == PASS else 0, max_points=exercise.points, hint=hint,
        chapter=exercise.chapter, output=_learner_output(trials), seed=str(seed or ""),
        expected=advice.expected_note(exercise, payloads, checks, breaks) if status != PASS else "",
    )


# --- individual checks -----------------------------------------------------------------------------

def _environment_check(source: str | None, entry: str) -> list[CheckResult]:
    """no-environment-switch, named only when it fails: the traced code picks its path by its inputs and the file's
    constants alone, so the graphs the checked process captured are those of the learner's own program too."""
    problem = environment_problem(source, entry) if source is not None else None
    if not problem or problem == "needs the file to parse first":  # eager-runs says why it does not parse
        return []
    return [CheckResult("no-environment-switch", FAIL, problem[0].upper() + problem[1:])]


def _problem(trials: Trials, mode: str) -> str | None:
    """Why a mode's trial has no usable result, in one paragraph; None when it has one."""
    payload = trials.payload(mode)
    if payload is None:
        stopped_in = TRIAL_MODES[min(len(trials.outcome.results), len(TRIAL_MODES) - 1)]
        if mode != stopped_in:  # the modes are run in order: this one never started
            return f"Not checked: the process stopped in the {stopped_in} run, before this one."
        return f"Your code could not be checked: {trials.outcome.problem}"
    if payload["stage"] == "done":
        error = payload["diagnosis"]["error"]
        if mode == "eager" and error:
            return f"Your code fails without torch.compile too: {_error_text(error)}. Fix that first."
        return None
    error = payload["error"]
    if payload["stage"] == "import":
        return f"The file could not be imported: {_error_text(error)}."
    if payload["stage"] == "entry":
        return error["message"]
    return f"Calling the function stopped the check: {_error_text(error)}."


def _error_text(error: dict[str, Any]) -> str:
    where = f" at {advice.place(error)}" if advice.place(error) else ""
    source = f" (`{error['source_line']}`)" if error.get("source_line") else ""
    first = ((error.get("message") or "").strip().splitlines() or [""])[0]
    cause = error.get("cause")  # what the user's code got wrong, under torch's wrapping
    if cause:
        first += f" {cause}" if first.endswith(":") else f" ({cause})"
    return f"{error['type']}{where}{source}: {first}"


def _fullgraph_check(trials: Trials) -> CheckResult:
    problem = _problem(trials, "fullgraph")
    if problem:
        return CheckResult("fullgraph-compiles", ERROR, problem)
    error = trials.payload("fullgraph")["diagnosis"]["error"]
    if error is None:
        return CheckResult("fullgraph-compiles", PASS, "torch.compile(fullgraph=True) traced it as one graph")
    if error.get("gb_id") or error.get("gb_type"):
        return CheckResult("fullgraph-compiles", FAIL,
                           f"fullgraph=True stopped at a graph break: {error.get('gb_id') or ''} "
                           f"{error['gb_type']}{_at(error)}")
    return CheckResult("fullgraph-compiles", FAIL, f"torch.compile(fullgraph=True) raised {_error_text(error)}")


def _breaks_check(trials: Trials) -> CheckResult:
    problem = _problem(trials, "default")
    if problem:
        return CheckResult("no-graph-breaks", ERROR, problem)
    diagnosis = trials.payload("default")["diagnosis"]
    breaks = diagnosis["graph_breaks"]
    if breaks:
        listed = "; ".join(f"{gb['gb_id'] or ''} {gb['gb_type']}{_at(gb)}" for gb in breaks)
        return CheckResult("no-graph-breaks", FAIL, f"default mode broke the graph {len(breaks)} time(s): {listed}")
    fullgraph = trials.payload("fullgraph")
    stopped = fullgraph["diagnosis"]["error"] if fullgraph and fullgraph["stage"] == "done" else None
    if stopped and (stopped.get("gb_id") or stopped.get("gb_type")):  # fullgraph only stops where default breaks
        return CheckResult("no-graph-breaks", FAIL,
                           f"default mode reported no graph break, but fullgraph=True stopped at "
                           f"{stopped.get('gb_id') or ''} {stopped['gb_type']}{_at(stopped)}: default mode ran that "
                           "part outside any graph (some torch releases skip such a frame without reporting it)")
    if diagnosis["error"]:  # compilation stopped: nothing was switched off, whatever was captured
        return CheckResult("no-graph-breaks", FAIL, f"default mode raised {_error_text(diagnosis['error'])}")
    ops = sum(len(graph["ops"]) for graph in diagnosis["graphs"])
    if ops == 0:
        return CheckResult("no-graph-breaks", FAIL,
                           "no graph with any operation was captured: the function's work ran outside "
                           "torch.compile (is it disabled, skipped or run under another stance?)")
    return CheckResult("no-graph-breaks", PASS,
                       f"zero graph breaks; {len(diagnosis['graphs'])} graph(s) with {ops} operation(s)")


def _recompile_check(exercise: Exercise, trials: Trials, seed: draws.Seed | None) -> CheckResult:
    """Count the graphs the default-mode calls ran: each graph past the first is a recompilation.

    What the checked process reports here only explains; the audit holds the decisive count, since the
    graphs it replays must cover every fresh input with no more than `max_compilations` of them.
    """
    payload = trials.payload("default")
    if _problem(trials, "default") or payload["diagnosis"]["error"]:
        return CheckResult("no-recompilation", SKIP, "needs the function to compile and run first")
    calls = payload["diagnosis"]["calls"]
    fresh = draws.draws(exercise, seed.trial) if seed else []
    order = draws.call_order(len(fresh), seed.trial, "default") if seed else []
    cases_of: dict[int, set[int]] = {}  # graph -> the example cases whose draws ran it
    for number, call in enumerate(calls):
        for graph in call["graphs"]:
            cases_of.setdefault(graph, set()).update([fresh[order[number]].case] if number < len(order) else [])
    limit = exercise.max_compilations
    if len(cases_of) <= limit:
        return CheckResult("no-recompilation", PASS, f"{len(calls)} calls ran {len(cases_of)} compiled graph(s); "
                           f"the exercise allows {limit}")
    # Named by example case, sorted, so that the message is the same whatever order the calls came in.
    shapes = {draw.case: [tuple(a.shape) for a in draw.args if isinstance(a, torch.Tensor)] for draw in fresh}
    if len({tuple(shown) for shown in shapes.values()}) == 1 and next(iter(shapes.values())):
        # One shape for every input: which call met which graph depends on the call order, and no size explains it.
        return CheckResult("no-recompilation", FAIL,
                           f"default mode compiled the function {len(cases_of)} times over {len(calls)} calls, where "
                           f"the exercise allows {limit}, though every input has the shapes "
                           f"{', '.join(map(str, next(iter(shapes.values()))))}. Each graph after the first was "
                           "compiled because a guard of the earlier ones failed, on something other than a size "
                           "(a Python value, a list's length); TORCH_LOGS=\"recompiles\" prints which guard.")
    groups = sorted((sorted(cases) for cases in cases_of.values() if cases), key=lambda cases: cases[0])
    which = "; ".join(("one graph for " if not i else "one for ") + _inputs_text(cases, shapes)
                      for i, cases in enumerate(groups))
    return CheckResult("no-recompilation", FAIL,
                       f"default mode compiled the function {len(cases_of)} times over {len(calls)} calls, where "
                       f"the exercise allows {limit}" + (f": {which}" if which else "") + ". Each graph after the "
                       "first was compiled because a guard of the earlier ones failed; TORCH_LOGS=\"recompiles\" "
                       "prints which guard.")


def _inputs_text(cases: list[int], shapes: dict[int, list[tuple[int, ...]]]) -> str:
    """"input 2 of shape (2, 9, 8)", or "inputs 2, 3 and 4" for several."""
    if len(cases) > 1:
        return f"inputs {', '.join(str(c + 1) for c in cases[:-1])} and {cases[-1] + 1}"
    shown = shapes.get(cases[0])
    return f"input {cases[0] + 1}" + (f" of shape {', '.join(map(str, shown))}" if shown else "")


def _replay_check(trials: Trials, audit: sandbox.Outcome) -> CheckResult:
    default = trials.payload("default")
    if default is None or default.get("stage") != "done" or default["diagnosis"]["error"]:
        return CheckResult("replay-matches", SKIP, "needs the function to compile and run first")
    verdict = audit.results[1] if len(audit.results) > 1 else None
    if not isinstance(verdict, dict):
        return CheckResult("replay-matches", FAIL, "the grader could not replay the captured graphs: "
                           f"{audit.problem or 'the replay sent back nothing'}")
    status = verdict.get("status") if verdict.get("status") in (PASS, FAIL, SKIP) else FAIL
    return CheckResult("replay-matches", status, str(verdict.get("message", "")))


# --- summary ---------------------------------------------------------------------------------------

def _at(record: dict[str, Any]) -> str:
    if not advice.place(record):
        return ""
    source = f": {record['source_line']}" if record.get("source_line") else ""
    return f" at {advice.place(record)}{source}"


def _graph_breaks(default: dict[str, Any] | None, fullgraph: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The breaks a learner should see: default mode's, plus fullgraph's stop when default had none."""
    breaks = [dict(plain_data(gb)) for gb in (default or {}).get("diagnosis", {}).get("graph_breaks", [])]
    fullgraph_error = (fullgraph or {}).get("diagnosis", {}).get("error")
    if fullgraph_error and fullgraph_error.get("gb_type") and not any(
            gb["gb_type"] == fullgraph_error["gb_type"] and gb["line"] == fullgraph_error["line"] for gb in breaks):
        breaks.append({"gb_id": fullgraph_error["gb_id"], "gb_type": fullgraph_error["gb_type"],
                       "explanation": fullgraph_error["message"], "hints": [], "filename": fullgraph_error["filename"],
                       "line": fullgraph_error["line"], "place": fullgraph_error.get("place", ""),
                       "function": "", "source_line": fullgraph_error["source_line"],
                       "count": 1, "mode": "fullgraph"})
    for gb in breaks:
        note = registry.course_note(gb.get("gb_id"))
        gb.setdefault("mode", "default")
        gb["meaning"] = note.meaning if note else gb.get("explanation", "")
        gb["chapter"] = note.chapter if note else ""
        gb["page"] = registry.gb_page(gb.get("gb_id"))
    return breaks


def _summary(exercise: Exercise, status: str, checks: list[CheckResult], breaks: list[dict[str, Any]]) -> str:
    if status == PASS:
        replayed = next((c.status == PASS for c in checks if c.name == "replay-matches"), False)
        return ("Fixed: one graph under fullgraph=True, no graph breaks in default mode, and the same results "
                "as the reference on fresh inputs, " + ("the grader's own replay of the graph included." if replayed
                else "as the sandboxed run shows (the graph calls your file's own code, which the grader cannot "
                "replay)."))
    first = next(c for c in checks if c.status in (ERROR, FAIL))
    if first.name in ("fullgraph-compiles", "no-graph-breaks") and breaks:
        gb = breaks[0]
        note = registry.course_note(gb.get("gb_id"))
        text = f"Graph break {gb.get('gb_id') or ''} ({gb['gb_type']}){_at(gb)}."
        if note:
            text += f" {note.meaning} Usual fixes: {note.fix}"
        return text
    return first.message


def _learner_output(trials: Trials) -> str:
    """What the file printed in its first (eager) trial; the later modes would only repeat it."""
    output, eager = trials.outcome.output, trials.payload("eager")
    end = eager.get("output_end") if eager else None
    return output.encode("utf-8")[:end].decode("utf-8", errors="replace") if end is not None else output


def _shipped(exercise: Exercise, always: bool = False) -> str | None:
    """The exercise file as shipped: for contracts that compare a function with it, and (`always`) for the gate,
    which allows the modules it imports."""
    if not always and not any(c.file_has.startswith("unchanged ") for c in exercise.contracts):
        return None
    return read_source(exercise.original_path) if os.path.isfile(exercise.original_path) else None
