"""The diagnosis engine: run a function eagerly or under torch.compile and account for what happened.

`diagnose(fn, calls, mode)` returns a `Diagnosis`: the graphs Dynamo captured, every graph break with its
registry id, type, explanation, hints and the user's line, the outputs, and the first error. Every face
of the course (book demos, `gbcheck`, notebook `check`, classroom grading) reads this structure; none of
them parses torch's log text.

Graph breaks are Dynamo's, so compilation uses a recording backend that runs the captured graph as is:
it sees every break that inductor would, in a fraction of the time.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import torch
import torch._dynamo
from torch._dynamo import eval_frame as _eval_frame
from torch._dynamo import exc as _dynamo_exc

from checker.dynamo import frames, registry, torch_support
from checker.dynamo.frames import entry_frame as _entry_frame
from checker.dynamo.frames import is_own_code, is_user_file  # noqa: F401 - part of the engine's interface
from checker.dynamo.frames import source_line as _source_line
from checker.dynamo.frames import user_location as _user_location

MODES = ("eager", "default", "fullgraph")

# The engine's own references, taken when it is imported (before any learner code), so that code which
# rebinds torch.compile or set_stance later cannot change what the engine calls.
_compile = torch.compile
_set_stance = torch.compiler.set_stance
_reset = torch._dynamo.reset
_dynamo_config = torch._dynamo.config
_Unsupported = _dynamo_exc.Unsupported


@dataclass(frozen=True)
class GraphBreak:
    """One graph break, as Dynamo reported it, located in the user's code."""

    gb_id: str | None  # registry id, e.g. "GB0170"; None for a type torch does not register
    gb_type: str  # the registry's short type, e.g. "Data-dependent branching"
    explanation: str
    hints: tuple[str, ...]
    filename: str
    line: int
    function: str
    source_line: str  # the user's line of code, stripped
    count: int = 1  # how many times this break (same type, same line) was hit
    # For a break raised while handling another (GB7000 "graph break in loop" and other chained breaks):
    # the earlier breaks behind it, innermost first, each (gb_id, gb_type, explanation).
    causes: tuple[tuple[str | None, str, str], ...] = ()
    # The innermost frame outside torch, the standard library and installed packages on the way to the
    # break: where the user's own code entered the region (file, line, source line); empty if none.
    entry: tuple[str, int, str] = ("", 0, "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def where(self) -> str:
        return frames.place(self.filename, self.line)


@dataclass(frozen=True)
class CapturedGraph:
    """One FX graph that Dynamo handed to the backend."""

    ops: tuple[str, ...]  # the operations it calls, in order
    # The graph itself and the inputs Dynamo handed the backend (for the replay's record; not in to_dict)
    module: Any = field(default=None, compare=False, repr=False)
    example_inputs: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"ops": list(self.ops)}


@dataclass(frozen=True)
class CallError:
    """The first exception a call raised; for a graph break under fullgraph=True, its id and type too."""

    type: str
    message: str
    filename: str | None
    line: int | None
    source_line: str = ""
    gb_id: str | None = None
    gb_type: str | None = None
    cause: str = ""  # the ordinary exception torch raised this one around, in a line ("" when none)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Diagnosis:
    """What happened when the function ran in one mode on every input."""

    mode: str  # one of MODES
    outputs: list[Any] = field(default_factory=list)  # one per call that returned
    error: CallError | None = None
    graphs: list[CapturedGraph] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    # torch._dynamo.config keys whose value differed from the baseline while Dynamo compiled,
    # and compile stances in force then: how a decorator such as config.patch shows itself.
    config_changed: list[str] = field(default_factory=list)
    stances: list[str] = field(default_factory=list)
    # Per call that returned: the graphs (indices into `graphs`) it ran, and which output of its last
    # graph is the value the call returned (None when no graph output is).
    calls: list[dict[str, Any]] = field(default_factory=list)
    # Compiled with dynamic sizes: (call index, the ShapeEnv of a graph that call compiled), whose guards say which
    # sizes the traced code tested (grading/guard_bounds.py); not plain data, so not in to_dict.
    shape_envs: list[tuple[int, Any]] = field(default_factory=list, repr=False)

    @property
    def op_count(self) -> int:
        return sum(len(graph.ops) for graph in self.graphs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "error": self.error.to_dict() if self.error else None,
            "graphs": [graph.to_dict() for graph in self.graphs],
            "graph_breaks": [gb.to_dict() for gb in self.graph_breaks],
            "config_changed": list(self.config_changed),
            "stances": list(self.stances),
            "calls": [dict(call) for call in self.calls],
        }

    def summary(self) -> str:
        """A few lines a person can read: graphs, breaks with their lines, the error."""
        lines = [f"{self.mode}: {len(self.graphs)} graph(s), {self.op_count} op(s), "
                 f"{len(self.graph_breaks)} graph break(s)"]
        for gb in self.graph_breaks:
            times = f" (x{gb.count})" if gb.count > 1 else ""
            lines.append(f"  {gb.gb_id or '?'} {gb.gb_type} at {gb.where}{times}: {gb.source_line}")
        if self.error:
            at = f" at {frames.place(self.error.filename, self.error.line)}" if self.error.filename else ""
            if self.error.gb_type:  # a graph break raised under fullgraph=True: its id and the user's line
                lines.append(f"  error: {self.error.gb_id or '?'} {self.error.gb_type}{at}: {self.error.source_line}")
            else:
                lines.append(f"  error{at}: {self.error.type}: {self.error.message.splitlines()[0] if self.error.message else ''}")
        return "\n".join(lines)

    __str__ = summary


# --- recording -------------------------------------------------------------------------------------

class Recording:
    """Collects what Dynamo reports while it is active (see `recording()`)."""

    def __init__(self, focus_file: str | None, config_baseline: dict[str, Any] | None):
        self.focus_file = focus_file
        self.config_baseline = config_baseline
        self.graphs: list[CapturedGraph] = []
        self.breaks: dict[tuple[str, str, int], GraphBreak] = {}
        self.config_changed: set[str] = set()
        self.stances: set[str] = set()
        self.ran: list[tuple[int, Any]] = []  # (graph index, its outputs) for each graph run, in order
        self.call = 0  # the index of the call running now
        self.shape_envs: list[tuple[int, Any]] = []  # (call, ShapeEnv) of each graph compiled with symbolic sizes

    def backend(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        ops = tuple(_op_name(node) for node in gm.graph.nodes
                    if node.op in ("call_function", "call_method", "call_module"))
        index = len(self.graphs)
        self.graphs.append(CapturedGraph(ops=ops, module=gm, example_inputs=tuple(example_inputs)))
        fake = torch._guards.detect_fake_mode(example_inputs)
        if fake is not None and fake.shape_env is not None and fake.shape_env.var_to_sources:
            self.shape_envs.append((self.call, fake.shape_env))
        self._note_compile_state()
        forward, ran = gm.forward, self.ran

        def run(*args: Any) -> Any:
            outputs = forward(*args)
            ran.append((index, outputs))
            return outputs
        return run

    def on_graph_break(self, event: torch_support.BreakEvent) -> None:
        self._note_compile_state()
        gb_type, explanation, hints = event.gb_type, event.explanation, event.hints
        filename, line, function = _user_location(event.stack, self.focus_file, event.frame)
        key = (gb_type, filename, line)
        previous = self.breaks.get(key)
        self.breaks[key] = GraphBreak(
            gb_id=registry.gb_id_for(gb_type), gb_type=gb_type, explanation=explanation, hints=hints,
            filename=filename, line=line, function=function, source_line=_source_line(filename, line),
            count=previous.count + 1 if previous else 1,
            causes=previous.causes if previous else _earlier_breaks(event.exc),
            entry=previous.entry if previous else _entry_frame(event.stack),
        )

    def graph_breaks(self) -> list[GraphBreak]:
        return _merge_library_echoes(list(self.breaks.values()), self.focus_file)

    def _note_compile_state(self) -> None:
        self.stances.add(_eval_frame._stance.stance)
        if self.config_baseline is not None:
            self.config_changed |= config_differences(self.config_baseline)


_active: list[Recording] = []
_hooks_installed = False


def _install_hooks() -> None:
    """Observe Dynamo's graph-break reports, skip its metrics bookkeeping. Once per process, before learner code.

    Where the reports come from differs between torch releases; torch_support finds the hook points.
    """
    global _hooks_installed
    if _hooks_installed:
        return
    torch_support.install_graph_break_hooks(lambda event: _active[-1].on_graph_break(event), lambda: bool(_active))
    # Two pieces of bookkeeping Dynamo does after every compile, for metrics logs: it times the guards,
    # first flushing the CPU caches by writing a large buffer, and it assembles a record that serializes
    # every config module. Together about a quarter of a small compile, and page faults in every forked
    # check. Skipped unless a structured trace (TORCH_TRACE, read by tlparse) asks for them. A metrics
    # context made before this runs keeps the real recorder.
    if not os.environ.get("TORCH_TRACE"):
        torch_support.skip_metrics_bookkeeping()
    _hooks_installed = True


def config_snapshot() -> dict[str, Any]:
    """A copy of torch._dynamo.config to compare against later."""
    return dict(_dynamo_config.get_config_copy())


def config_differences(baseline: dict[str, Any], config: Any = _dynamo_config) -> set[str]:
    """Keys of a config module (torch._dynamo.config by default) whose current value differs from `baseline`."""
    current = config.get_config_copy()
    changed = set()
    for key in set(baseline) | set(current):
        try:
            if baseline.get(key) != current.get(key):
                changed.add(key)
        except Exception:  # a value that cannot be compared counts as changed
            changed.add(key)
    return changed


@contextlib.contextmanager
def recording(focus_file: str | None = None, config_baseline: dict[str, Any] | None = None):
    """Record every graph break Dynamo reports inside the block, from any torch.compile call.

    Yields the Recording; compile with `backend=rec.backend` to count graphs too.
    """
    rec = Recording(focus_file, config_baseline)
    _active.append(rec)
    try:
        yield rec
    finally:
        _active.remove(rec)


# --- running ---------------------------------------------------------------------------------------

def diagnose(fn: Callable[..., Any], calls: Iterable[tuple[tuple[Any, ...], dict[str, Any]]] | tuple[Any, ...],
             mode: str = "default", *, focus_file: str | None = None,
             config_baseline: dict[str, Any] | None = None,
             around: Callable[[int], Any] | None = None, dynamic: bool | None = None) -> Diagnosis:
    """Run `fn` on every call in `mode` and account for graphs, graph breaks, outputs and errors.

    `calls` is a list of (args, kwargs) pairs, or a plain tuple of positional arguments for one call.
    mode: "eager" runs fn under set_stance("force_eager"); "default" compiles with fullgraph=False (breaks
    are recorded, the program goes on); "fullgraph" compiles with fullgraph=True (a break is an error).
    `focus_file` is the file whose lines a break should point at (the learner's); by default the
    innermost frame outside torch. Calls stop at the first error. `around(i)`, where given, is a context manager
    the i-th call runs in (the checker runs some calls as an evaluation loop does). `dynamic`: torch.compile's own
    (True: every size a symbol from the first call, its tests guards the diagnosis keeps in `shape_envs`).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if isinstance(calls, tuple):
        calls = [(calls, {})]
    diagnosis = Diagnosis(mode=mode)
    if dynamic and config_baseline is not None:  # what torch.compile(dynamic=True) sets itself while it compiles
        config_baseline = {**config_baseline, "assume_static_by_default": False}
    _reset()
    with recording(focus_file, config_baseline) as rec:
        runner = fn if mode == "eager" else _compile(fn, backend=rec.backend, fullgraph=(mode == "fullgraph"),
                                                     dynamic=dynamic)
        for index, (args, kwargs) in enumerate(calls):
            rec.call = index
            try:
                with _set_stance("force_eager") if mode == "eager" else contextlib.nullcontext(), \
                        around(index) if around else contextlib.nullcontext():
                    diagnosis.outputs.append(runner(*args, **kwargs))
            except Exception as err:  # the learner's error is data here, not a crash
                diagnosis.error = call_error(err, focus_file)
                break
            finally:
                ran, rec.ran[:] = list(rec.ran), []
            if mode != "eager":
                diagnosis.calls.append(_graphs_of_call(ran, diagnosis.outputs[-1]))
    _reset()
    diagnosis.graphs = rec.graphs
    diagnosis.graph_breaks = rec.graph_breaks()
    diagnosis.shape_envs = rec.shape_envs
    diagnosis.config_changed = sorted(rec.config_changed)
    diagnosis.stances = sorted(rec.stances)
    return diagnosis


def _graphs_of_call(ran: list[tuple[int, Any]], returned: Any) -> dict[str, Any]:
    """Which graphs one call ran, and which output of the last one it returned (by identity)."""
    outputs = ran[-1][1] if ran else ()
    position = next((i for i, out in enumerate(outputs if isinstance(outputs, (list, tuple)) else ())
                     if out is returned), None)
    return {"graphs": [index for index, _ in ran], "returned": position}


def _merge_library_echoes(breaks: list[GraphBreak], focus_file: str | None) -> list[GraphBreak]:
    """Fold a break reported again from inside library code into the user's break of the same type.

    After a break at `logger.info(...)`, Dynamo traces `Logger.info` itself as a new frame and breaks
    there too: one cause, two reports. The learner's line is the one to show; the echo adds to its count.
    """
    def in_user_code(gb: GraphBreak) -> bool:
        if focus_file:
            return os.path.realpath(gb.filename) == os.path.realpath(focus_file)
        return is_user_file(gb.filename)

    user = [gb for gb in breaks if in_user_code(gb)]
    user_types = {gb.gb_type for gb in user}
    echoes: dict[str, int] = {}
    kept = []
    for gb in breaks:
        if gb not in user and gb.gb_type in user_types:
            echoes[gb.gb_type] = echoes.get(gb.gb_type, 0) + gb.count
        else:
            kept.append(gb)
    result = []
    for gb in kept:
        extra = echoes.pop(gb.gb_type, 0) if gb in user else 0
        result.append(replace(gb, count=gb.count + extra) if extra else gb)
    return result


def _earlier_breaks(exc: BaseException | None) -> tuple[tuple[str | None, str, str], ...]:
    """The breaks a chained break was raised while handling (Python's implicit exception context)."""
    found = []
    inner = (exc.__context__ or exc.__cause__) if exc is not None else None
    while isinstance(inner, _Unsupported) and len(found) < 8:
        gb_type, explanation, _ = torch_support.message_parts(inner)
        gb_type = gb_type or type(inner).__name__
        found.append((registry.gb_id_for(gb_type), gb_type, explanation))
        inner = inner.__context__ or inner.__cause__
    return tuple(reversed(found))


def call_error(err: BaseException, focus_file: str | None) -> CallError:
    gb_type = torch_support.gb_type_of(err) if isinstance(err, _Unsupported) else None
    filename, line = frames.error_location(err, focus_file)  # never a line of torch's own
    message = str(err)
    if gb_type:  # torch's message starts with the type; its first line is enough here
        message = torch_support.message_parts(err)[1] or message.splitlines()[0]
    return CallError(type=type(err).__name__, message=message, filename=filename, line=line,
                     source_line=_source_line(filename, line), gb_id=registry.gb_id_for(gb_type) if gb_type else None,
                     gb_type=gb_type, cause=frames.wrapped_cause(err))


def _op_name(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    return getattr(target, "__name__", None) or str(target)


_warmed_up = False


def warm_up() -> None:
    """Trace a small function once in every mode, so that forked children start with Dynamo warm.

    Dynamo imports and caches a good deal lazily on first use; doing that once in the grader, before it
    forks, makes each check several times faster. Runs at most once per process.
    """
    global _warmed_up
    if _warmed_up:
        return
    _warmed_up = True

    def sample(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        y = torch.cond(x.sum() > 0, lambda a: a + 1, lambda a: a - 1, (x,))
        if y.mean() > 0:  # a data-dependent branch: a graph break
            y = y * scale.item()
        return y.nonzero().float().sum() + y.sum()

    quiet = logging.getLogger("torch._dynamo")  # the warm-up's own breaks are nobody's business
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        for mode in MODES:
            diagnose(sample, (torch.ones(4), torch.ones(())), mode)
        # with dynamic sizes too, as the checker's fullgraph trial compiles: symbolic shapes warm up on their own
        diagnose(sample, [((torch.ones(4), torch.ones(())), {})], "default", dynamic=True)
    finally:
        quiet.setLevel(level)


# Hooks go in when the engine is imported, so they are part of the state the tamper check records
# before learner code runs.
_install_hooks()
