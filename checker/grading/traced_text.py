"""What the file's text leaves in the code torch.compile traces from the entry: the grader's own reading.

Where a trace of the unfixed code already is the fixed graph (a print, a logger call, a warning, a clock
read, a deep copy, a class statement, `requires_grad_`, a vendored forward's import), the graph cannot tell a
fix from no fix: the lesson is the Python around it. These constructs read the file as Python would
(grading/file_text.py) and follow the code Dynamo would trace from the entry (grading/tracer.py):
  - `untraced_problem`: none of the names is in that code, outside eager-only branches. For `import` only, code
    the file hands to a hatch that keeps Dynamo out is not in it: an import is what Dynamo itself cannot trace,
    and there it does not try. The effects (a print, a log) are still read there, since such a hatch runs that
    code at most once, when the graph is made, and the effect would be gone from the calls. A function of the
    names handed on as a value (`{"p": print}`) fails closed: the reading cannot follow it;
  - `reached_problem`: that code still calls what the task keeps using (the vendored function, a dataclass),
    on every call: outside any branch or loop, in functions it reaches so too, given something computed from
    the inputs, with its result handed on to what is returned (grading/flow.py);
  - `runs_problem`: what the task keeps doing (a print, a log, a warning) is still called where the file runs
    it, eagerly included;
  - `hatch_problem`: a hatch is applied where it takes effect: in that code, or at module level on what that
    code calls on every call (not on a function nothing calls).
Each fails closed where the text cannot show what runs. A pure function of the file's text; no import.
"""

from __future__ import annotations

import ast

from checker.grading.branch_reads import SIZES, TENSOR_VALUES
from checker.grading.environment_reads import CAUGHT, ENVIRONMENT, Environment
from checker.grading.file_text import (KEEP_DYNAMO_OUT, LEFT_OUT_SETS, FileText, hatch_targets, left_out_names,
                                       parse_live, read_file)
from checker.grading.tracer import Tracer, entry_functions, module_body

# Patterns about Dynamo's own tracing, for which code under such a hatch is not in the trace.
_DYNAMO_ONLY = {"import"}
# Patterns that are not functions with an effect, which a file may name as values freely (`isinstance(n, int)`).
_NOT_EFFECTS = {"class", "int", "float", "bool"}
_UNREADABLE = "the grader cannot read the file's text (too deeply nested), so nothing shows what it traces."


def untraced_problem(source: str, entry: str, names: str, honoured: tuple[str, ...] = LEFT_OUT_SETS) -> str | None:
    """None when no name of `names` ("print", "copy.deepcopy", "time.*", ".requires_grad_", "class", "import"
    for an import statement, or "branch-on:NAME" for an `if`, `while`, `assert` or conditional expression whose
    test reads the module-level NAME, directly or through a local computed from it, "branch-on:tensor-values" for
    one whose test reads a tensor's values, or "loop-over:tensor-sizes" for a `for` or comprehension over a size
    (branch_reads.py); joined by '|') is in the code
    traced from `entry`; else what the grader found, and where. `honoured`: the sets of LEFT_OUT_SETS whose
    calls count as left out (those the exercise allows a fix to change; another is a switch, not a fix)."""
    reading = _entry_read(source, entry, honoured)
    if isinstance(reading, str):
        return reading
    tree, file, starts = reading
    wanted = names.split("|")
    branched_on = {pattern.split(":", 1)[1] for pattern in wanted if pattern.startswith(("branch-on:", "loop-over:"))}
    dynamo_only = [pattern for pattern in wanted if pattern in _DYNAMO_ONLY]
    effects = [pattern for pattern in wanted if pattern not in _DYNAMO_ONLY]
    try:
        tracer = Tracer(file, branched_on)
        found = [(name, line, effects) for name, line in tracer.references(starts)]
        if dynamo_only:
            found += [(name, line, dynamo_only) for name, line in
                      Tracer(file, branched_on, enter_hatched=False).references(starts)]
    except RecursionError:
        return _UNREADABLE
    if tracer.unreadable:
        return tracer.unreadable
    for name, line, patterns in found:
        if any(_matches(pattern, name) for pattern in patterns):
            shown = ("a class statement" if name == "class" else "an import statement" if name == "import"
                     else "a Python branch on what a tensor holds (an `if`, `while`, `assert` or conditional "
                     "expression whose test reads a tensor's values)" if name == f"branch-on:{TENSOR_VALUES}"
                     else "a Python loop over a size (a `for` or a comprehension whose iterable reads `.shape`, "
                     "`.size()` or `len()`), which Dynamo unrolls for each size" if name == f"loop-over:{SIZES}"
                     else f"a branch on `{name.split(':', 1)[1]}`" if name.startswith("branch-on:") else f"`{name}`")
            remedy = (", which Dynamo cannot trace: keep Dynamo out of the code that holds it (an escape hatch)"
                      if name == "import" else ": take it out of that code, or keep it where only eager runs reach it")
            return f"{shown} is still in the code torch.compile traces from `{entry}` (line {line}){remedy}."
    return _passed_as_value(file, tree, [pattern for pattern in effects if pattern not in _NOT_EFFECTS]) or None


def environment_problem(source: str, entry: str) -> str | None:
    """None when every test in the code traced from `entry` (outside hatched code and eager-only branches) reads
    only the call's inputs and the file's constants, and what the module runs when imported reads nothing of the
    process; else what was read, and where (environment_reads.py). Such a read may pick the fixed path where the
    file is checked and the unfixed one in the learner's own program."""
    reading = _entry_read(source, entry)
    if isinstance(reading, str):
        return reading
    tree, file, starts = reading
    # What the module does when imported is read too (a config set or a function bound only where a test says),
    # and what it calls then; not the body of `if __name__ == "__main__":`, which an import never runs.
    on_import = [statement for statement in tree.body if not _main_guard(statement)]
    imported = module_body(ast.Module(body=on_import, type_ignores=[]))
    try:
        environment = Environment(file, tree)
        tracer = Tracer(file, set(), enter_hatched=False, environment=environment)
        found = tracer.references([*starts, (imported, None)])
    except RecursionError:
        return _UNREADABLE
    if tracer.unreadable:
        return tracer.unreadable
    at_import = environment.import_time_read(on_import)  # class bodies too
    if at_import:
        line, read = at_import
        what = read if read == CAUGHT else f"reads `{read}`, which is not a constant the file writes out"
        return (f"what the module runs when imported (line {line}) {what}: there it could set a config, "
                "register a function or pick a path otherwise in your own program than where the file is checked. "
                "Set configs and build constants from literals alone, with nothing caught.")
    for name, line in found:
        if name in (f"branch-on:{ENVIRONMENT}", f"loop-over:{ENVIRONMENT}"):
            read = environment.shown.get(line)
            what = f"`{read}`" if read else "a value computed from the process's state"
            kind = "loop" if name.startswith("loop") else "test"
            return (f"the {kind} at line {line} (in the code torch.compile traces from `{entry}`, or in what the module "
                    f"runs when imported) reads {what}, which is neither the call's inputs nor a constant the file "
                    "writes out: it could pick another path in your own program than where the file is checked. "
                    "Branch only on the arguments (their shapes, dtypes, flags), the module's own attributes and "
                    "constants.")
    return None


def _main_guard(statement: ast.stmt) -> bool:
    test = statement.test if isinstance(statement, ast.If) else None
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__" and \
        len(test.comparators) == 1 and isinstance(test.ops[0], ast.Eq) and \
        isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"


def reached_problem(source: str, entry: str, names: str) -> str | None:
    """None when the code traced from `entry` calls one of `names` (joined by '|'; a class's name for building
    one, `C.apply` for an autograd.Function); else why not. What a task asks to keep using."""
    traced = _traced(source, entry)
    if isinstance(traced, str):
        return traced
    wanted = set(names.split("|"))
    wanted |= _subclasses(traced.file, wanted)  # a Function's subclass keeps its backward
    wanted |= _hatched_aliases(traced.file, wanted)  # `Fused = allow_in_graph(F)` is `F`
    surely, _ = traced.sure_calls(fed=True)
    if any(name in wanted or name.split(".")[0] in wanted for name in surely):  # `Boxes.from_rows(...)`
        return None
    shown = " or ".join(f"`{name}`" for name in sorted(wanted))
    return (f"the code torch.compile traces from `{entry}` does not use {shown} on every call: call it outside any "
            "branch or loop, on values computed from the inputs, and hand its result on to what is returned.")


def _hatched_aliases(file: FileText, names: set[str]) -> set[str]:
    """The module-level names bound once to a hatch applied to one of `names` (`allow_in_graph` hands back what it
    is given, `nonstrict_trace` a function that calls it)."""
    return {name for name, value in file.bound_values.items() if file.bindings.get(name, 0) == 1
            and isinstance(value, ast.Call) and value.args and file.resolve(value.func) in KEEP_DYNAMO_OUT
            and file.resolve(value.args[0]) in names}


def _subclasses(file: FileText, names: set[str]) -> set[str]:
    """The file's subclasses of `names`, at any depth, that keep their backward: one that defines a `backward` of
    its own (an autograd.Function's gradient re-derived) keeps nothing of it."""
    found: set[str] = set()
    while True:
        more = {name for name, node in file.classes.items()
                if any(file.resolve(base) in names | found for base in node.bases) and not _defines(node, "backward")}
        more -= found
        if not more:
            return found
        found |= more


def _defines(cls: ast.ClassDef, name: str) -> bool:
    """Whether the class's own body defines or assigns `name`."""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            return True
        targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return True
    return False


def runs_problem(source: str, entry: str, names: str, at_import: bool = True) -> str | None:
    """None when one of `names` (joined by '|', as for `untraced_problem`) is still called where the file runs
    it: from the entry (eager-only branches and calls left out of the trace included), or by the module's own
    statements when it is imported (a module built there: its `__init__`); else why not. What a task asks to
    keep doing: a print, a log, a warning. `at_import` False: from `entry` alone (a helper the task keeps)."""
    tracer = _traced(source, entry, eager_too=True, at_import=at_import)
    if isinstance(tracer, str):
        return tracer
    wanted = names.split("|")
    if any(_matches(pattern, name) for name, _ in tracer.called for pattern in wanted):
        return None
    shown = " or ".join(f"`{name}`" for name in wanted)
    if not at_import:
        return f"`{entry}` calls none of {shown}: the task keeps it doing that."
    return (f"the file no longer calls {shown} where `{entry}` or its import runs it: the task keeps it, so keep the "
            "call, where only eager runs reach it or outside the trace.")


def hatch_problem(source: str, entry: str, names: str) -> str | None:
    """None when one of `names` (joined by '|') is called where it takes effect: in the file's module-level
    statements (a decorator of a module-level definition or of its methods included), or in the code traced
    from `entry`; a call in a function nothing calls, or under a module-level `if`, does not count."""
    traced = _traced(source, entry)
    if isinstance(traced, str):
        return traced
    wanted = set(names.split("|"))
    surely, sure_functions = traced.sure_calls()
    reached = surely | {name for name, node in traced.file.functions.items() if id(node) in sure_functions}
    reached |= {name.split(".")[0] for name in surely}  # a class: built, or its `apply` called
    # On a function of torch's (`allow_in_graph(torch.tanh)`) a hatch changes nothing: Dynamo already puts it in
    # the graph. A polyfill stands in for one of torch's or Python's, as it is meant to.
    if wanted & surely or any(hatch in wanted and target in reached and (
            hatch.endswith("substitute_in_graph") or not target.startswith("torch."))
            for hatch, target in hatch_targets(traced.file, parse_live(source))):
        return None
    return (f"the file calls none of {', '.join(f'`{name}`' for name in sorted(wanted))} where it takes effect: at "
            f"module level on what the code torch.compile traces from `{entry}` calls on every call, or in that code.")


def _traced(source: str, entry: str, eager_too: bool = False, at_import: bool = True) -> Tracer | str:
    """The tracer after its walk from `entry`, or why the text cannot be followed. `eager_too`: what runs at all,
    from the entry and from the module's own statements when it is imported."""
    reading = _entry_read(source, entry)
    if isinstance(reading, str):
        return reading
    tree, file, starts = reading
    if eager_too and at_import:
        starts.append((module_body(tree), None))
    tracer = Tracer(file, set(), eager_too=eager_too)
    try:
        tracer.references(starts)
    except RecursionError:
        return _UNREADABLE
    return tracer.unreadable or tracer


def _entry_read(source: str, entry: str,
                honoured: tuple[str, ...] = LEFT_OUT_SETS) -> tuple[ast.Module, FileText, list] | str:
    """The file's tree, the grader's reading of it (read_file) and where the trace starts (entry_functions); or
    why the text cannot be followed there, in words for the report."""
    try:
        tree = parse_live(source)
        file = read_file(tree, honoured)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte
        return "needs the file to parse first"
    except (RecursionError, MemoryError):
        return _UNREADABLE
    starts = entry_functions(file, entry)
    if not starts:
        return (f"the grader cannot find in the file's text the code of `{entry}` (a module-level function, or a "
                "module-level instance of a class of the file), so nothing shows what it traces.")
    return tree, file, starts


def _passed_as_value(file: FileText, tree: ast.Module, patterns: list[str]) -> str:
    """A function of `patterns` named anywhere in the file but not called there (`{"p": print}`, `out = print` in
    a class, `partial(print)`): the reading cannot follow the value to where it is called, so it fails closed.
    What a left-out set the exercise allows is handed is not counted."""
    todo: list[ast.AST] = [tree]
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign)) and left_out_names(file, node):
            continue
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and id(node) not in called:
            name = file.resolve(node)
            if name and any(_matches(pattern, name) for pattern in patterns):
                return (f"the file hands `{name}` on as a value (line {node.lineno}), so the grader cannot follow it "
                        "to where it is called: call it by its name.")
        todo.extend(ast.iter_child_nodes(node))
    return ""


def _matches(pattern: str, name: str) -> bool:
    if pattern.endswith(".*"):
        return name.startswith(pattern[:-1])
    if pattern.startswith("."):
        return name.endswith(pattern)
    return name == pattern or (pattern == "print" and name == "builtins.print")


