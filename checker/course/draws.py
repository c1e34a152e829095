"""Fresh inputs for every check: drawn from the manifest's generators, in an order of their own per mode.

The manifest's inputs are the examples a learner sees. A check grades on inputs drawn afresh from a
generator per input (see `draw_spec`): a random tensor spec (`randn`, `rand`, `randint`, `bernoulli`)
keeps its shape, dtype and constraints (`scale`, `shift`, `shift_below_diagonal`, `low`, `high`, `exclude`,
`p`) and gets a new seed; a literal (`tensor`, `ones`, `zeros`, `arange`, a plain value) stays as it is, unless the case
declares a `draw` table with generators of its own. A case's draws therefore share its signature (the
shapes, dtypes and plain values Dynamo guards on) and, as `gbcheck verify` proves on every exercise,
take the branches of the reference that its example takes.

Two seeds make a check: the trial seed, drawn before the checked process starts, gives the inputs that
process is called on; the replay seed, drawn only after it has ended, gives the inputs its graphs are
replayed on in the grader (see replay.py). `Seed` prints as "TRIAL-REPLAY", the form `--seed` takes.

Each mode calls the trial draws in an order of its own, and repeats some: a function that counts its
calls, or remembers the order of the examples, gets the branches wrong.
"""

from __future__ import annotations

import hashlib
import math
import random
import secrets
from dataclasses import dataclass
from typing import Any

from checker.course.manifest import Exercise
from checker.course.values import build_draw

DRAWS_PER_CASE = 1  # fresh draws of each example case in the trial (the replay draws more, in the grader)
REPEATS = 1  # draws each mode calls a second time, somewhere in its order


@dataclass(frozen=True)
class Draw:
    """One fresh call of the entry, and the example case it was drawn for."""

    case: int  # index into exercise.inputs
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    eager_only: bool = False  # a probe called eagerly alone (probe_draws)


@dataclass(frozen=True)
class Seed:
    trial: int
    replay: int

    def __str__(self) -> str:
        return f"{self.trial}-{self.replay}"

    @classmethod
    def parse(cls, text: str) -> Seed:
        """"TRIAL-REPLAY" as a report prints it; one number alone seeds both."""
        parts = str(text).strip().split("-")
        if len(parts) > 2 or not all(part.isdigit() for part in parts):
            raise ValueError(f"a seed is a number or two joined by '-' (as a report shows it), not {text!r}")
        return cls(int(parts[0]), int(parts[-1]))


def fresh_seed() -> int:
    return secrets.randbits(48)


def domain_values(exercise: Exercise, seed: int) -> dict[str, Any]:
    """The value each name of the exercise's domain takes in the check whose trial seed is `seed`."""
    return {name: random.Random(_derive(seed, "domain", name)).choice(values)
            for name, values in exercise.domain.items()}


def _in_domain(spec: Any, chosen: dict[str, Any]) -> Any:
    """A draw generator with the check's domain values put in: `{ domain = NAME }` is the value itself; a name in
    a random tensor's shape is the size."""
    if not isinstance(spec, dict) or not chosen:
        return spec
    if "domain" in spec:
        return chosen[spec["domain"]]
    return {key: [chosen.get(size, size) if isinstance(size, str) else size for size in value]
            if key in ("randn", "rand", "randint", "bernoulli") else value for key, value in spec.items()}


def draw_spec(exercise: Exercise, case: int, position: int | str, replay: bool = False) -> Any:
    """The generator of one argument of one case: its `draw` entry, else the example's own spec. `replay`: its
    `replay_draw` entry first, where it has one (what the grader's replay draws, past the trial's bounds)."""
    example = exercise.inputs[case]
    if isinstance(position, int):
        for overrides in ([example.replay_args] if replay else []) + [example.draw_args]:
            if position < len(overrides) and overrides[position]:
                return overrides[position]
        return example.args[position]
    return ((example.replay_kwargs.get(position) if replay else None) or example.draw_kwargs.get(position)
            or example.kwargs[position])


def draws(exercise: Exercise, seed: int, per_case: int = DRAWS_PER_CASE, replay: bool = False,
          domain_seed: int | None = None) -> list[Draw]:
    """`per_case` fresh draws of every example case, case by case; the same for the same seed. `replay`: from
    the cases' replay generators, where they have one. The domain's values come from `domain_seed` (the trial's
    seed, for the replay's draws too), by default `seed`."""
    made, chosen = [], domain_values(exercise, seed if domain_seed is None else domain_seed)
    for case, example in enumerate(exercise.inputs):
        for copy in range(per_case):
            def value(position: int | str) -> Any:
                spec = _in_domain(draw_spec(exercise, case, position, replay), chosen)
                return build_draw(spec, _derive(seed, case, copy, position))
            made.append(Draw(case, tuple(value(i) for i in range(len(example.args))),
                             {key: value(key) for key in example.kwargs}))
    return made


PROBES_AT_MOST = 8  # calls past the file's bounds in one check (probe_draws), drawn by the seed where more are made
PROBE_ELEMENTS_AT_MOST = 1 << 20  # a draw past a bound makes no tensor of more elements than this
GUARDED_READ_AT_MOST = 256  # growths a checked process asks for that are read at all: what it sends is its word
UNSEEN_SIZES = 2  # draws of an exercise about recompilation at sizes no call of the trial had


def unseen_sizes(exercise: Exercise, trial_draws: list[Draw], seed: int, count: int = UNSEEN_SIZES,
                 beyond: int = 0, domain_seed: int | None = None) -> list[Draw]:
    """For an exercise about recompilation (`max_compilations`): draws at sizes the trial never called with.

    A graph is claimed for the sizes the trial drew; one that picks its answer by the size it is called
    with (a recompilation in disguise, say a `torch.cond` on the length per example) would compute the
    reference on those alone. The free dimensions are the ones whose size differs among the manifest's
    examples; each draw takes an example case and gives every dimension of that size a new one, between the
    smallest size seen and twice the largest, that no trial draw had. `beyond`: the largest integer the graph
    holds; the first draws are one past it and twice past it (while their tensors stay under
    PROBE_ELEMENTS_AT_MOST), so that a graph that pads every input to a bound of its own, and so serves every size
    below it, is replayed at a size it cannot serve.
    """
    if not exercise.max_compilations:
        return []
    free = _free_dimensions(exercise)
    seen = {size for draw in trial_draws for position, dim in free
            if position < len(draw.args) and hasattr(draw.args[position], "shape")
            for size in [draw.args[position].shape[dim]]}
    if not seen:
        return []
    rng = random.Random(_derive(seed, "unseen"))
    chosen = domain_values(exercise, seed if domain_seed is None else domain_seed)
    sizes = [n for n in range(min(seen), 2 * max(seen) + 1) if n not in seen]
    # One past the bound, and twice past it: a bound one above the largest integer (`range(n)` of a padded
    # length n) still serves the first.
    # Only as far as a draw's tensors stay under PROBE_ELEMENTS_AT_MOST: a bound is not hidden by being large.
    per_unit = max((math.prod(shape) // max(shape[dim], 1) for example in exercise.inputs for position, dim in free
                    if position < len(example.args) for shape in [_shape(example.args[position])] if shape), default=1)
    past = [size for size in (2 * beyond + 1, beyond + 1) if max(seen) < beyond
            and size * per_unit <= PROBE_ELEMENTS_AT_MOST and size not in seen]
    made = []
    for copy in range(min(count + len(past), len(sizes) + len(past))):
        case = rng.randrange(len(exercise.inputs))
        new_size = past.pop() if past else sizes.pop(rng.randrange(len(sizes)))
        example = exercise.inputs[case]
        old_size = next((_shape(example.args[p])[d] for p, d in free if p < len(example.args)
                         and _shape(example.args[p])), None)
        def value(position: int) -> Any:
            spec = _in_domain(draw_spec(exercise, case, position), chosen)
            if _growable(spec):
                spec = {**spec, _maker(spec): [new_size if (position, dim) in free and size == old_size else size
                                               for dim, size in enumerate(_shape(spec))]}
            return build_draw(spec, _derive(seed, "unseen", copy, position))
        made.append(Draw(case, tuple(value(i) for i in range(len(example.args))), {}))
    return made


def probe_draws(exercise: Exercise, seed: int, bounds: tuple[int, ...] = (), other_dtype: str = "") -> list[Draw]:
    """Draws past what the file's text tests (grading/bound_probes.py reads `bounds` and `other_dtype` from it).

    For each example case and each size its random tensors have, one draw where every dimension of that size is
    one past the smallest bound above every size the draws have, and one past the largest: a path taken only
    above a size is called. `other_dtype` ("all" or "eager"): one draw per case with its random floating tensors
    in float64, called in every mode, or only eagerly where the file casts but tests no dtype (a cast's result
    differs there already; a compilation per dtype is costly). At most PROBES_AT_MOST, drawn by the seed."""
    specs, made = _case_specs(exercise, seed), []
    largest = max((size for case in specs for spec in case for size in _built_shape(spec) or ()), default=0)
    above = sorted(bound for bound in bounds if bound > largest)
    for case in range(len(exercise.inputs)):
        shapes = {position: shape for position, spec in enumerate(specs[case]) if (shape := _built_shape(spec))}
        for size in sorted({size for shape in shapes.values() for size in shape}):
            for bound in sorted({above[0], above[-1]} if above else ()):
                made.append(grown_draw(exercise, seed, case, {(position, dim): bound + 1 for position, shape
                                                              in shapes.items() for dim, each in enumerate(shape)
                                                              if each == size}))
        floating = [p for p, spec in enumerate(specs[case]) if _shape(spec) and ("randn" in spec or "rand" in spec)
                    and spec.get("dtype", "float32") == "float32"]
        if other_dtype and floating:
            made.append(_probe(exercise, seed, case, [{**spec, "dtype": "float64"} if p in floating else spec
                                                      for p, spec in enumerate(specs[case])], "float64",
                               other_dtype == "eager"))
    made = [draw for draw in made if draw is not None]
    if len(made) > PROBES_AT_MOST:
        made = random.Random(_derive(seed, "probes")).sample(made, PROBES_AT_MOST)
    return made


def probe_order(probes: Any) -> list[Draw]:
    """The order the checked process calls the probes in, and the reference's too: the eager-only ones last, so that
    the compiled modes' calls (the others) are the same first ones."""
    return sorted(probes, key=lambda probe: probe.eager_only)


def grown_draw(exercise: Exercise, seed: int, case: Any, growth: Any) -> Draw | None:
    """A probe of example `case` at the sizes `growth` gives ({(argument, dimension): size}), the rest as drawn: a
    random tensor drawn at its new shape, any other tensor (a literal, one scaled element by element) tiled along
    the dimension to it. None where the growth names no tensor's dimension (or not in plain integers: a checked
    process may ask for it, guard_bounds.py), or would make a tensor of more than PROBE_ELEMENTS_AT_MOST elements."""
    plain_int = lambda value: type(value) is int  # noqa: E731 - not a bool, not a tensor
    if not plain_int(case) or not 0 <= case < len(exercise.inputs) or not isinstance(growth, dict) or not growth:
        return None
    specs, shapes = _case_specs(exercise, seed)[case], {}
    for key, size in growth.items():
        if not (isinstance(key, tuple) and len(key) == 2 and all(map(plain_int, (*key, size)))):
            return None
        position, dim = key
        shape = _built_shape(specs[position]) if 0 <= position < len(specs) else None
        if shape is None or not 0 <= dim < len(shape) or not 1 <= size <= PROBE_ELEMENTS_AT_MOST:
            return None
        shapes.setdefault(position, list(shape))[dim] = size
    if any(math.prod(shape) > PROBE_ELEMENTS_AT_MOST for shape in shapes.values()):
        return None
    grown = [{**spec, _maker(spec): shapes[p]} if p in shapes and _growable(spec) else spec
             for p, spec in enumerate(specs)]
    tiled = {p: shape for p, shape in shapes.items() if not _growable(specs[p])}
    return _probe(exercise, seed, case, grown, repr(sorted(growth.items())), tiled=tiled)


def guarded_draws(exercise: Exercise, seed: int, guarded: Any) -> list[Draw]:
    """The probes of the growths a checked process's guards asked for (grading/guard_bounds.py), as it reports
    them: [[case, [[argument, dimension, size], ...]], ...]. Whatever does not name a tensor's dimension, or repeats
    an earlier growth, makes none; at most PROBES_AT_MOST, drawn by the seed from the first GUARDED_READ_AT_MOST."""
    made: list[Draw] = []
    seen: list[Any] = []
    items = list(guarded[:GUARDED_READ_AT_MOST]) if isinstance(guarded, list) else []
    random.Random(_derive(seed, "guarded")).shuffle(items)  # where more are asked for, no order keeps one out
    for item in items:
        if len(made) >= PROBES_AT_MOST:
            break
        try:
            case, places = item
            growth = _with_equal_sizes(exercise, seed, case, {(position, dim): size for position, dim, size in places})
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        draw = None if (case, growth) in seen else grown_draw(exercise, seed, case, growth)
        seen.append((case, growth))
        made += [draw] if draw is not None else []
    return made


def _with_equal_sizes(exercise: Exercise, seed: int, case: Any, growth: dict[Any, Any]) -> dict[Any, Any]:
    """`growth`, and every other dimension of the case's tensors of a size it grows, grown alike: a graph compiled
    where only some of them were inputs names only those, and a call with the rest left as drawn (6 boxes, 13
    scores) is one no program makes."""
    shapes = {p: shape for p, spec in enumerate(_case_specs(exercise, seed)[case]) if (shape := _built_shape(spec))}
    old = {shapes[p][d]: size for (p, d), size in growth.items() if p in shapes and 0 <= d < len(shapes[p])}
    return {**{(p, d): old[each] for p, shape in shapes.items() for d, each in enumerate(shape) if each in old},
            **growth}


def _case_specs(exercise: Exercise, seed: int) -> list[list[Any]]:
    """Each example case's argument generators, with the check's domain values put in."""
    chosen = domain_values(exercise, seed)
    return [[_in_domain(draw_spec(exercise, case, position), chosen) for position in range(len(example.args))]
            for case, example in enumerate(exercise.inputs)]


def _probe(exercise: Exercise, seed: int, case: int, specs: list[Any], label: str, eager_only: bool = False,
           tiled: dict[int, list[int]] | None = None) -> Draw:
    chosen = domain_values(exercise, seed)
    args = [build_draw(spec, _derive(seed, "probe", label, position)) for position, spec in enumerate(specs)]
    for position, shape in (tiled or {}).items():
        args[position] = _tiled(args[position], shape)
    return Draw(case, tuple(args),
                {key: build_draw(_in_domain(draw_spec(exercise, case, key), chosen), _derive(seed, "probe", label, key))
                 for key in exercise.inputs[case].kwargs}, eager_only)


def _built_shape(spec: Any) -> list[int] | None:
    """The shape of the tensor a generator makes (a random one's from its spec, any other's built); None for a
    plain value."""
    if _growable(spec):
        return list(_shape(spec))
    import torch

    value = build_draw(spec, 0)
    return list(value.shape) if isinstance(value, torch.Tensor) and value.dim() else None


def _tiled(value: Any, shape: list[int]) -> Any:
    """`value` repeated along each dimension, then cut, to `shape`: a literal's rows again, as many as asked."""
    for dim, size in enumerate(shape):
        if value.shape[dim] and value.shape[dim] != size:
            times = -(-size // value.shape[dim])
            value = value.repeat(*[times if d == dim else 1 for d in range(value.dim())]).narrow(dim, 0, size)
    return value


def _growable(spec: Any) -> bool:
    """A random tensor whose shape a probe may change (not one scaled or shifted element by element)."""
    return bool(_shape(spec)) and not any(isinstance(spec.get(k), list) for k in ("scale", "shift"))


def _maker(spec: dict[str, Any]) -> str:
    return next(k for k in ("randn", "rand", "randint", "bernoulli") if k in spec)


def _shape(spec: Any) -> list[int] | None:
    """A random tensor spec's shape (the generators that keep shape and take a new seed), else None."""
    if isinstance(spec, dict):
        for maker in ("randn", "rand", "randint", "bernoulli"):
            if isinstance(spec.get(maker), list):
                return spec[maker]
    return None


def _free_dimensions(exercise: Exercise) -> set[tuple[int, int]]:
    """(argument, dimension) pairs whose size differs among the examples (the sizes the lesson is about)."""
    shapes: dict[tuple[int, int], set[int]] = {}
    for example in exercise.inputs:
        if example.kwargs:
            return set()  # sizes passed by keyword: not an exercise this draws for
        for position, spec in enumerate(example.args):
            for dim, size in enumerate(_shape(spec) or ()):
                shapes.setdefault((position, dim), set()).add(size)
    return {key for key, sizes in shapes.items() if len(sizes) > 1}


def call_order(count: int, seed: int, mode: str) -> list[int]:
    """The order `mode` calls `count` draws in: a shuffle of its own, with REPEATS of them called twice."""
    rng = random.Random(_derive(seed, "order", mode))
    order = list(range(count))
    rng.shuffle(order)
    for draw in rng.sample(range(count), min(REPEATS, count)):
        order.insert(rng.randrange(len(order) + 1), draw)
    return order


def untrained_calls(count: int, seed: int) -> frozenset[int]:
    """The places in the eager mode's order of `count` calls that run without autograd and with the modules in
    evaluation mode, as an evaluation loop runs them, on inputs laid out otherwise (plain.laid_out_otherwise, a
    transposed view's strides): every other call, from a place the seed draws. What a task keeps (a log line, a
    metric's count, the same result) it keeps there too, and the reference's calls run the same way."""
    start = random.Random(_derive(seed, "untrained")).randrange(2)
    return frozenset(range(start, count, 2))


def signature(draw: Draw) -> tuple[Any, ...]:
    """What Dynamo guards on in a call: each tensor's shape and dtype, every other value itself."""
    import torch

    def part(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return ("tensor", tuple(value.shape), str(value.dtype))
        return ("value", repr(value))
    return tuple(part(v) for v in draw.args) + tuple((k, part(v)) for k, v in sorted(draw.kwargs.items()))


def _derive(*parts: Any) -> int:
    """A seed for one purpose, from the check's seed: unrelated streams for unrelated purposes."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:6], "big")
