"""What a grade means: every "keep", "still" and "must" of a task is a graded check, and every correct fix passes.

- the manifest's contracts quote their tasks, and every such word of a task is quoted by a contract;
- a solution with what its task keeps deleted fails that contract (mutants picked from the solution itself),
  and so do the hand-written wrong fixes in tests/wrong/ (each names the contract it breaks);
- every alternative fix in tests/alternatives/ passes, at least two per exercise;
- `gbcheck verify`'s mutation testing reports a passing mutant unless the manifest declares it equivalent.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from checker.course.manifest import ManifestError, find_exercise, load_exercises
from checker.grading import mutation
from checker.grading.report import FAIL, PASS, SKIP
from checker.grading.sandbox import Limits
from checker.grading.strict import check_file

HERE = Path(__file__).resolve().parent
EXERCISES = load_exercises()
# The words that make a task's sentence a requirement.
REQUIREMENT = re.compile(r"\b(keep|keeps|keeping|still|must|stays|stay)\b|\bwithout (editing|rewriting)\b", re.I)


@pytest.mark.parametrize("exercise", load_exercises(apply_variants=False), ids=lambda ex: ex.id)
def test_task_words_and_contracts_agree(exercise):
    spans = []
    for contract in exercise.contracts:
        assert contract.says in exercise.task, f"{contract.name} quotes words its task does not have"
        start = exercise.task.index(contract.says)
        spans.append((start, start + len(contract.says)))
    for word in REQUIREMENT.finditer(exercise.task):
        assert any(start <= word.start() < end for start, end in spans), \
            f"{exercise.id}: {word.group()!r} in the task is graded by no contract: {exercise.task}"


def test_the_course_grades_what_its_tasks_ask():
    kinds = {contract.kind for ex in EXERCISES for contract in ex.contracts}
    assert {"effects", "raises", "state", "gradients", "interface", "structure", "graded-by"} <= kinds
    assert sum(bool(ex.contracts) for ex in EXERCISES) >= 18


def test_no_solution_that_registers_operators_is_asked_what_its_import_does():
    # The grader imports such a reference once per process and reads it for what it computes alone
    # (grading/audit.py), so an effects contract at import would be compared with nothing.
    from checker.grading.trial import registers_operators
    registering = [ex for ex in EXERCISES if registers_operators(str(ex.solution_path))]
    assert len(registering) >= 5
    for ex in registering:
        assert not [c.name for c in ex.contracts if c.kind == "effects" and c.at == "import"], ex.id


@pytest.mark.parametrize("table, problem", [
    ('kind = "effects"\nsays = "x"', "needs a name"),
    ('name = "a-b"\nkind = "effects"\nsays = "x"', "needs effects"),
    ('name = "a-b"\nkind = "effects"\neffects = ["logs"]\nsays = "x"', "needs a `logger`"),
    ('name = "a-b"\nkind = "raises"\nsays = "x"', "needs inputs"),
    ('name = "a-b"\nkind = "structure"\nsays = "x"', "exactly one of graph_holds, file_has"),
    ('name = "a-b"\nkind = "structure"\nfile_has = "import torch"\nsays = "x"', "file_has is"),
    ('name = "a-b"\nkind = "state"\nexpression = "x"', "needs `says`"),
    ('name = "replay-matches"\nkind = "graded-by"\ncheck = "replay-matches"\nsays = "x"', "built-in checks"),
    ('name = "a-b"\nkind = "state"\nexpression = "x"\nsays = "x"\nmodes = ["compiled"]', "modes are some of"),
])
def test_a_malformed_contract_is_refused_with_its_field(tmp_path, table, problem):
    from checker.course.resolver import find_course

    course = find_course(HERE.parent)
    text = course.manifest_path.read_text(encoding="utf-8")
    first_exercise_end = text.index("\n[[exercise]]\n", text.index("\n[[exercise]]\n") + 1)
    manifest = tmp_path / "exercises.toml"
    manifest.write_text(text[:first_exercise_end] + f"\n[[exercise.contract]]\n{table}\n", encoding="utf-8")
    with pytest.raises(ManifestError, match=re.escape(problem)):
        load_exercises(replace(course, manifest_path=manifest))


# (exercise, the start of a mutant's key: a statement of the solution deleted, the contract it breaks)
DELETED = [
    ("eager-only-print", 'delete: print("attention: scores"', "prints-when-eager"),
    ("reorder-print", 'delete: print("rms_norm: clipped activations:"', "prints-preserved"),
    ("warn-at-init", "delete: warnings.warn(", "warns-when-built"),
    ("nested-activation-guard", "delete: logger.warning(", "warns-when-eager"),
    ("ignore-logger", "delete: logger.info(", "logs-when-eager"),
    ("check-box-count", "delete: torch._check(num_keep >= 1", "raises-without-boxes"),
    ("stats-off-hot-path", "delete: self.stats = torch.stack(", "stats-after-step"),
    ("capstone-block", "delete: self.attention_entropy = -(", "entropy-logged"),
    ("time-from-outside", 'delete: TIMINGS["layer"] = benchmark.Timer(', "timing-helper"),
    ("freeze-at-init", "delete: self.feature_encoder.requires_grad_(False)", "encoder-frozen"),
    ("streaming-accuracy", "delete: self.correct += (", "accuracy-over-every-batch"),
]


def test_a_solution_without_what_its_task_keeps_fails_that_contract():
    work, wanted = [], {}
    for exercise_id, key, contract in DELETED:
        exercise = find_exercise(exercise_id, EXERCISES)
        picked = [m for m in mutation.mutants(exercise.solution_path.read_text(encoding="utf-8"))
                  if m.key.startswith(key)]
        assert len(picked) == 1, f"{exercise_id}: no single statement {key!r} in the solution"
        work.append((exercise, picked))
        wanted[(exercise.id, picked[0])] = contract
    reports = mutation.grade_mutants(work, Limits(), parallel=2)
    for (exercise_id, mutant), contract in wanted.items():
        report = reports[(exercise_id, mutant)]
        checks = {check.name: check for check in report.checks}
        assert report.status == FAIL and checks[contract].status == FAIL, (mutant.key, report.to_dict())
        assert "The task says" in checks[contract].message


def test_the_mutants_of_solutions_that_all_register_a_polyfill_are_graded_on_their_own_merits():
    """With nothing for the grader's warm-up to compile (every solution registers a polyfill, so none is warmed up),
    Dynamo's first compile in a check must still not count as the file patching torch.nn.Module: a mutant that
    changes nothing a check can see passes, and one that drops the polyfill fails on its break."""
    exercise = find_exercise("crc32-constant-fold", EXERCISES)
    found = mutation.mutants(exercise.solution_path.read_text(encoding="utf-8"))
    emptied = next(m for m in found if m.key == exercise.equivalent[0][0])  # the polyfill's body, never traced
    dropped = next(m for m in found if m.key.startswith("delete: def _crc32"))
    reports = mutation.grade_mutants([(exercise, [emptied, dropped])], Limits(), parallel=2)
    assert reports[(exercise.id, emptied)].status == PASS, reports[(exercise.id, emptied)].to_dict()
    checks = {check.name: check for check in reports[(exercise.id, dropped)].checks}
    assert checks["no-graph-breaks"].status == FAIL and checks["nothing-switched-off"].status == PASS


WRONG = sorted((HERE / "wrong").glob("*.py"))


@pytest.mark.parametrize("path", WRONG, ids=lambda p: p.stem)
def test_a_wrong_fix_fails_the_contract_it_breaks(path):
    exercise = find_exercise(path.stem.split("__")[0], EXERCISES)
    text = path.read_text(encoding="utf-8")
    contracts = re.findall(r"\(contract ([\w-]+)\)", text)
    # "(contract NAME, on most draws)" or "on some draws": a check the draws catch it on, but not on every one (a
    # batch of the same accuracy as the rest); the check named plainly catches it on every draw
    sometimes = set(re.findall(r"\(contract ([\w-]+), on (?:most|some) draws\)", text))
    report = check_file(exercise, path)
    checks = {check.name: check for check in report.checks}
    assert contracts and report.status == FAIL, report.to_dict()
    assert all(checks[contract].status == FAIL for contract in contracts), report.to_dict()
    # only those; a check that does not apply (the replay of a graph calling the file's own code) fails nothing
    failing = [c.name for c in report.checks if c.status not in (PASS, SKIP)]
    assert [name for name in failing if name not in sometimes] == contracts, report.to_dict()


ALTERNATIVES = sorted(p for p in (HERE / "alternatives").glob("*.py") if not p.name.endswith(".rejected.py"))


def _unmet_need(path: Path) -> str:
    """Why an alternative cannot run on this torch, from its docstring's "Needs torch.x.y." or "Needs torch
    2.9 or later" line (as an exercise's variants declare it); "" when it can."""
    from checker.dynamo import torch_support

    text = path.read_text(encoding="utf-8")
    for feature in re.findall(r"^Needs (torch\.[\w.]+)\.$", text, re.M):
        if not torch_support.has_feature(feature):
            return f"this torch has no {feature}"
    for release in re.findall(r"^Needs torch (\d+\.\d+) or later", text, re.M):
        if torch_support.torch_before(release):
            return f"this torch is older than {release}"
    return ""


@pytest.mark.parametrize("path", ALTERNATIVES, ids=lambda p: p.stem)
def test_a_correct_alternative_fix_passes(path):
    exercise = find_exercise(path.stem.split("__")[0], EXERCISES)
    if exercise.skip or _unmet_need(path):
        pytest.skip(exercise.skip or _unmet_need(path))
    report = check_file(exercise, path)
    assert report.status == PASS, report.to_dict()


def test_every_exercise_has_two_alternative_fixes():
    counts = {ex.id: 0 for ex in EXERCISES}
    for path in ALTERNATIVES:
        counts[path.stem.split("__")[0]] += 1
    assert not {i: n for i, n in counts.items() if n < 2}, counts


def test_mutants_delete_each_statement_and_unwrap_each_with():
    source = '"""Docstring."""\nimport torch\n\n\ndef f(x):\n    """Its docstring."""\n' \
             '    with torch.no_grad():\n        y = x * 2\n    return y\n'
    keys = sorted(m.key for m in mutation.mutants(source))
    assert keys == ["delete: def f(x):", "delete: import torch", "delete: return y", "delete: with torch.no_grad():",
                    "delete: y = x * 2", "unwrap: with torch.no_grad():"]
    unwrapped = next(m for m in mutation.mutants(source) if m.key.startswith("unwrap"))
    assert "no_grad" not in unwrapped.source and "y = x * 2" in unwrapped.source
    emptied = next(m for m in mutation.mutants(source) if m.key == "delete: y = x * 2")
    assert "pass" in emptied.source  # an emptied block stays valid Python


def test_no_mutant_of_any_solution_passes_unless_declared_equivalent():
    """`gbcheck verify`'s mutation testing on the whole course (about 370 mutants, one warm grader)."""
    import argparse

    from checker.commands import instructor

    args = argparse.Namespace(jobs=2, timeout=60.0, memory=4096)
    assert instructor._surviving_mutants([ex for ex in EXERCISES if not ex.skip], args) == {}


def test_verify_reports_a_passing_mutant_unless_it_is_declared(monkeypatch, capsys):
    import argparse

    from checker.commands import instructor

    exercise = find_exercise("capstone-block", EXERCISES)
    args = argparse.Namespace(jobs=2, timeout=60.0, memory=4096)
    assert instructor._surviving_mutants([exercise], args) == {}  # the manifest declares its equivalents
    undeclared = replace(exercise, equivalent=exercise.equivalent[1:])
    problems = instructor._surviving_mutants([undeclared], args)["capstone-block"]
    assert len(problems) == 1 and "self.attention_entropy = 0.0" in problems[0] and "mutant passes" in problems[0]
    stale = replace(exercise, equivalent=(*exercise.equivalent, ("delete: return x", "no reason")))
    assert instructor._surviving_mutants([stale], args) == {}
    assert "declared equivalent, but no passing mutant is (delete: return x)" in capsys.readouterr().out


def test_what_a_probe_draws_is_new_on_every_check_and_the_same_for_the_file_and_the_reference():
    """A contract's expression runs with torch's generator seeded from the check's fresh inputs: the file and the
    reference, observed on the same calls, draw the same probes; another check draws others."""
    from checker.course import draws
    from checker.grading.observe import _probe_seed

    exercise = find_exercise("warn-at-init", EXERCISES)

    def calls(seed):
        return [(draw.args, draw.kwargs) for draw in draws.draws(exercise, seed)]

    assert _probe_seed(calls(1), "probe") == _probe_seed(calls(1), "probe")
    assert _probe_seed(calls(1), "probe") != _probe_seed(calls(2), "probe")
    assert _probe_seed(calls(1), "probe") != _probe_seed(calls(1), "another probe")


def test_the_file_rebuilt_with_another_table_follows_it_and_a_table_bound_twice_fails(tmp_path):
    from checker.grading.probes import rebuilt_with

    path = tmp_path / "tables.py"
    path.write_text("TABLE = {'a': 1}\nDOUBLED = {k: 2 * v for k, v in TABLE.items()}\n")
    assert rebuilt_with(str(path), "TABLE", "{'a': 5}").DOUBLED == {"a": 10}
    path.write_text("TABLE = {'a': 1}\nTABLE = {'a': 2}\n")
    with pytest.raises(ValueError, match="2 times"):
        rebuilt_with(str(path), "TABLE", "{'a': 5}")
