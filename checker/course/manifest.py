"""The exercise manifest: `exercises/exercises.toml` loaded into typed records.

Exercises are data. Each `[[exercise]]` table names the file the learner edits (the same name lives in
`solutions/`), the callable to grade, the inputs to grade it on and what the unfixed file is expected to
show. Inputs are tables, not code, so a learner cannot change what they are graded on. Which manifest
and which folders are used is the course resolver's business (`checker.course`).
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from checker.course.contracts import Contract, ContractError, contract_from_table
from checker.course.resolver import WORKSPACE, Course, find_course
from checker.course.values import DTYPES, TENSOR_MAKERS, build_value

CATEGORIES = ("incorrect-code", "data-dependent", "printing-logging", "dynamic-shapes", "untraceable-calls",
              "python-side-effects", "recompilations", "capstone")


class ManifestError(ValueError):
    """The manifest is malformed; the message says which exercise and which field."""


@dataclass(frozen=True)
class InputCase:
    """One call of the entry: positional and keyword arguments, each a literal or a tensor spec."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    note: str = ""  # which branch of the original this input exercises
    # Generators of fresh draws, per argument (checker/course/draws.py); an argument without one is drawn from
    # its example spec with a new seed (random specs) or kept as it is (literals).
    draw_args: tuple[Any, ...] = ()
    draw_kwargs: dict[str, Any] = field(default_factory=dict)
    # Generators for the grader's replay alone, in place of those above: values past what the trial draws (a
    # table sized to cover the trial's bound covers none of them); same shapes and dtypes, so the same graphs.
    replay_args: tuple[Any, ...] = ()
    replay_kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Exercise:
    """One graded exercise, as declared in the manifest."""

    id: str  # short slug used on the command line: `gbcheck check <id>`
    title: str  # one line shown in listings
    file: str  # file name under exercises/ and solutions/
    entry: str  # name of the callable in that file that is compiled and graded
    chapter: str  # book page that teaches the technique (book/<chapter>.ipynb)
    category: str  # one of CATEGORIES
    points: int
    # GB id the unfixed file shows, e.g. "GB0170"; empty for an exercise about recompilation, whose
    # unfixed file breaks nothing and compiles more than `max_compilations` times instead.
    expected_break: str
    hints: tuple[str, ...]  # progressive: the first is a nudge, the last names the technique
    inputs: tuple[InputCase, ...]  # together they run every branch of the original code
    fails_eagerly: bool = False  # the unfixed file is wrong even without torch.compile
    allowed_config: tuple[str, ...] = ()  # torch._dynamo.config keys the fix may change
    rtol: float = 1.3e-6
    atol: float = 1e-5
    task: str = ""  # what the learner is asked to do, in a sentence or two
    # Per-release differences, as declared; load_exercises applies those that hold for the installed torch.
    variants: tuple[Variant, ...] = ()
    solution_file: str = ""  # the reference fix under solutions/, when a variant names another than `file`
    skip: str = ""  # why this exercise cannot be done on the installed torch; empty when it can
    applied: tuple[str, ...] = ()  # the conditions of the variants applied, e.g. "torch without GB7000"
    # Graph operations the fix must not contain (matched against each captured node's target name,
    # e.g. "nonzero", "item"), beyond the data-dependent operations the replay refuses anyway.
    forbidden_ops: tuple[str, ...] = ()
    # The fix calls code of the learner's file from inside the graph (a torch.library operator, a
    # nonstrict_trace function): its graphs cannot be replayed without that code, so the verdict rests on
    # the sandboxed run on fresh inputs (the report says so). Elsewhere such a graph fails the replay.
    opaque_calls: bool = False
    # For an operator exercise: the function of the solution that the learner's operator stands for (its
    # `torch.library` operator). The replay runs the graph around the learner's one operator with this
    # reference in its place, so the operator must take and return what it does.
    opaque_step: str = ""
    # The most graphs the fix may compile the entry into over all the inputs (the "no-recompilation"
    # check); 0 when the exercise does not count them. 2 allows what automatic dynamic shapes does: the
    # first call's sizes, then one graph with the sizes that changed made dynamic.
    max_compilations: int = 0
    # The functions a fix may give Dynamo a polyfill of (substitute_in_graph), as the tamper check names them
    # (`_bisect.bisect_left`): a polyfill of anything else (the break's own cause, `warnings.simplefilter`)
    # switches the cause off for every compiled call, as a config key would.
    polyfills: tuple[str, ...] = ()
    # Whether eager-matches compares the gradients of the entry's tensor arguments as well as of its parameters;
    # false where a correct fix may stop them at the inputs (a frozen encoder run under no_grad).
    input_gradients: bool = True
    # Values drawn once per check from the trial seed and shared by every call of it, the replay's included (so
    # every call keeps the signature its graphs were compiled for): name -> the values it may take. A draw
    # generator names one as `{ domain = "name" }` for a plain argument, or as a string in a random tensor's
    # shape. What the examples fix (a head width, a caller's threshold) is so graded over its whole range.
    domain: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    # What the task asks the code to keep doing, each graded as a named check (see contracts.py).
    contracts: tuple[Contract, ...] = ()
    # Changes to the solution that still pass, each (mutant, why): "delete: <its line>" or "unwrap: <its
    # line>" (see checker/grading/mutation.py) and the one-line reason no check needs that statement.
    equivalent: tuple[tuple[str, str], ...] = ()
    # Names its file had in earlier versions of the course: a workspace made by one is renamed on use.
    formerly: tuple[str, ...] = ()
    chapter_title: str = ""  # the chapter's title as the book heads it, from the manifest's [chapters] table
    # Where its files are, set by load_exercises from the course it was loaded for.
    exercise_path: Path = Path()  # the learner's copy (what `gbcheck check ID` grades)
    original_path: Path = Path()  # the file as shipped (what `reset` restores and `verify` checks)
    solution_path: Path = Path()  # the reference solution

@dataclass(frozen=True)
class Variant:
    """What differs for an exercise on some torch releases: a `[[exercise.variant]]` table.

    Its condition is `missing` (preferred: a feature the installed torch lacks, either a dotted name such as
    "torch._dynamo.config.ignore_logging_functions" or a graph-break id of torch's registry such as "GB7000")
    or `torch_before` (a release such as "2.9", for a measured difference in behaviour no feature marks).
    When it holds, the fields it gives replace the exercise's; `skip` says why the exercise cannot be done.
    """

    missing: str = ""
    torch_before: str = ""
    why: str = ""  # for course authors: what differs on such a torch
    expected_break: str = ""
    allowed_config: tuple[str, ...] | None = None
    solution: str = ""  # file name under solutions/
    hints: tuple[str, ...] = ()
    skip: str = ""

    @property
    def condition(self) -> str:
        return f"torch without {self.missing}" if self.missing else f"torch before {self.torch_before}"

    def holds(self) -> bool:
        """Whether this variant applies to the installed torch (imports torch for a dotted feature)."""
        from checker.dynamo import registry, torch_support

        if self.missing.startswith("GB"):
            return not registry.has_gb_id(self.missing)
        if self.missing:
            return not torch_support.has_feature(self.missing)
        return torch_support.torch_before(self.torch_before)


def for_installed_torch(exercise: Exercise) -> Exercise:
    """The exercise as it is done on the installed torch: every variant that holds applied, in order."""
    changes: dict[str, Any] = {}
    applied = []
    for variant in exercise.variants:
        if not variant.holds():
            continue
        applied.append(variant.condition)
        if variant.skip:
            changes["skip"] = f"{variant.skip} (on {variant.condition})"
        changes.update({key: value for key, value in (
            ("expected_break", variant.expected_break), ("solution_file", variant.solution),
            ("hints", variant.hints)) if value})
        if variant.allowed_config is not None:
            changes["allowed_config"] = variant.allowed_config
    return replace(exercise, applied=tuple(applied), **changes) if applied else exercise


def load_exercises(course: Course | None = None, apply_variants: bool = True) -> list[Exercise]:
    """Read and validate the manifest of `course` (default: the one the resolver finds), each exercise as
    done on the installed torch (see `Variant`) and located in that course's folders.

    Raises ManifestError with a precise message.
    """
    course = course or find_course()
    path = course.manifest_path
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ManifestError(f"cannot read {path}: {err}") from err
    exercises = [_exercise_from_table(table) for table in data.get("exercise", [])]
    ids = [ex.id for ex in exercises]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ManifestError(f"{path}: duplicate exercise ids: {', '.join(duplicated)}")
    titles = data.get("chapters", {})
    exercises = [replace(ex, chapter_title=str(titles.get(ex.chapter, ex.chapter))) for ex in exercises]
    if apply_variants:
        exercises = [for_installed_torch(ex) for ex in exercises]
    exercises = [_located(ex, course) for ex in exercises]
    if course.kind == WORKSPACE:
        _adopt_former_names(exercises, course)
    return exercises


def _adopt_former_names(exercises: list[Exercise], course: Course) -> None:
    """Rename a workspace's files that still have a name from an earlier version of the course.

    A workspace made before the files were renumbered holds the learner's work under the old names; the
    file is renamed only where the new name is free, so nothing the learner wrote is overwritten.
    """
    for exercise in exercises:
        for old_name in exercise.formerly:
            old = course.exercises_dir / old_name
            if old.is_file() and not exercise.exercise_path.exists():
                old.rename(exercise.exercise_path)
                print(f"gbcheck: renamed {course.shown(old)} to {course.shown(exercise.exercise_path)}, "
                      f"its name in this version of the course (exercise {exercise.id})", file=sys.stderr)


def find_exercise(exercise_id: str, exercises: list[Exercise] | None = None) -> Exercise:
    """The exercise with this id (or file name, with or without `.py`).

    Without `exercises`, an unknown id is refused from the manifest alone, before anything imports torch
    (applying the variants does): the answer comes at once, with the nearest ids as a suggestion.
    """
    if exercises is None:
        _named(exercise_id, load_exercises(apply_variants=False))
        exercises = load_exercises()
    return _named(exercise_id, exercises)


def by_file_name(exercises: list[Exercise]) -> dict[str, Exercise]:
    """Each exercise under its file's name and its former names (a submission from an older workspace)."""
    return {name: ex for ex in exercises for name in (*ex.formerly, ex.file)}


def _named(exercise_id: str, exercises: list[Exercise]) -> Exercise:
    for ex in exercises:
        names = (ex.file, *ex.formerly)  # a file's name from an earlier version of the course still finds it
        if exercise_id == ex.id or exercise_id in names or exercise_id in (n.removesuffix(".py") for n in names):
            return ex
    import difflib

    near = difflib.get_close_matches(exercise_id, [ex.id for ex in exercises], n=3, cutoff=0.5)
    suggestion = f" (did you mean {' or '.join(near)}?)" if near else ""
    known = ", ".join(ex.id for ex in exercises)
    raise ManifestError(f"no exercise named {exercise_id!r}{suggestion}; known exercises: {known}")


def _located(exercise: Exercise, course: Course) -> Exercise:
    return replace(exercise, exercise_path=course.exercises_dir / exercise.file,
                   original_path=course.originals_dir / exercise.file,
                   solution_path=course.solutions_dir / (exercise.solution_file or exercise.file))


_REQUIRED = ("id", "title", "file", "entry", "chapter", "category", "points", "hints", "inputs")
_OPTIONAL = ("expected_break", "fails_eagerly", "allowed_config", "rtol", "atol", "task", "forbidden_ops",
             "opaque_calls", "opaque_step", "max_compilations", "polyfills", "input_gradients", "variant", "contract", "equivalent",
             "formerly", "domain")
# The checks every exercise has: a contract cannot take one of their names.
BUILT_IN_CHECKS = ("eager-runs", "eager-matches", "fullgraph-compiles", "no-graph-breaks", "compiled-matches",
                   "nothing-switched-off", "no-recompilation", "replay-matches", "no-environment-switch",
                   "past-the-bounds")
_VARIANT_CHANGES = ("expected_break", "allowed_config", "solution", "hints", "skip")


def _exercise_from_table(table: dict[str, Any]) -> Exercise:
    name = table.get("id", "<exercise without id>")
    missing = [key for key in _REQUIRED if key not in table]
    unknown = [key for key in table if key not in _REQUIRED + _OPTIONAL]
    if missing or unknown:
        raise ManifestError(f"exercise {name}: missing fields {missing}, unknown fields {unknown}")
    if table["category"] not in CATEGORIES:
        raise ManifestError(f"exercise {name}: category must be one of {CATEGORIES}")
    if not table["hints"]:
        raise ManifestError(f"exercise {name}: needs at least one hint")
    limit = table.get("max_compilations", 0)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ManifestError(f"exercise {name}: max_compilations must be a whole number of graphs, not {limit!r}")
    if not table.get("expected_break") and not limit:
        raise ManifestError(f"exercise {name}: needs expected_break (the GB id the unfixed file shows) or "
                            "max_compilations (for an exercise about recompilation)")
    step = table.get("opaque_step", "")
    if step and (not isinstance(step, str) or not step.isidentifier() or not table.get("opaque_calls")):
        raise ManifestError(f"exercise {name}: opaque_step names a function of the solution (with opaque_calls = "
                            f"true), not {step!r}")
    formerly = table.get("formerly", [])
    if not isinstance(formerly, list) or not all(
            isinstance(old, str) and old.endswith(".py") and Path(old).name == old for old in formerly):
        raise ManifestError(f"exercise {name}: formerly must list plain file names ending in .py, not {formerly!r}")
    domain = _domain_from_table(name, table.get("domain", {}))
    inputs = tuple(_input_from_table(name, case, domain) for case in table["inputs"])
    if not inputs:
        raise ManifestError(f"exercise {name}: needs at least one input")
    contracts = _contracts_from_tables(name, table.get("contract", ()))
    equivalent = tuple((str(e.get("mutant", "")), str(e.get("why", ""))) for e in table.get("equivalent", ()))
    if any(not mutant.startswith(("delete: ", "unwrap: ")) or not why for mutant, why in equivalent):
        raise ManifestError(f"exercise {name}: each `equivalent` needs a mutant (\"delete: <line>\" or "
                            "\"unwrap: <line>\") and why it changes nothing a check can see")
    fields = {key: table[key] for key in _REQUIRED + _OPTIONAL
              if key in table and key not in ("variant", "contract", "equivalent")}
    fields.update(hints=tuple(table["hints"]), inputs=inputs, expected_break=table.get("expected_break", ""),
                  allowed_config=tuple(table.get("allowed_config", ())),
                  forbidden_ops=tuple(table.get("forbidden_ops", ())), formerly=tuple(formerly),
                  polyfills=tuple(table.get("polyfills", ())),
                  variants=tuple(_variant_from_table(name, variant) for variant in table.get("variant", ())),
                  contracts=contracts, equivalent=equivalent, domain=domain)
    return Exercise(**fields)


def _domain_from_table(name: str, table: Any) -> dict[str, tuple[Any, ...]]:
    if not isinstance(table, dict) or not all(
            isinstance(values, list) and values and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                        for v in values) for values in table.values()):
        raise ManifestError(f"exercise {name}: domain maps each name to a list of numbers, not {table!r}")
    return {key: tuple(values) for key, values in table.items()}


def _contracts_from_tables(name: str, tables: Any) -> tuple[Contract, ...]:
    try:
        contracts = tuple(contract_from_table(table, lambda case: _input_from_table(name, case)) for table in tables)
    except ContractError as err:
        raise ManifestError(f"exercise {name}: {err}") from err
    names = [c.name for c in contracts]
    clash = sorted({n for n in names if names.count(n) > 1 or n in BUILT_IN_CHECKS})
    if clash:
        raise ManifestError(f"exercise {name}: contract names must differ from each other and from the built-in "
                            f"checks: {clash}")
    return contracts


def _variant_from_table(name: str, table: dict[str, Any]) -> Variant:
    unknown = sorted(set(table) - {"missing", "torch_before", "why", *_VARIANT_CHANGES})
    if unknown:
        raise ManifestError(f"exercise {name}: a variant has unknown fields {unknown}")
    if bool(table.get("missing")) == bool(table.get("torch_before")):
        raise ManifestError(f"exercise {name}: a variant needs exactly one condition, `missing` or `torch_before`")
    missing = table.get("missing", "")
    if missing and not (missing.startswith("torch.") or missing.startswith("GB")):
        raise ManifestError(f"exercise {name}: a variant's `missing` is a torch name or a GB id, not {missing!r}")
    if not any(key in table for key in _VARIANT_CHANGES):
        raise ManifestError(f"exercise {name}: a variant must change something: one of {_VARIANT_CHANGES}")
    if "hints" in table and not table["hints"]:
        raise ManifestError(f"exercise {name}: a variant's hints, when given, need at least one hint")
    allowed = table.get("allowed_config")
    return Variant(missing=missing, torch_before=table.get("torch_before", ""), why=table.get("why", ""),
                   expected_break=table.get("expected_break", ""),
                   allowed_config=tuple(allowed) if allowed is not None else None,
                   solution=table.get("solution", ""), hints=tuple(table.get("hints", ())), skip=table.get("skip", ""))


def _input_from_table(name: str, case: dict[str, Any], domain: dict[str, tuple[Any, ...]] | None = None) -> InputCase:
    args = tuple(case.get("args", ()))
    kwargs = dict(case.get("kwargs", {}))
    draw, replay = case.get("draw", {}), case.get("replay_draw", {})
    unknown = (set(case) - {"args", "kwargs", "note", "draw", "replay_draw"}) | set(draw) | set(replay)
    if unknown - {"args", "kwargs"}:
        raise ManifestError(f"exercise {name}: unknown input keys {sorted(unknown - {'args', 'kwargs'})}")
    draw_args, draw_kwargs = tuple(draw.get("args", ())), dict(draw.get("kwargs", {}))
    replay_args, replay_kwargs = tuple(replay.get("args", ())), dict(replay.get("kwargs", {}))
    if max(len(draw_args), len(replay_args)) > len(args) or (set(draw_kwargs) | set(replay_kwargs)) - set(kwargs):
        raise ManifestError(f"exercise {name}: a draw generator for an argument the input does not have")
    for value in (*args, *kwargs.values()):
        if isinstance(value, dict) and value:
            _validate_tensor_spec(name, value)
    for value in (*draw_args, *draw_kwargs.values(), *replay_args, *replay_kwargs.values()):
        named = domain_names(value)
        if named - set(domain or {}):
            raise ManifestError(f"exercise {name}: a draw names {sorted(named)}, not all in its domain "
                                f"{sorted(domain or {})}")
        if isinstance(value, dict) and "domain" in value and set(value) != {"domain"}:
            raise ManifestError(f"exercise {name}: `{{ domain = NAME }}` stands alone in a draw, not in {value}")
        if isinstance(value, dict) and value and "domain" not in value:
            _validate_tensor_spec(name, value)
    return InputCase(args=args, kwargs=kwargs, note=case.get("note", ""), draw_args=draw_args, draw_kwargs=draw_kwargs,
                     replay_args=replay_args, replay_kwargs=replay_kwargs)


def _validate_tensor_spec(name: str, spec: dict[str, Any]) -> None:
    makers = [key for key in spec if key in TENSOR_MAKERS]
    if len(makers) != 1:
        raise ManifestError(f"exercise {name}: a tensor input needs exactly one of {TENSOR_MAKERS}, got {spec}")
    extra = set(spec) - set(TENSOR_MAKERS) - {"seed", "scale", "shift", "shift_below_diagonal", "dtype", "low", "high",
                                              "exclude", "p", "requires_grad"}
    if extra:
        raise ManifestError(f"exercise {name}: unknown tensor-spec keys {sorted(extra)}")
    if spec.get("dtype", "float32") not in DTYPES:
        raise ManifestError(f"exercise {name}: dtype must be one of {DTYPES}")


def domain_names(spec: Any) -> set[str]:
    """The domain names a draw generator uses: `{ domain = "name" }`, or strings in a random tensor's shape."""
    if not isinstance(spec, dict):
        return set()
    if "domain" in spec:
        return {spec["domain"]}
    return {size for maker in ("randn", "rand", "randint", "bernoulli") for size in spec.get(maker, ())
            if isinstance(size, str)}


def build_call(case: InputCase, index: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fresh arguments for one input case; seeds default to the case index so inputs differ."""
    args = tuple(build_value(v, default_seed=index * 100 + i) for i, v in enumerate(case.args))
    kwargs = {k: build_value(v, default_seed=index * 100 + 50 + i) for i, (k, v) in enumerate(case.kwargs.items())}
    return args, kwargs
