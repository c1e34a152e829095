"""Probes past a file's own bounds: inputs larger than the draws, or in float64, where the file could take
another path (`past-the-bounds`).

The draws keep each example's shapes and dtypes (draws.py), so a path taken only above a size (`if n > 4096:`) or
for another dtype (`if x.dtype == torch.float64:`) is never called in the checked process: a break kept there, or a
fix that is wrong only there, would pass. Two readings find such paths:
  - the grader's, of the file's text, before the trial (`probes_for`): the integers it compares, slices, indexes or
    clamps with, names bound to integer constants followed (`bounds_in`), and whether it tests a dtype;
  - the fullgraph trial's, of Dynamo's shape guards (guard_bounds.py: compiled with dynamic sizes, every test of a
    size is a guard, however the bound was written or computed).
The trial calls the entry past each (draws.probe_draws, draws.guarded_draws) in every mode, and in float64 (eagerly
alone, where the file tests no dtype); the grader computes the reference on the same draws after the checked
process ended. A probe the reference cannot run (a size the exercise's model does not take) asks nothing; on the
others, the file must return what the reference does, in every mode, in one graph.

What this does not see: a path changed by a size with no guard of its own and no bound in the text (a `SymBool`
kept in the graph as arithmetic), a pinned size's path between one past it and guard_bounds.PINNED_FAR, sizes
past draws.PROBE_ELEMENTS_AT_MOST elements, dtypes other than float64, and sizes passed as plain integers.
"""

from __future__ import annotations

import ast
from typing import Any

from checker.course.draws import Draw, guarded_draws, probe_draws, probe_order
from checker.course.manifest import Exercise
from checker.grading.plain import output_difference
from checker.grading.report import FAIL, PASS, CheckResult
from checker.grading.trial import TRIAL_MODES

NAME = "past-the-bounds"
PROBE_SIZE_AT_MOST = 1 << 16  # a bound above this is not probed: the inputs past it would be too large

_CLAMPING = {"min", "max", "clamp", "clip", "clamp_min", "clamp_max", "minimum", "maximum", "narrow",
             "bisect", "bisect_left", "bisect_right", "searchsorted"}
# A floating dtype by name, or a cast to one (`torch.float64`, `.half()`): where a file names none, no path of it can
# tell float32 from another floating dtype but by reading `.dtype` in a test.
_FLOAT_TYPES = {"float64", "double", "float32", "float", "float16", "half", "bfloat16", "finfo"}


def bounds_in(source: str | None) -> tuple[int, ...]:
    """The integers the file's text tests a value against: every integer constant (or constant expression) inside
    a comparison, a condition, a slice or index, a `match` case, or the arguments of a clamping call (`min`,
    `clamp`, `bisect`, `range`), and every integer a name or attribute used there is bound to anywhere in the file
    (`LIMIT = 4096`, `self.limit = 1 << 12`, a parameter's default, a keyword argument). Sorted, between 3 and
    PROBE_SIZE_AT_MOST."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError, RecursionError):
        return ()
    bound = _bound_names(tree)
    found: set[int] = set()
    for context in _tested(tree):
        for node in ast.walk(context):
            found.update(_values(node, bound))
    return tuple(sorted(value for value in found if 2 < value <= PROBE_SIZE_AT_MOST))


def probes_for(exercise: Exercise, seed: int, source: str | None) -> list[Draw]:
    """The probes of one check: the trial seed's draws past what the file's text tests (draws.probe_draws)."""
    return probe_draws(exercise, seed, bounds_in(source), dtype_probe(source))


def dtype_probe(source: str | None) -> str:
    """"all" where the file's text tests a dtype (`x.dtype`, `torch.float64` in a condition: a path can depend on
    it, in every mode), else "eager": what a cast returns (`.float()`, `.to(OUT_DTYPE)`) differs eagerly already,
    and one eager call costs little, where a compilation per dtype would cost much."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError, RecursionError):
        return "all"
    if any(isinstance(node, ast.Attribute) and node.attr in {"dtype", "is_floating_point", "element_size",
                                                               "itemsize", *_FLOAT_TYPES}
           for context in _tested(tree) for node in ast.walk(context)):
        return "all"
    return "eager"


def _tested(tree: ast.AST) -> list[ast.AST]:
    """The expressions whose integers bound a path or a size."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Compare, ast.Slice)):
            found.append(node)
        elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            found.append(node.test)
        elif isinstance(node, ast.Subscript):
            found.append(node.slice)
        elif isinstance(node, ast.match_case):
            found.append(node.pattern)
        elif isinstance(node, ast.Call) and _called_name(node.func) in _CLAMPING:
            found.extend([*node.args, *(keyword.value for keyword in node.keywords)])
    return found


def _called_name(func: ast.AST) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _bound_names(tree: ast.AST) -> dict[str, set[int]]:
    """Each name (a variable's, an attribute's, a parameter's, a keyword's) and the integers the file binds it to,
    followed through names bound to names (three rounds: deeper chains are folded by Python rarely enough)."""
    pairs: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs += [(name, node.value) for target in node.targets for name in _target_names(target)]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            pairs += [(name, node.value) for name in _target_names(node.target)]
        elif isinstance(node, ast.keyword) and node.arg:
            pairs.append((node.arg, node.value))
        elif isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]
            pairs += list(zip((a.arg for a in positional[len(positional) - len(node.defaults):]), node.defaults))
            pairs += [(a.arg, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
    bound: dict[str, set[int]] = {}
    for _ in range(3):
        for name, value in pairs:
            bound.setdefault(name, set()).update(_bound_values(value, bound))
    return bound


def _bound_values(value: ast.AST, bound: dict[str, set[int]]) -> set[int]:
    """What a binding gives a name: a constant expression's value, a name's, every element of a literal tuple, list
    or set, either arm of a conditional expression (not the integers inside a call: `nn.Linear(16, 32)`)."""
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return {v for element in value.elts for v in _bound_values(element, bound)}
    if isinstance(value, ast.IfExp):
        return _bound_values(value.body, bound) | _bound_values(value.orelse, bound)
    return _values(value, bound)


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute):
        return [target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _target_names(element)]
    return []


def _values(node: ast.AST, bound: dict[str, set[int]]) -> set[int]:
    """The integers an expression stands for: a constant, a name's bindings, a constant arithmetic expression
    (`1 << 12`, `64 * 64`)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {abs(node.value)}
    if isinstance(node, (ast.Name, ast.Attribute)):
        return set(bound.get(node.id if isinstance(node, ast.Name) else node.attr, ()))
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        try:
            value = _folded(node)
        except (ValueError, ArithmeticError, TypeError):
            return set()
        return {abs(value)} if type(value) is int else set()
    return set()


def _folded(node: ast.AST) -> Any:
    """A constant arithmetic expression's value; ValueError where it is not one (or would be huge)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        value = _folded(node.operand)
        return -value if isinstance(node.op, ast.USub) else ~value if isinstance(node.op, ast.Invert) else value
    if isinstance(node, ast.BinOp):
        left, right = _folded(node.left), _folded(node.right)
        if isinstance(node.op, (ast.Pow, ast.LShift)) and not 0 <= right <= 64:
            raise ValueError("too large")
        operations = {ast.Add: lambda: left + right, ast.Sub: lambda: left - right, ast.Mult: lambda: left * right,
                      ast.FloorDiv: lambda: left // right, ast.Mod: lambda: left % right,
                      ast.Pow: lambda: left ** right, ast.LShift: lambda: left << right,
                      ast.RShift: lambda: left >> right}
        if type(node.op) in operations:
            return operations[type(node.op)]()
    raise ValueError("not a constant expression")


def probed(results: list[Any]) -> dict[str, Any] | None:
    """What a trial sent back of its probes (trial.run_trials: the result after the modes'), where it sent it."""
    return results[len(TRIAL_MODES)] if len(results) > len(TRIAL_MODES) else None


def all_probes(exercise: Exercise, seed: int, text_probes: tuple[Draw, ...], results: list[Any]) -> tuple[Draw, ...]:
    """The probes of the text, then those the checked process's guards asked for, rebuilt here from what it sent
    (draws.guarded_draws), as it calls them."""
    sent = probed(results)
    guarded = sent.get("guarded") if isinstance(sent, dict) and sent.get("stage") == "done" else None
    return (*text_probes, *guarded_draws(exercise, seed, guarded))


# What the regular draws show already: where one of these fails, a probe's failure would say it again
_SHOWN_FIRST = {"eager-runs", "eager-matches", "fullgraph-compiles", "no-graph-breaks", "compiled-matches"}


def probe_checks(exercise: Exercise, probes: tuple[Draw, ...], outcome: Any, expected: list[tuple[Any] | None] | None,
                 trials: Any, earlier: list[CheckResult]) -> list[CheckResult]:
    """[past-the-bounds] where it fails and the checks of the regular draws (`earlier`) do not, else [] (nearly
    every check has a probe, in float64 at least: a line saying so would tell a learner nothing). `outcome`: the
    trial's sandbox outcome; `trials`: the modes' payloads, whose findings nothing-switched-off reports already."""
    if not probes or any(c.name in _SHOWN_FIRST and c.status != PASS for c in earlier):
        return []
    known = {finding for trial in trials if isinstance(trial, dict) for finding in trial.get("tampering") or ()}
    result = _probe_check(exercise, probes, probed(outcome.results), expected, known, outcome.problem)
    return [result] if result.status != PASS else []


def _probe_check(exercise: Exercise, probes: tuple[Draw, ...], payload: dict[str, Any] | None,
                 expected: list[tuple[Any] | None] | None, known: set[str], stopped: str | None) -> CheckResult:
    """On every probe the reference takes, the eager output is the reference's and each compiled mode's the eager
    one's (compared in the checked process: trial.run_probes), no call broke or raised, and nothing was switched
    off that the trials did not. `payload`: what trial.run_trials sent back of the probes; `expected`:
    reference.probe_outputs, in the order run_probes calls them."""
    if not isinstance(payload, dict) or payload.get("stage") != "done":
        return CheckResult(NAME, FAIL, "the calls on inputs past the sizes and dtypes your code tests did not finish: "
                           + (stopped or "the checked process stopped before it sent them back."))
    ordered, expected = probe_order(probes), list(expected or [])
    for mode in ("eager", "fullgraph", "default"):
        run = payload["modes"][mode]
        found = [finding for finding in run["findings"] if finding not in known]
        if found:
            return CheckResult(NAME, FAIL, f"{mode} mode switched something off on the calls past what your code "
                               f"tests: {found[0]}")
        errors, breaks = dict(map(tuple, run["errors"])), dict(map(tuple, reversed(run["breaks"])))
        for index, probe in enumerate(ordered):
            if index >= len(expected) or expected[index] is None or mode != "eager" and probe.eager_only:
                continue  # the reference does not take this input: it asks nothing
            which = f"on {_described(probe)}"
            if index in errors:
                error = errors[index] or {}
                what = f"{error.get('gb_id') or ''} {error.get('gb_type') or ''}".strip() or \
                    f"{error.get('type')}: {error.get('message')}"
                return CheckResult(NAME, FAIL, f"{mode} mode stopped {which}: {what[:300]}")
            if index in breaks:
                return CheckResult(NAME, FAIL, f"{mode} mode broke the graph {which}: {breaks[index]}")
            got = run["outputs"] if mode == "eager" else run["differs"]
            if index >= len(got):
                return CheckResult(NAME, FAIL, f"{mode} mode sent back no result {which}")
            difference = output_difference(got[index], expected[index][0], exercise.rtol, exercise.atol) \
                if mode == "eager" else got[index]
            if difference:
                against = "the reference" if mode == "eager" else "the eager one"
                return CheckResult(NAME, FAIL, f"the {mode} output differs from {against} {which}: {difference}")
    taken = sum(want is not None for want in expected)
    if not taken:
        return CheckResult(NAME, PASS, f"none of the {len(probes)} input(s) drawn past the sizes and dtypes your code "
                           "tests is one the reference takes: nothing to compare")
    return CheckResult(NAME, PASS, f"the {taken} input(s) past the sizes and dtypes your code tests (of {len(probes)} "
                       "drawn) give the reference's output in every mode, in one graph")


def _described(probe: Draw) -> str:
    tensors = [arg for arg in probe.args if hasattr(arg, "shape")]
    shapes = ", ".join(f"{tuple(a.shape)} {str(a.dtype).removeprefix('torch.')}" for a in tensors)
    how = "in float64" if any(str(a.dtype) == "torch.float64" for a in tensors) else "larger than the examples"
    return f"input {probe.case + 1} drawn {how}, past what your code tests (tensors {shapes})"
