"""The behaviour contracts as named checks: what the checked file did, against what the reference does.

`contract_checks` compares, for each contract of the exercise (checker/course/contracts.py), the checked
process's observations in each of its modes with the reference's on the same calls (observe.py), and reads
the structure contracts itself: the operations of the graphs its own replay ran, and the file's text as the
grader read it before the check began. A contract whose observation is missing or broken fails: an
observation is the checked process's word, and silence proves nothing. Pure: no processes, no I/O.
"""

from __future__ import annotations

import ast
from typing import Any

from checker.course.contracts import Contract
from checker.course.manifest import Exercise
from checker.dynamo import torch_support
from checker.grading.plain import gradients_difference, output_difference
from checker.grading.replay import op_name
from checker.grading.report import FAIL, PASS, SKIP, CheckResult
from checker.grading.dependence import MOVED
from checker.grading.file_text import LEFT_OUT_SETS, always_run, module_bindings, parse_live, resolver
from checker.grading.traced_text import hatch_problem, reached_problem, runs_problem, untraced_problem

_EFFECT_WORDS = {"stdout": "printed", "warnings": "warned", "logs": "logged"}


def contract_checks(exercise: Exercise, payloads: dict[str, Any], ref: dict[str, Any], verdict: Any,
                    source: str | None, original: str | None) -> list[CheckResult]:
    """One CheckResult per contract (graded-by contracts add none: their check is already in the report)."""
    checks = []
    for contract in exercise.contracts:
        if contract.kind == "graded-by":
            continue
        if contract.kind == "structure":
            problem = _structure_problem(contract, exercise.entry, verdict, source, original, exercise.allowed_config)
        else:
            problem = _observed_problem(exercise, contract, payloads, ref)
        if problem is None:
            checks.append(CheckResult(contract.name, PASS, f"as the task says: {contract.says}"))
        elif problem.startswith("needs "):
            checks.append(CheckResult(contract.name, SKIP, problem))
        else:
            checks.append(CheckResult(contract.name, FAIL,
                                      f"The task says: \"{contract.says}\". {problem[0].upper()}{problem[1:]}"))
    return checks


def _observed_problem(exercise: Exercise, contract: Contract, payloads: dict[str, Any], ref: dict[str, Any]) -> str | None:
    for mode in contract.modes:
        payload = payloads.get(mode)
        if not isinstance(payload, dict) or payload.get("stage") != "done" or payload["diagnosis"]["error"]:
            return f"needs the code to run in {mode} mode first"
        observed = payload.get("observed")
        if not isinstance(observed, dict) or "error" in observed or contract.name not in observed:
            return (f"In {mode} mode the checked process sent back no observation of it"
                    + (f" (a probe raised {observed['error'].get('type')})" if isinstance(observed, dict)
                       and isinstance(observed.get("error"), dict) else "") + ", so nothing shows that it holds.")
        want = ref["observed"].get(mode, {}).get(contract.name)  # none for an interface: a property of the file's
        problem = _KIND_PROBLEMS[contract.kind](exercise, contract, observed[contract.name], want)
        if problem:
            return f"{_MODE_WORDS[mode]}: {problem}"
    return None


_MODE_WORDS = {"eager": "Run eagerly", "default": "Compiled in default mode", "fullgraph": "Compiled with fullgraph=True"}


def _effects_problem(exercise: Exercise, contract: Contract, got: Any, want: Any) -> str | None:
    where = "when the file is imported" if contract.at == "import" else (
        "on the calls the task names" if contract.inputs else "during the calls")
    for kind in contract.effects:
        mine, theirs = got.get(kind), want.get(kind)
        if contract.compare == "count":
            mine, theirs = _counted(kind, mine), _counted(kind, theirs)
        if mine != theirs:
            return (f"{where}, the reference {_EFFECT_WORDS[kind]} {_shown(theirs)}; your code "
                    f"{_EFFECT_WORDS[kind]} {_shown(mine)}{_first_difference(mine, theirs)}.")
    return None


def _first_difference(mine: Any, theirs: Any) -> str:
    """Where two texts of several lines first differ, when it is not their first line (which _shown shows)."""
    ours, yours = (_lines(value) for value in (theirs, mine))
    index = next((i for i, (a, b) in enumerate(zip(ours, yours)) if a != b), None)
    if not index:  # the same lines up to the shorter's end, or a difference on the first line already shown
        return ""
    return f"; they first differ on line {index + 1}: {ours[index][:200]!r} against {yours[index][:200]!r}"


def _lines(value: Any) -> list[str]:
    return value.splitlines() if isinstance(value, str) else [str(item) for item in value or ()]


def _counted(kind: str, seen: Any) -> Any:
    if kind == "stdout":
        return len(str(seen or "").splitlines())
    return sorted(str(item).split(":", 1)[0] for item in seen or ())


def _shown(value: Any) -> str:
    if not value:
        return "nothing"
    if isinstance(value, int):
        return f"{value} line(s)"
    if isinstance(value, list) and all(isinstance(item, str) and ":" not in item for item in value):
        return f"{len(value)} ({', '.join(value)})"
    lines = _lines(value)
    first = lines[0][:200] + ("…" if len(lines[0]) > 200 else "") if lines else ""
    return repr(first) if len(lines) == 1 else f"{len(lines)} lines, the first {first!r}"


def _raises_problem(exercise: Exercise, contract: Contract, got: Any, want: Any) -> str | None:
    for index, (mine, theirs) in enumerate(zip(got, want)):
        note = contract.inputs[index].note
        which = f"invalid input {index + 1}" + (f" ({note})" if note else "")
        if not theirs:
            raise RuntimeError(f"the reference of {exercise.id} does not raise on {which} of {contract.name}")
        if not mine:
            return f"on {which} it returned a result, where the reference raises {theirs}."
        if contract.exception and mine != contract.exception:
            return f"on {which} it raised {mine}, not the {contract.exception} the task asks for."
    return None if len(got) == len(want) else f"{len(got)} of {len(want)} invalid inputs were tried."


def _state_problem(exercise: Exercise, contract: Contract, got: Any, want: Any) -> str | None:
    if isinstance(got, dict) and "error" in got and len(got) == 1:
        return f"after the calls, `{contract.expression}` raised {got['error']}."
    difference = output_difference(got, want, exercise.rtol, exercise.atol)
    return f"after the calls, `{contract.expression}` differs from the reference's: {difference}" if difference else None


def _gradients_problem(exercise: Exercise, contract: Contract, got: Any, want: Any) -> str | None:
    return gradients_difference(got, want, exercise.rtol, exercise.atol)


def _interface_problem(exercise: Exercise, contract: Contract, got: Any, want: Any) -> str | None:
    if isinstance(got, dict) and "error" in got and len(got) == 1:
        return f"`{contract.expression}` raised {got['error']}."
    if contract.returns == "positive-float" and not (isinstance(got, float) and got > 0):
        return f"`{contract.expression}` returned {got!r:.80}, not a positive number of seconds."
    if contract.returns == "positive-int" and not (type(got) is int and got > 0):
        return f"`{contract.expression}` returned {got!r:.80}, not a positive count."
    return None


_KIND_PROBLEMS = {"effects": _effects_problem, "raises": _raises_problem, "state": _state_problem,
                  "gradients": _gradients_problem, "interface": _interface_problem}


# --- structure: the grader's own reading ------------------------------------------------------------

def _structure_problem(contract: Contract, entry: str, verdict: Any, source: str | None,
                       original: str | None, allowed_config: tuple[str, ...] = ()) -> str | None:
    if contract.graph_holds:
        if isinstance(verdict, dict) and verdict.get("status") == FAIL:
            return "needs the grader's replay of the graph to pass first"
        if not isinstance(verdict, dict) or verdict.get("status") != PASS:  # fail closed: not shown is not held
            return ("the grader could not replay the graph, so nothing it established shows that the graph holds "
                    f"{' or '.join(contract.graph_holds.split('|'))}.")
        if ">" in contract.graph_holds:  # `a>b`: every b of the graph is computed from an a
            source, target = contract.graph_holds.split(">")
            fed = verdict.get("fed") or {}
            if target in fed and source in fed[target] and contract.graph_holds in (verdict.get("selected") or ()):
                return None
            if target in fed and source in fed[target]:
                return (f"the graph's `{target}` is computed from `{source}` but the graph does not work on the rows "
                        f"it selects alone (the grader's replay counted the rows each `{target}` takes, and what the "
                        f"graph makes where `{source}` selects none): the task asks for `{target}` on those alone.")
            return (f"not every `{target}` of the graph the grader replayed is computed from `{source}`: the task asks "
                    f"for `{target}` on what `{source}` selects, not the other way round.")
        copies, repeated = verdict.get("copies") or (0, "")
        if contract.copies_at_most and copies > contract.copies_at_most:
            return (f"the graph the grader replayed calls `{repeated}` {copies} times, where a fix needs it at most "
                    f"{contract.copies_at_most} times: work repeated once per iteration of a loop Dynamo ran while it "
                    "traced (unrolled), not a loop in the graph.")
        called = {op_name(name) for name in verdict.get("holds") or ()}  # on a path to the output, not left unused
        wanted = contract.graph_holds.split("|")
        found = called & set(wanted)
        moving = found & set(MOVED)  # found, but must also be what the result follows (dependence.py)
        if found - moving or moving & set(verdict.get("moved") or ()):
            return None
        if moving:
            return (f"the graph the grader replayed calls {' and '.join(sorted(moving))}, but its result does not "
                    "change with what that computes: the task asks the graph to use it.")
        return (f"the graph the grader replayed calls no {' or '.join(wanted)}: the task asks for it in the graph, "
                "where it runs when the graph runs.")
    kind, name, *start = contract.file_has.split()  # `runs NAMES from FUNCTION`
    if kind == "untraced":
        allowed = {alias for key in allowed_config for alias in torch_support.config_names_of(key)}
        honoured = tuple(key for key in LEFT_OUT_SETS if key in allowed)  # another would be switched off
        return untraced_problem(source or "", start[1] if start else entry, name, honoured)
    if kind == "reaches":
        return reached_problem(source or "", entry, name)
    if kind == "runs":
        return runs_problem(source or "", start[1], name, at_import=False) if start else \
            runs_problem(source or "", entry, name)
    if kind == "hatch":
        return hatch_problem(source or "", entry, name)
    try:
        tree = parse_live(source or "")
    except SyntaxError:
        return "needs the file to parse first"
    if kind == "dataclass":
        return None if _has_dataclass(tree, name) else (
            f"the file has no module-level dataclass `{name}` (a class decorated with `@dataclass`, or made with "
            "`dataclasses.make_dataclass`).")
    if kind == "config":
        return None if _sets_config(tree, name) else (
            f"the file does not turn on `torch._dynamo.config.{name}` (`torch._dynamo.config.{name} = True` when it "
            f"is imported, or `torch._dynamo.config.patch({name}=True)` around the compiled code).")
    if kind == "call":  # one of several, joined by '|'
        wanted = name.split("|")
        if set(wanted) & _calls(tree):
            return None
        return (f"the file no longer calls `{name}`." if len(wanted) == 1 else
                f"the file calls none of {', '.join(f'`{one}`' for one in wanted)}.")
    shipped = parse_live(original or "")
    theirs = _function_dump(shipped, name)
    if theirs is None or _function_dump(tree, name) != theirs:
        return f"`{name}` is not as the exercise ships it: leave its code as it is and fix the break around it."
    added = _own_decorators(tree, name) - _own_decorators(shipped, name)
    if added:  # a decorator of the file's own may hand back any code in its place; torch's hatches are the fix
        return (f"`{name}` is decorated with `{sorted(added)[0]}`, which is not torch's: what runs in its place is "
                "that decorator's, not the code the exercise ships. Leave it as it is and fix the break around it.")
    rebound = _rebinding(tree, name)
    if rebound:
        return (f"`{name}` is as the exercise ships it, but the file changes it afterwards ({rebound}): leave it as "
                "it is and fix the break around it.")
    shadowed = next((read for read in sorted(_globals_read(shipped, name))
                     if _bound_as(tree, read) != _bound_as(shipped, read)), "")
    if shadowed:  # the same text reading another `warnings` (a class of the file's) is other code
        return (f"`{name}` is as the exercise ships it, but `{shadowed}`, which it reads, is bound otherwise than in "
                "the file the exercise ships: leave what it uses as it is and fix the break around it.")
    return None


def _globals_read(tree: ast.Module, name: str) -> set[str]:
    """The names the module-level function or class `name` reads that nothing inside it binds: its globals and
    builtins."""
    node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and n.name == name), None)
    if node is None:
        return set()
    inside = [sub for sub in ast.walk(node)]
    bound = {sub.id for sub in inside if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load)}
    bound |= {sub.arg for sub in inside if isinstance(sub, ast.arg)}
    bound |= {sub.name for sub in inside if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return {sub.id for sub in inside if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)} - bound - {name}


def _bound_as(tree: ast.Module, name: str) -> set[str]:
    """What the module binds `name` to (not a function's locals): the modules imported under it (`import
    torch._dynamo` binds `torch`, as `import torch` does), and every other binding statement, as its text."""
    found, todo, module_level = set(), list(tree.body), []
    while todo:  # the module's statements and what they hold, but not the bodies of its functions and classes
        node = todo.pop()
        module_level.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo += list(ast.iter_child_nodes(node))
    for node in module_level:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    module = f"{'.' * node.level}{node.module or ''}." if isinstance(node, ast.ImportFrom) else ""
                    found.add(module + (alias.name if alias.asname or module else alias.name.split(".")[0]))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found.add(ast.dump(node))
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            found.add(ast.dump(node))
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            found.add(f"assigned ({type(node.ctx).__name__})")  # an assignment, a loop target, a `del`
    return found


def _rebinding(tree: ast.Module, name: str) -> str:
    """A statement that makes `name` other than its one module-level definition (a second definition, an
    assignment, an import under that name, a `global` rebinding, an assignment to one of its attributes, a
    setattr or delattr on it); "" when there is none."""
    definitions = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            definitions += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return f"`{type(node).__name__.lower()} {name}`"
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return f"an assignment to `{name}` at line {node.lineno}"
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and _dotted(node).startswith(name + "."):
            return f"an assignment to `{_dotted(node)}` at line {node.lineno}"
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return f"an import as `{name}`"
        elif isinstance(node, ast.Call) and _dotted(node.func) in ("setattr", "delattr") and node.args \
                and _dotted(node.args[0]).split(".")[0] == name:
            return f"`{_dotted(node.func)}` on `{name}` at line {node.lineno}"
    return f"{definitions} definitions of `{name}`" if definitions != 1 else ""


def _has_dataclass(tree: ast.Module, name: str) -> bool:
    """A module-level `@dataclass class NAME`, or `NAME = dataclasses.make_dataclass(...)`, bound once, where
    the decorator is the standard library's (not a `def dataclass(cls)` of the file's own)."""
    resolve = resolver(tree)
    if module_bindings(tree).get(name, 0) != 1:
        return False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                and isinstance(node.value, ast.Call) and resolve(node.value.func) == "dataclasses.make_dataclass":
            return True
        if isinstance(node, ast.ClassDef) and node.name == name:
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if resolve(target) == "dataclasses.dataclass":
                    return True
    return False


def _calls(tree: ast.Module) -> set[str]:
    """Every called name (a decorator is called too), with the file's import aliases spelled out
    (`np.interp` -> `numpy.interp`)."""
    resolve = resolver(tree)
    found = set()
    for node in ast.walk(tree):
        called = [node.func] if isinstance(node, ast.Call) else []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):  # `@f` calls f too
            called += [d for d in node.decorator_list if not isinstance(d, ast.Call)]
        found |= {resolve(func) for func in called} - {""}
    return found


def _sets_config(tree: ast.Module, name: str) -> bool:
    """`torch._dynamo.config.NAME = True` (however the config is imported) among the module's own statements,
    outside any branch, and set to nothing else anywhere; or `torch._dynamo.config.patch` with NAME=True (a
    decorator or a `with`) where it always runs (`always_run`)."""
    resolve, setting = resolver(tree), f"torch._dynamo.config.{name}"
    set_true = {id(t) for node in ast.walk(tree) if isinstance(node, ast.Assign) and _is_true(node.value)
                for t in node.targets}
    if any(isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and resolve(node) == setting
           and id(node) not in set_true for node in ast.walk(tree)) or any(
            isinstance(node, ast.Call) and resolve(node.func) == "torch._dynamo.config.patch"
            and any(k.arg == name and not _is_true(k.value) for k in node.keywords) for node in ast.walk(tree)):
        return False  # turned off again (a tuple's target, a loop's, a patch), or to what the text cannot tell
    for node in always_run(tree):  # not in a branch: a config turned on where a sign of the check is seen
        if node in tree.body and isinstance(node, ast.Assign) and _is_true(node.value) \
                and any(resolve(t) == setting for t in node.targets):
            return True
        if isinstance(node, ast.Call) and resolve(node.func) == "torch._dynamo.config.patch":
            if any(k.arg == name and _is_true(k.value) for k in node.keywords):
                return True
            if node.args and isinstance(node.args[0], ast.Dict) and any(
                    isinstance(key, ast.Constant) and key.value == name and _is_true(value)
                    for key, value in zip(node.args[0].keys, node.args[0].values)):
                return True
    return False


def _is_true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _own_decorators(tree: ast.Module, name: str) -> set[str]:
    """The decorators of the module-level definition NAME that are not torch's, as the file names them."""
    resolve = resolver(tree)
    return {resolve(d.func if isinstance(d, ast.Call) else d) or ast.dump(d) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name
            for d in node.decorator_list
            if not (resolve(d.func if isinstance(d, ast.Call) else d) or "").startswith("torch.")}


def _function_dump(tree: ast.Module, name: str) -> str | None:
    """A module-level function's signature and body, or a module-level class's bases and body (not their
    decorators: decorating one is a fix, not an edit)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.dump(ast.Module(body=[node.args, *node.body, node.returns or ast.Pass()], type_ignores=[]),
                            annotate_fields=False)
        if isinstance(node, ast.ClassDef) and node.name == name:
            return ast.dump(ast.Module(body=[*node.bases, *node.keywords, *node.body], type_ignores=[]),
                            annotate_fields=False)
    return None
