"""Mutation testing for `gbcheck verify`: is every line of a reference solution something the grade needs?

A mutant is the solution with one statement deleted (an empty block becomes `pass`), or one `with` block
replaced by its body. Docstrings are left alone. Every mutant is graded like a submission; one that passes
shows a part of the solution no check depends on: either the task asks for more than the checks see (a
missing contract) or the statement is truly redundant, which the manifest then declares (`equivalent`,
with a one-line reason). Mutants are graded the way a class is: in one warm grader, `parallel` at a time.
"""

from __future__ import annotations

import ast
import copy
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from checker.course import draws
from checker.course.manifest import Exercise
from checker.dynamo import engine
from checker.grading import sandbox
from checker.grading.report import Report
from checker.grading.strict import Trials, finish, trial_job
from checker.grading.warmup import warm_up


@dataclass(frozen=True)
class Mutant:
    """One change to a solution. `key` names it by what changed, not where, so that a manifest declaration
    survives edits above it: "delete: self.stats = torch.zeros(3)" or "unwrap: with torch.no_grad():"."""

    key: str
    line: int
    source: str


def mutants(source: str) -> list[Mutant]:
    """Every statement deleted, and every `with` unwrapped, one at a time (docstrings kept)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: dict[str, Mutant] = {}  # by source: two changes that give the same file are one mutant
    for path, statement in _statements(tree):
        text = lines[statement.lineno - 1].split("  #")[0].strip()
        for verb, change in (("delete", _delete), ("unwrap", _unwrap)):
            changed = change(tree, path)
            if changed is not None:
                source_text = ast.unparse(changed) + "\n"
                found.setdefault(source_text, Mutant(f"{verb}: {text}", statement.lineno, source_text))
    return list(found.values())


def _statements(tree: ast.Module) -> Iterator[tuple[tuple[tuple[str, int], ...], ast.stmt]]:
    """(path, statement) for every statement; a path is the chain of (field, index) from the module down."""
    def walk(node: ast.AST, path: tuple[tuple[str, int], ...]) -> Iterator:
        for field in ("body", "orelse", "finalbody", "handlers"):
            for index, child in enumerate(getattr(node, field, None) or ()):
                if not isinstance(child, (ast.stmt, ast.excepthandler)):
                    continue
                here = (*path, (field, index))
                if isinstance(child, ast.stmt) and not _is_docstring(node, field, index):
                    yield here, child
                yield from walk(child, here)
    yield from walk(tree, ())


def _is_docstring(parent: ast.AST, field: str, index: int) -> bool:
    child = getattr(parent, field)[index]
    return (field == "body" and index == 0 and isinstance(child, ast.Expr)
            and isinstance(child.value, ast.Constant) and isinstance(child.value.value, str))


def _locate(tree: ast.Module, path: tuple[tuple[str, int], ...]) -> tuple[ast.Module, list, int]:
    copied = copy.deepcopy(tree)
    node: ast.AST = copied
    for field, index in path[:-1]:
        node = getattr(node, field)[index]
    field, index = path[-1]
    return copied, getattr(node, field), index


def _delete(tree: ast.Module, path) -> ast.Module | None:
    copied, body, index = _locate(tree, path)
    del body[index]
    if not body:
        body.append(ast.Pass())
    return ast.fix_missing_locations(copied)


def _unwrap(tree: ast.Module, path) -> ast.Module | None:
    copied, body, index = _locate(tree, path)
    if not isinstance(body[index], (ast.With, ast.AsyncWith)):
        return None
    body[index:index + 1] = body[index].body
    return ast.fix_missing_locations(copied)


def grade_mutants(work: list[tuple[Exercise, list[Mutant]]], limits: sandbox.Limits,
                  parallel: int = 2) -> dict[tuple[str, Mutant], Report]:
    """Grade every mutant in one warm grader; reports keyed by (exercise id, mutant)."""
    # Dynamo's first compile patches torch.nn.Module (generation tagging), which a check's tamper snapshot
    # would report as the file's doing; warm_up below compiles nothing where every solution registers a
    # polyfill or an operator, so the engine's own warm-up does it first, as a check does.
    engine.warm_up()
    warm_up([exercise for exercise, _ in work], references=True)  # the course's authors: no secret
    reports: dict[tuple[str, Mutant], Report] = {}
    with tempfile.TemporaryDirectory(prefix="gbcheck-mutants-") as folder:
        jobs, keys, seeds, sources = [], [], [], []
        for number, (exercise, found) in enumerate(work):
            for index, mutant in enumerate(found):
                path = Path(folder) / f"{number}-{index}" / exercise.file  # the file keeps its name
                path.parent.mkdir()
                path.write_text(mutant.source, encoding="utf-8")
                seed = draws.fresh_seed()
                jobs.append(trial_job(exercise, str(path), seed))
                keys.append((exercise, mutant, str(path)))
                seeds.append(seed)
                sources.append(mutant.source)

        def on_done(index: int, outcome: sandbox.Outcome) -> None:
            exercise, mutant, path = keys[index]
            reports[(exercise.id, mutant)] = finish(exercise, path, Trials(outcome), seeds[index], limits,
                                                 source=sources[index])

        sandbox.run_jobs(jobs, limits, parallel, on_done=on_done)
    return reports
