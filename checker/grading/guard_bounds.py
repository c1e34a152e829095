"""The sizes past which a traced path changes, read from Dynamo's own shape guards (in the checked process).

bound_probes.py reads the bounds a file's text writes out; a bound can also be computed (`int("4096")`), written as a
float (`> 4096.0`), folded into arithmetic (`n - 1 > 4095`, `x.numel() > 70000`) or be an equality (`n == 4097`).
Dynamo sees every one the same way: compiled with dynamic sizes (the fullgraph trial is: trial.py), each test of a
size is a guard on its symbol (`s1 <= 4096`, `Ne(s1, 4097)`, `2*s0*s1 <= 70000`), and a Python operation it cannot
keep symbolic pins the size (`Eq(s1, 5)`). `growths` reads them: for each size symbol of an input, the smallest
size past the drawn one where a guard fails, a call there takes another path. Its draws (draws.grown_draw) are
probed as the text's are.

This runs in the checked process, so it is that process's word, as the probes' outputs are; what the grader reads
from the text holds whatever it says.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re
from typing import Any

import sympy

GROWN_AT_MOST = 1 << 20  # the largest size a guard's boundary is looked for up to
PINNED_FAR = 1 << 14  # where a pinned size is probed besides one past it
DEEPER_TRACES = 4  # growths traced again to find the guards past them
_SOURCE = re.compile(r"^L\['(\w+)'\]\.size\(\)\[(\d+)\]$")


def growths(entry: Any, shape_envs: list[tuple[int, Any]]) -> list[tuple[int, dict[tuple[int, int], int]]]:
    """(call index, {(argument, dimension): new size}) for each input size a guard of a graph that call compiled
    bounds (engine.Diagnosis.shape_envs); the dimensions of the same symbol (equal sizes) grow together."""
    try:
        names = list(inspect.signature(entry).parameters)
    except (TypeError, ValueError):
        return []
    found: list[tuple[int, dict[tuple[int, int], int]]] = []
    for call, environment in shape_envs:
        try:
            grown = _environment_growths(environment, names)
        except Exception:  # noqa: BLE001 - a guard this reading cannot evaluate asks for no probe
            continue
        found += [(call, growth) for growth in grown if (call, growth) not in found]
    return found


def deeper(load_entry: Any, exercise: Any, seed: int, guarded: list[Any], traces: int = DEEPER_TRACES) -> list[Any]:
    """`guarded` (trial.run_trials' [[case, [[argument, dimension, size], ...]], ...]) and what the guards show past
    it: once a nearer test has bounded a size (`if n > 64:`), Dynamo decides a farther one (`if n > 4096:`) with no
    guard of its own, so the entry (`load_entry()`: a fresh import's) is traced again at up to `traces` of the
    growths, quietly, and the guards there read. Where that stops, what was found so far."""
    from checker.course import draws  # the course's draws: where the growths become inputs, as the grader builds them
    from checker.dynamo import engine

    found = list(guarded)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            entry = load_entry()
            for case, places in guarded[:traces]:
                grown = draws.guarded_draws(exercise, seed, [[case, places]])
                if not grown:
                    continue
                diagnosis = engine.diagnose(entry, [(grown[0].args, grown[0].kwargs)], "default", dynamic=True)
                for _, growth in growths(entry, diagnosis.shape_envs):
                    item = [case, [[*place, size] for place, size in growth.items()]]
                    found += [item] if item not in found else []
    except Exception:  # noqa: BLE001 - a trace that stops finds nothing more
        pass
    return found


def _environment_growths(environment: Any, names: list[str]) -> list[dict[tuple[int, int], int]]:
    """The growths one frame's guards ask for: its input sizes' symbols, each pushed past its guards' boundary."""
    places: dict[Any, list[tuple[int, int]]] = {}
    for symbol, sources in environment.var_to_sources.items():
        for source in sources:
            match = _SOURCE.match(getattr(source, "name", "") if not callable(getattr(source, "name", None))
                                  else source.name())
            if match and match.group(1) in names:
                places.setdefault(symbol, []).append((names.index(match.group(1)), int(match.group(2))))
    drawn = getattr(environment, "backed_var_to_val", None)  # its name from torch 2.13 on
    values = {symbol: int(value) for symbol, value in (environment.var_to_val if drawn is None else drawn).items()}
    ties = _ties(environment)
    decided = [guard for guard in environment.guards if _decided_in_python(guard)]
    expressions = [guard.expr for guard in decided]
    looped = {guard.expr for guard in decided if _loop_line(guard)}
    found = []
    for symbol in places:
        if symbol not in values:
            continue
        guards = [e for e in expressions if symbol in e.free_symbols]
        sizes = _boundaries(symbol, values, guards)
        # A size pinned to its drawn value (`n.bit_length()`, an operation Dynamo cannot keep symbolic) hides where
        # its path changes: past it, one size near and one far (a tensor that large may be refused: draws.py). Not
        # a loop's count (`for _ in range(n)`, a comprehension): its path is the same loop, unrolled far it would take
        # minutes.
        pinned = any(isinstance(e, sympy.Eq) and e.free_symbols == {symbol} and e not in looped for e in guards)
        tied = {symbol, *ties.get(symbol, ())}
        far = {PINNED_FAR} if pinned and values[symbol] < PINNED_FAR else set()
        for grown in sorted(sizes | far):
            found.append({place: grown for each in tied for place in places.get(each, [])})
    return found


def _decided_in_python(guard: Any) -> bool:
    """Whether a guard was made where Dynamo decided a Python value (`if n > 4096:`, `n.bit_length()`), not by an
    operation's own shape rule (a matmul's inner sizes, a view's): only the first picks a path of the file's; at a
    size the second refuses, the reference raises too. Told by the torch frame that made it, kept where unsure."""
    where = getattr(getattr(guard, "sloc", None), "framework_loc", None)
    filename = str(getattr(where, "filename", where) or "")
    return "/torch/" not in filename or "/torch/_dynamo/" in filename


def _loop_line(guard: Any) -> bool:
    """Whether the file's line that made a guard iterates (`for _ in range(n)`, `[f(b) for b in boxes]`): a count
    that unrolls, not a test."""
    line = str(getattr(getattr(guard, "sloc", None), "maybe_user_loc", "") or "").split("  # ")[0]
    return re.search(r"\bfor\b.*\bin\b", line) is not None


def _ties(environment: Any) -> dict[Any, set[Any]]:
    """Symbols an equality guard made one (a replacement of one symbol by another)."""
    ties: dict[Any, set[Any]] = {}
    for symbol, replacement in getattr(environment, "replacements", {}).items():
        if isinstance(replacement, sympy.Symbol):
            ties.setdefault(symbol, set()).add(replacement)
            ties.setdefault(replacement, set()).add(symbol)
    return ties


def _boundaries(symbol: Any, values: dict[Any, int], guards: list[Any]) -> set[int]:
    """For each of `guards`, the smallest size past the drawn one, up to GROWN_AT_MOST, where it fails, the other
    symbols at their drawn values (each guard's own: a harmless test nearer, `if n > 64: x = x.contiguous()`, hides
    no farther one). Tried: one past the drawn size, each of the guard's constants and their neighbours (an
    equality's point, a bound's edge), and the edge that doubling and halving finds (a bound on a product:
    `2*s0*s1 <= 70000`)."""
    drawn = values[symbol]
    failing = []
    for guard in guards:
        def holds(size: int) -> bool:
            try:
                return bool(guard.xreplace({s: (size if s == symbol else values.get(s, s)) for s in guard.free_symbols}))
            except (TypeError, ValueError, ArithmeticError):
                return True
        constants = {int(atom) for atom in guard.atoms(sympy.Number) if abs(atom) <= GROWN_AT_MOST}
        candidates = sorted({drawn + 1, *(c + d for c in constants for d in (-1, 0, 1))} - set(range(drawn + 1)))
        edges = [size for size in candidates if size <= GROWN_AT_MOST and not holds(size)][:1]
        low, high = drawn, drawn + 1  # the edge of an inequality: doubling, then halving
        while high <= GROWN_AT_MOST and holds(high):
            low, high = high, 2 * high
        if high <= GROWN_AT_MOST:
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (middle, high) if holds(middle) else (low, middle)
            edges.append(high)
        failing += [min(edges)] if edges else []
    return set(failing)
