"""The grader's own run: the reference on the check's draws, and the replay of the submission's graphs.

An audit runs after the checked process has ended, in the grader itself (`audit_here`) or in a sandboxed
process forked from the grader (`run_audit` as a job): where the exercise's solution registers an operator
that must not outlive the check, and in a grader that forks more checks afterwards (a class, Gradescope, a
grader that stays up), so that no reference is in the memory those checks are forked from. Neither ever imports the learner's file: the audit imports the
exercise's solution (course code) to compute the reference, draws the replay inputs from the replay
seed (drawn by the grader once the trial was over), and rebuilds and replays the graphs the trial
recorded (replay.py explains why that is the decisive check). It returns plain data.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Iterator
from typing import Any

import torch

from checker.course import draws
from checker.course.manifest import Exercise
from checker.grading import allowed, dependence, reference, replay, sandbox
from checker.grading.plain import fresh_copy, output_difference, plain
from checker.grading.trial import TRIAL_MODES, ProcessState

REPLAY_DRAWS_PER_CASE = 2


def run_audit(exercise: Exercise, seed: draws.Seed, default_trial: Any,
              on_trial: dict[str, Any] | None = None, probes: tuple[draws.Draw, ...] = ()) -> Iterator[dict[str, Any]]:
    """Yields the reference on the trial draws (`on_trial`: as `reference_on_trial` made it already), with its
    output on each of `probes` ("probes": reference.probe_outputs), then the replay's verdict. The reference comes
    first, so that a recorded graph that crashes its replay leaves it standing."""
    on_trial = on_trial or reference_on_trial(exercise, seed.trial)
    trial_draws = draws.draws(exercise, seed.trial)
    replay_draws = draws.draws(exercise, seed.replay, REPLAY_DRAWS_PER_CASE, replay=True, domain_seed=seed.trial)
    unseen = draws.unseen_sizes(exercise, trial_draws, seed.replay, beyond=_largest_bound(default_trial),
                                domain_seed=seed.trial)
    if on_trial.get("stage") == "done":
        try:
            expected = reference.outputs(exercise, replay_draws)
            unseen_expected = reference.outputs(exercise, unseen)
            on_trial = {**on_trial, "probes": reference.probe_outputs(exercise, list(probes)) if probes else []}
        except Exception as err:  # noqa: BLE001 - a reference that does not run is a broken course, said by the caller
            on_trial = {"stage": "broken", "problem": f"{type(err).__name__}: {err}"}
    yield on_trial
    if on_trial.get("stage") != "done":
        return
    try:
        yield judge(exercise, default_trial, on_trial["orders"]["default"], trial_draws, replay_draws, expected,
                    draws.call_order(len(replay_draws), seed.replay, "replay"), list(zip(unseen, unseen_expected)))
    except replay.NotReplayable as err:
        yield {"status": "skip", "message": f"not applicable: {err}, and its graphs cannot be replayed without "
               "the file's own code; this verdict rests on the sandboxed run on fresh inputs"}
    except replay.Refused as err:
        yield {"status": "fail", "message": f"{err}."}


def reference_on_trial(exercise: Exercise, trial_seed: int) -> dict[str, Any]:
    """The reference on the trial draws, which the trial seed alone decides (so the grader may run it while the
    trial does): {"stage", "outputs" (one per trial draw), "inputs_after" (its tensor inputs as the reference's
    call left them, per trial draw), "gradients" (observe.call_gradients, per trial draw), "cases", "observed"
    (what the reference does for each mode's behaviour contracts), "orders", "untrained"}, or {"stage": "broken",
    "problem"}."""
    trial_draws = draws.draws(exercise, trial_seed)
    orders = {mode: draws.call_order(len(trial_draws), trial_seed, mode) for mode in TRIAL_MODES}
    try:
        left: list[Any] = []
        outputs = reference.outputs(exercise, [trial_draws[i] for i in orders["default"]], left)
        untrained = draws.untrained_calls(len(orders["eager"]), trial_seed)
        observed = reference.observations(exercise, trial_draws, orders, untrained)
        gradients = reference.gradients(exercise, trial_draws)
    except Exception as err:  # noqa: BLE001 - a reference that does not run is a broken course, said by the caller
        return {"stage": "broken", "problem": f"{type(err).__name__}: {err}"}
    by_draw: dict[int, Any] = {}
    for draw, output, inputs in zip(orders["default"], outputs, left):
        by_draw.setdefault(draw, (output, inputs))
    return {"stage": "done", "outputs": [by_draw[i][0] for i in range(len(trial_draws))],
            "inputs_after": [by_draw[i][1] for i in range(len(trial_draws))], "gradients": gradients,
            "cases": [d.case for d in trial_draws], "observed": observed, "orders": orders,
            "untrained": sorted(untrained)}


def _largest_bound(trial: Any) -> int:
    """The largest integer among the recorded graphs' arguments (a padding bound, a loop's fixed length) and the
    sizes of the constant tensors they hold (a table sliced to each input's length); 0."""
    records = (trial.get("graphs") if isinstance(trial, dict) else None) or []
    todo: list[Any] = [node for record in records if isinstance(record, dict) and isinstance(record.get("nodes"), list)
                       for node in record["nodes"]]
    found = 0
    while todo:
        value = todo.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            found = max(found, value)
        elif isinstance(value, list):
            todo.extend(value)
        elif isinstance(value, torch.Tensor):
            found = max(found, *value.shape, 0)
        elif isinstance(value, dict):
            todo.extend(value[key] for key in ("args", "kwargs", "tuple", "list", "dict", "slice") if key in value)
            constant = value.get("input")
            if isinstance(constant, dict) and constant.get("kind") == "value":
                todo.append(constant.get("value"))
        elif isinstance(value, tuple):
            todo.extend(value)
    return found


def audit_here(exercise: Exercise, seed: draws.Seed, default_trial: Any, on_trial: dict[str, Any] | None = None,
               probes: tuple[draws.Draw, ...] = ()) -> sandbox.Outcome:
    """The audit in this process (the grader, which never imports learner code), as a sandbox outcome;
    `on_trial`: the reference on the trial draws, made already (`reference_here`).

    A fork per check would cost a quarter of the check again; the replay runs only allow-listed torch
    operations on data, so what a recorded graph can still do here is waste time or memory. Settings
    the reference or a replayed operation change (grad mode, configs, RNG) are put back.
    """
    started, results, state = time.monotonic(), [], ProcessState.save()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for part in run_audit(exercise, seed, default_trial, on_trial, probes):
                results.append(part)
    except Exception as err:  # noqa: BLE001 - whatever a recorded graph does here is a finding about it
        results.append({"status": "fail", "message": f"the grader's replay of the graph stopped: "
                        f"{type(err).__name__}: {str(err)[:300]}"})
    finally:
        state.restore()
    return sandbox.Outcome(results=results, complete=len(results) == 2, output="", exit_code=0, signal_number=None,
                           timed_out=False, seconds=time.monotonic() - started)


def reference_here(exercise: Exercise, trial_seed: int) -> dict[str, Any]:
    """`reference_on_trial` in this process, quietly, with the settings the reference changes put back: what a
    grader that audits itself runs while the trial does (the trial seed is all it needs)."""
    state = ProcessState.save()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return reference_on_trial(exercise, trial_seed)
    finally:
        state.restore()


def judge(exercise: Exercise, trial: Any, order: list[int], trial_draws: list[draws.Draw],
          replay_draws: list[draws.Draw], expected: list[Any], replay_order: list[int] | None = None,
          unseen: list[tuple[draws.Draw, Any]] = ()) -> dict[str, str]:
    """Rebuild the recorded graphs and replay them (steps 3 and 4 of replay.py's docstring).

    Every replayed call gets a graph rebuilt for it (its constants copied), in `replay_order`, a shuffle
    of the replay draws with repeats drawn by the grader after the checked process ended; the process's
    flags must be as they were after each call. So no state survives from one call to the next for a graph
    to count calls with."""
    if not isinstance(trial, dict) or trial.get("stage") != "done":
        return {"status": "skip", "message": "needs the function to compile and run first"}
    records, calls = trial.get("graphs"), (trial.get("diagnosis") or {}).get("calls")
    if not isinstance(records, list) or not isinstance(calls, list) or len(calls) != len(order):
        return {"status": "fail", "message": "the checked process sent back no record of the graphs its calls "
                "ran: nothing shows that the function was compiled at all"}
    claimed: dict[tuple, set[tuple[int, Any]]] = {}  # signature -> (graph, returned output) its calls used
    for number, (draw, call) in enumerate(zip(order, calls)):
        ran = call.get("graphs") if isinstance(call, dict) else None
        if not isinstance(ran, list) or len(ran) != 1 or not isinstance(ran[0], int) or not 0 <= ran[0] < len(records):
            count = len(ran) if isinstance(ran, list) else 0
            return {"status": "fail", "message": f"call {number + 1} ran {count} captured graphs, not one: "
                    + ("the function's work ran outside any graph" if count == 0 else
                       "the function was split into several graphs (a graph break, whatever else was reported)")}
        claimed.setdefault(draws.signature(trial_draws[draw]), set()).add((ran[0], call.get("returned")))
    used = sorted({g for pairs in claimed.values() for g, _ in pairs})
    if exercise.max_compilations and len(used) > exercise.max_compilations:
        return {"status": "fail", "message": f"the calls ran {len(used)} different captured graphs, where this "
                f"exercise allows {exercise.max_compilations}: the function was compiled again for new inputs"}
    operator = _reference_step(exercise)
    stand_ins = {"operator": operator, "vendored": _vendored_code(exercise)}  # the reference's, for the file's
    rebuilt: dict[int, tuple] = {}
    for graph_index in used:
        record = records[graph_index]
        try:
            if isinstance(record, dict) and "unreplayable" in record:
                raise replay.NotReplayable(f"the graph holds {record['unreplayable']}")
            rebuilt[graph_index] = replay.rebuild(record, **stand_ins)
        except replay.NotReplayable as err:
            if exercise.opaque_calls and not exercise.opaque_step:
                raise
            if exercise.opaque_step:
                return {"status": "fail", "message": f"{err}: code of your file the grader cannot put its reference "
                        f"in for; this exercise's fix makes `{exercise.opaque_step}` a torch.library operator, which "
                        "the grader replays as its own"}
            return {"status": "fail", "message": f"{err}: code the grader cannot replay without your file, and "
                    "this exercise's fix needs none (is the function hidden behind an operator of its own?)"}
        forbidden = _forbidden(exercise, rebuilt[graph_index][2])
        if forbidden:
            return {"status": "fail", "message": f"the graph calls {forbidden}, which this exercise's fix removes"}
    parameters = trial.get("parameters") if isinstance(trial.get("parameters"), list) else []
    replayed, failures = 0, {}  # the first input in the manifest's order is reported, whatever the call order
    for number in (range(len(replay_draws)) if replay_order is None else replay_order):
        draw, want = replay_draws[number], expected[number]
        pairs = claimed.get(draws.signature(draw))
        if not pairs:
            failures.setdefault(number, f"no captured graph covers calls like fresh input {number + 1} "
                                f"({_note(exercise, draw)})")
            continue
        for graph_index, returned in sorted(pairs, key=repr):
            module, values = _fresh_graph(records[graph_index], stand_ins, parameters, draw)
            before = _process_flags()
            problem = _replay_one(exercise, module, values, returned, want)
            if not problem and _process_flags() != before:
                problem = "changed a process-wide setting, which a fix's graph never does"
            if problem:
                failures.setdefault(number, f"the captured graph, replayed by the grader on an input drawn after "
                                    f"your code had finished ({_note(exercise, draw)}), {problem}" + (
                                        f" (the grader runs the reference's `{exercise.opaque_step}` in place of your "
                                        f"operator, which must take and return what `{exercise.opaque_step}` does)"
                                        if operator is not None else ""))
                break
            replayed += 1
    if failures:
        return {"status": "fail", "message": failures[min(failures)]}
    problem = _unseen_problem(exercise, records, claimed, unseen, parameters, stand_ins)
    if problem:
        return {"status": "fail", "message": problem}
    replayed += len(unseen)
    for graph_index, (module, inputs, _) in rebuilt.items():
        allowed = {"scalar"} if "capture_scalar_outputs" in exercise.allowed_config else set()
        allowed |= {"shape"} if "capture_dynamic_output_shape_ops" in exercise.allowed_config else set()
        if not replay.data_dependence(records[graph_index]) - allowed:
            continue  # nothing default mode could break on here
        draw = next(d for d in replay_draws if any(g == graph_index for g, _ in claimed.get(draws.signature(d), ())))
        surely = replay.data_dependence(records[graph_index], surely=True) - allowed
        problem = _default_mode_problem(exercise, module, replay.graph_inputs(inputs, parameters, draw.args, draw.kwargs),
                                        surely)
        if problem:
            return {"status": "fail", "message": problem}
    called = sorted({str(name) for _, _, names in rebuilt.values() for name in names})
    moved = set()  # the scalar reads whose value the result follows (dependence.py)
    selections = [c.graph_holds.split(">") for c in exercise.contracts if ">" in (c.graph_holds or "")]
    selected = {f"{a}>{b}" for a, b in selections}  # `a>b` whose b works on what a selects, in every graph with a b
    for graph_index, (module, inputs, names) in rebuilt.items():
        calls = [replay.graph_inputs(inputs, parameters, d.args, d.kwargs) for d in replay_draws
                 if any(g == graph_index for g, _ in claimed.get(draws.signature(d), ()))]
        if {replay.op_name(name) for name in names} & set(dependence.MOVED):
            moved |= dependence.moved_reads(records[graph_index], stand_ins, calls)
        selected -= {f"{a}>{b}" for a, b in selections if b in {replay.op_name(name) for name in names}
                     and not dependence.works_on_selected(records[graph_index], stand_ins, calls, a, b)}
    mine = replay.file_operators(set(called))
    standing = (f", with the reference's `{exercise.opaque_step}` in place of your operator {mine[0]}"
                if operator is not None and mine else "")
    copies = sorted({name.removeprefix("vendored:") for name in called if name.startswith("vendored:")}
                    & set(stand_ins["vendored"]))
    if copies:
        standing += (f", with the reference's copy of {', '.join(f'`{name}`' for name in copies)} for what the graph "
                     "calls unread (the file's copy is held to the same text)")
    return {"status": "pass", "message": f"the grader rebuilt the {len(rebuilt)} captured graph(s) and replayed "
            f"them {replayed} times on inputs drawn after your code had finished{standing}: they compute the reference",
            "called": called, "moved": sorted(moved),
            "fed": dependence.merged_feeders([records[index] for index in rebuilt]), "selected": sorted(selected),
            "copies": max((replay.most_copies(records[index]) for index in rebuilt), default=(0, "")),
            "holds": sorted({name for index in rebuilt for name in replay.live_targets(records[index])})}


def _reference_step(exercise: Exercise) -> Any:
    """The solution's function an operator exercise's operator stands for (None for other exercises)."""
    if not exercise.opaque_step:
        return None
    step = getattr(reference.solution_module(exercise), exercise.opaque_step)
    return getattr(step, "_opoverload", step)  # a torch.library.custom_op: its operator, which FX can call


def _vendored_code(exercise: Exercise) -> dict[str, Any]:
    """The reference's copies of the code the file may not change (its `unchanged` contracts), by name: what
    a call an escape hatch put in the graph unread (nonstrict_trace, allow_in_graph) is replayed with. The
    contract holds the file's copy to the same text, which the grader reads itself."""
    names = [c.file_has.split()[1] for c in exercise.contracts
             if c.kind == "structure" and c.file_has.startswith("unchanged ")]
    module = reference.solution_module(exercise) if names else None
    return {name: getattr(module, name) for name in names if hasattr(module, name)}


def _fresh_graph(record: Any, stand_ins: dict[str, Any], parameters: list,
                 draw: draws.Draw) -> tuple[torch.fx.GraphModule, list]:
    """A graph rebuilt for one replayed call (nothing kept from an earlier one) and fresh copies of its inputs."""
    module, inputs, _ = replay.rebuild(record, **stand_ins)
    return module, [fresh_copy(v) for v in replay.graph_inputs(inputs, parameters, draw.args, draw.kwargs)]


def _unseen_problem(exercise: Exercise, records: list, claimed: dict[tuple, set[tuple[int, Any]]],
                    unseen: list[tuple[draws.Draw, Any]], parameters: list, stand_ins: dict[str, Any]) -> str | None:
    """An exercise about recompilation: the graph that served the most sizes (the dynamic one, compiled for
    every size after the first) must compute the reference at sizes no trial call had (draws.unseen_sizes)."""
    if not unseen:
        return None
    served: dict[int, int] = {}
    returned: dict[int, Any] = {}
    for pairs in claimed.values():
        for graph_index, result in sorted(pairs, key=repr):
            returned.setdefault(graph_index, result)
        for graph_index in {g for g, _ in pairs}:
            served[graph_index] = served.get(graph_index, 0) + 1
    graph_index = max(served, key=lambda g: (served[g], g))
    for draw, want in unseen:
        module, values = _fresh_graph(records[graph_index], stand_ins, parameters, draw)
        shapes = ", ".join(str(list(a.shape)) for a in draw.args if isinstance(a, torch.Tensor))
        try:
            problem = _replay_one(exercise, module, values, returned[graph_index], want)
        except Exception as err:  # noqa: BLE001 - a graph that cannot run at a new size is the finding
            problem = f"raised {type(err).__name__}: {str(err)[:200]}"
        if problem:
            return (f"the captured graph that served calls of {served[graph_index]} different sizes, replayed by "
                    f"the grader at a size no call of the check had (input of shape {shapes}), {problem}: it "
                    "computes the reference only at the sizes it was called with")
    return None


def _replay_one(exercise: Exercise, module: torch.fx.GraphModule, values: list[Any], returned: Any,
                want: Any) -> str | None:
    try:
        with allowed.contained():  # grad mode, inference mode and autocast end with the call
            outputs = module(*values)
    except replay.Refused:
        raise
    except Exception as err:  # noqa: BLE001 - a recorded graph that does not run is a finding, not a crash
        return f"raised {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    outputs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
    if not isinstance(returned, int) or not 0 <= returned < len(outputs):
        return "does not return the function's result"
    difference = output_difference(plain(outputs[returned]), want, exercise.rtol, exercise.atol)
    return f"computes something else than the reference: {difference}" if difference else None


def _process_flags() -> tuple[Any, ...]:
    """Process-wide settings a graph could keep a count in (its RNG is put back by the audit's caller)."""
    return (torch.is_grad_enabled(), torch.is_inference_mode_enabled(), torch.get_default_dtype(),
            torch.are_deterministic_algorithms_enabled(), torch.get_float32_matmul_precision(),
            torch.is_warn_always_enabled(), torch.is_autocast_enabled("cpu"), torch.get_num_threads())


def _forbidden(exercise: Exercise, called: set[str]) -> str:
    return ", ".join(sorted({replay.op_name(name) for name in called} & set(exercise.forbidden_ops)))


def _default_mode_problem(exercise: Exercise, module: torch.fx.GraphModule, values: list[Any],
                          surely: set[str] = frozenset({"scalar"})) -> str | None:
    """Run the graph on fake tensors with the data-dependent operations default mode allows this exercise.

    An operation fake tensors of this release cannot run (a shape-generic kernel of torch 2.8, an operator
    without a fake implementation) gets its real value, made fake, and the run goes on: what follows it is
    still run as default mode would (an unused `geqrf` once hid a boolean mask after it). Nothing stands in
    for a data-dependent operation, a branch or loop of torch.cond or while_loop, or an indexing where the
    record surely holds something data-dependent: the graph fails there (fail closed)."""
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException, FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    shape_env = ShapeEnv(allow_scalar_outputs="capture_scalar_outputs" in exercise.allowed_config,
                         allow_dynamic_output_shape_ops="capture_dynamic_output_shape_ops" in exercise.allowed_config)
    mode = FakeTensorMode(shape_env=shape_env, allow_non_fake_inputs=True)
    fake = [mode.from_tensor(v) if isinstance(v, torch.Tensor) else v for v in values]
    real = _NodeByNode(module, garbage_collect_values=False)  # each node's real value, to stand in (below)
    try:
        with allowed.contained(), torch.no_grad():
            real.run(*[fresh_copy(v) for v in values])
    except Exception:  # noqa: BLE001 - the real replay has run it already; without values nothing stands in
        real.env = {}
    run = _NodeByNode(module, stand_ins=real.env, mode=mode, lenient=not surely)
    try:
        with mode, allowed.contained():
            run.run(*fake)
    except DataDependentOutputException:
        return ("the graph reads a tensor's value as a Python number (.item() or alike), which default mode "
                "breaks on unless capture_scalar_outputs is set, and this exercise does not allow it")
    except DynamicOutputShapeException:
        return ("the graph holds an operation whose output shape depends on the data (nonzero, a boolean mask), "
                "which default mode breaks on: this exercise's fix keeps shapes fixed")
    except Exception as err:  # noqa: BLE001 - an operation nothing may stand in for (see _NodeByNode)
        return (f"the grader could not run the captured graph on fake tensors, as default mode traces it "
                f"({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}): nothing shows "
                "that default mode compiles it without a break")
    return None


class _NodeByNode(torch.fx.Interpreter):
    """Runs a graph node by node; in the fake run, a node whose fake run raises may take its real value."""

    def __init__(self, module: torch.fx.GraphModule, stand_ins: dict | None = None, mode: Any = None,
                 lenient: bool = False, **options: Any):
        super().__init__(module, **options)
        self.stand_ins, self.mode, self.lenient = stand_ins or {}, mode, lenient

    def run_node(self, n: torch.fx.Node) -> Any:
        from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

        try:
            return super().run_node(n)
        except (DataDependentOutputException, DynamicOutputShapeException):
            raise
        except Exception as err:
            cause = _data_dependent_cause(err, (DataDependentOutputException, DynamicOutputShapeException))
            if cause is not None:
                raise cause from None
            if n not in self.stand_ins or not self._may_stand_in(n):
                raise
            return torch.utils._pytree.tree_map_only(torch.Tensor, self.mode.from_tensor, self.stand_ins[n])

    def _may_stand_in(self, n: torch.fx.Node) -> bool:
        if n.op not in ("call_function", "call_method") or isinstance(n.target, torch._ops.HigherOrderOperator):
            return False
        if replay.reads_data(n.target):
            return False
        return self.lenient or not replay.is_indexing(n.target)


def _data_dependent_cause(err: BaseException, kinds: tuple) -> BaseException | None:
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, kinds):
            return err
        err = err.__cause__ or err.__context__
    return None


def _note(exercise: Exercise, draw: draws.Draw) -> str:
    case = exercise.inputs[draw.case]
    wide = " from the replay's wider generators (values far past the examples')" if (
        case.replay_args or case.replay_kwargs) else ""
    return f"a fresh draw of input {draw.case + 1}{wide}" + (f": {case.note}" if case.note else "")
