"""What the file's text leaves in the code torch.compile traces from the entry: the grader's own reading.

Where a trace of the unfixed code already is the fixed graph (a print, a logger call, a warning, a clock
read, a deep copy, a class statement, `requires_grad_`), the graph cannot tell a fix from no fix: the lesson
is the Python around it. `untraced_problem` reads the file as Python would and follows, from the entry, the
code Dynamo would trace:
  - the entry function's body, or for a module-level instance `x = C(...)` its class's `forward`, and the
    `forward` of every class of the file that `C.__init__` builds (submodules);
  - the file's functions and classes that code calls, by name (`helper(...)`, `self.method(...)`,
    `Class(...)` for its `__init__`, `__enter__` and `__exit__`, a property read or set), through a decorator
    of the file (its body, with a call of its parameter taken as a call of the decorated function);
  - not an eager-only branch: the body of `if not torch.compiler.is_compiling():` (or `is_dynamo_compiling`,
    `torch._dynamo.is_compiling`, a local name bound to one of them, the first operand of an `and`), the
    `else` of `if is_compiling():`, and what follows an `if is_compiling():` whose body returns or raises;
  - not a call Dynamo leaves out of the trace: a function the file's module-level code adds to
    `torch._dynamo.config.reorderable_logging_functions` or `ignore_logging_functions` (or
    `ignore_logger_methods`), with `logging.Logger.info` there covering `info` on every module-level logger;
  - `C.apply(...)` of an autograd.Function of the file: its `forward` and `backward`, which Dynamo traces (on a
    receiver the text cannot type, those of every autograd.Function the file names other than as a base);
  - for `import` only, not code the file hands to a hatch that keeps Dynamo out (`allow_in_graph`,
    `nonstrict_trace`, `disable`, `custom_op`, as a decorator or a module-level call): an import is what Dynamo
    itself cannot trace, and there it does not try. The effects (a print, a log) are still read there, since such
    a hatch runs that code at most once, when the graph is made, and the effect would be gone from the calls.
It over-approximates where the text cannot say (a nested function's body counts; a method call on an object of
unknown type counts when a class of the file that the code uses has a method of that name), so that a construct
the text shows is never looked past. A pure function of the file's text; no import, no execution.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

EAGER_ONLY_TESTS = {"torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling",
                    "torch._utils.is_compiling"}
# The config sets of functions whose calls Dynamo keeps out of the graph (reordered after it, or dropped).
LEFT_OUT_SETS = ("reorderable_logging_functions", "ignore_logging_functions", "ignore_logger_methods")
_SUBMODULE_METHODS = ("forward", "__call__")
_BUILT_METHODS = ("__init__", "__post_init__", "__enter__", "__exit__")
_FUNCTION_METHODS = ("forward", "backward")  # an autograd.Function's, traced by Dynamo on `.apply`
# Hatches under which Dynamo does not trace the code it is handed (torch 2.8 to 2.15).
KEEP_DYNAMO_OUT = {"torch.compiler.allow_in_graph", "torch._dynamo.allow_in_graph", "torch._dynamo.nonstrict_trace",
                   "torch.compiler.nonstrict_trace", "torch.compiler.disable", "torch._dynamo.disable",
                   "torch.library.custom_op", "torch._library.custom_ops.custom_op", "torch.library.triton_op"}
# Patterns about Dynamo's own tracing, for which code under such a hatch is not in the trace.
_DYNAMO_ONLY = {"import"}
_UNREADABLE = "the grader cannot read the file's text (too deeply nested), so nothing shows what it traces."


@dataclass
class _File:
    aliases: dict[str, str] = field(default_factory=dict)  # a name bound by an import -> what it names
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)  # module-level `x = C(...)` -> "C"
    loggers: set[str] = field(default_factory=set)  # module-level `x = logging.getLogger(...)`
    hatched: set[str] = field(default_factory=set)  # the file's functions and classes handed to KEEP_DYNAMO_OUT
    applied: set[str] = field(default_factory=set)  # its autograd.Functions named other than as a base
    wraps: dict[str, set[str]] = field(default_factory=dict)  # module-level `y = wrapper(f)` -> {"f"}: y calls f
    left_out: set[str] = field(default_factory=set)  # resolved names in LEFT_OUT_SETS
    found_methods: dict[tuple[str, tuple[str, ...]], list] = field(default_factory=dict)  # _methods, once each

    def resolve(self, node: ast.AST) -> str:
        """A dotted name with the file's import aliases spelled out (`np.interp` -> `numpy.interp`); an
        attribute of something that is not a name, as `.attr`; "" for anything else."""
        attributes = []
        while isinstance(node, ast.Attribute):  # a loop, not recursion: a file may hold a chain of any length
            attributes.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return f".{attributes[0]}" if attributes else ""
        return ".".join([self.aliases.get(node.id, node.id), *reversed(attributes)])


def untraced_problem(source: str, entry: str, names: str) -> str | None:
    """None when no name of `names` ("print", "copy.deepcopy", "time.*", ".requires_grad_", "class", "import"
    for an import statement, or "branch-on:NAME" for an `if`, `while`, `assert` or conditional expression whose
    test reads the module-level NAME, directly or through a local computed from it; joined by '|') is in the code
    traced from `entry`; else what the grader found, and where."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte
        return "needs the file to parse first"
    except (RecursionError, MemoryError):
        return _UNREADABLE
    file = _read_file(tree)
    starts = _entry_functions(file, entry)
    if not starts:
        return (f"the grader cannot find in the file's text the code of `{entry}` (a module-level function, or a "
                "module-level instance of a class of the file), so nothing shows what it traces.")
    wanted = names.split("|")
    branched_on = {pattern.split(":", 1)[1] for pattern in wanted if pattern.startswith("branch-on:")}
    dynamo_only = [pattern for pattern in wanted if pattern in _DYNAMO_ONLY]
    effects = [pattern for pattern in wanted if pattern not in _DYNAMO_ONLY]
    try:
        found = [(name, line, effects) for name, line in _Tracer(file, branched_on).references(starts)]
        if dynamo_only:
            found += [(name, line, dynamo_only) for name, line in
                      _Tracer(file, branched_on, enter_hatched=False).references(starts)]
    except RecursionError:
        return _UNREADABLE
    for name, line, patterns in found:
        if any(_matches(pattern, name) for pattern in patterns):
            shown = ("a class statement" if name == "class" else "an import statement" if name == "import"
                     else f"a branch on `{name.split(':', 1)[1]}`" if name.startswith("branch-on:") else f"`{name}`")
            remedy = (", which Dynamo cannot trace: keep Dynamo out of the code that holds it (an escape hatch)"
                      if name == "import" else ": take it out of that code, or keep it where only eager runs reach it")
            return f"{shown} is still in the code torch.compile traces from `{entry}` (line {line}){remedy}."
    return None


def reached_problem(source: str, entry: str, names: str) -> str | None:
    """None when the code traced from `entry` calls one of `names` (joined by '|'; a class's name for building
    one, `C.apply` for an autograd.Function); else why not. What a task asks to keep using."""
    traced = _traced(source, entry)
    if isinstance(traced, str):
        return traced
    wanted = names.split("|")
    if any(name in wanted or name.split(".")[0] in wanted for name, _ in traced.called):  # `Boxes.from_rows(...)`
        return None
    shown = " or ".join(f"`{name}`" for name in wanted)
    return f"the code torch.compile traces from `{entry}` never calls {shown}: keep using it there."


def hatch_problem(source: str, entry: str, names: str) -> str | None:
    """None when one of `names` (joined by '|') is called where it takes effect: in the file's module-level
    statements (a decorator of a module-level definition or of its methods included), or in the code traced
    from `entry`; a call in a function nothing calls, or under a module-level `if`, does not count."""
    traced = _traced(source, entry)
    if isinstance(traced, str):
        return traced
    wanted = set(names.split("|"))
    if wanted & ({name for name, _ in traced.called} | _module_level_calls(traced.file, ast.parse(source))):
        return None
    return (f"the file calls none of {', '.join(f'`{name}`' for name in sorted(wanted))} where it takes effect "
            f"(at module level, or in the code torch.compile traces from `{entry}`).")


def _traced(source: str, entry: str) -> _Tracer | str:
    """The tracer after its walk from `entry`, or why the text cannot be followed."""
    try:
        file = _read_file(ast.parse(source))
    except (SyntaxError, ValueError):
        return "needs the file to parse first"
    except (RecursionError, MemoryError):
        return _UNREADABLE
    starts = _entry_functions(file, entry)
    if not starts:
        return (f"the grader cannot find in the file's text the code of `{entry}` (a module-level function, or a "
                "module-level instance of a class of the file), so nothing shows what it traces.")
    tracer = _Tracer(file, set())
    try:
        tracer.references(starts)
    except RecursionError:
        return _UNREADABLE
    return tracer


def _module_level_calls(file: _File, tree: ast.Module) -> set[str]:
    """What the module's own statements call when it is imported: not a function's body (unless it is a
    decorator's), not a branch of a module-level `if`, `while` or `try`."""
    called = set()
    for statement in tree.body:
        definitions = [statement] + (statement.body if isinstance(statement, ast.ClassDef) else [])
        for definition in definitions:
            if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                called |= {file.resolve(d.func if isinstance(d, ast.Call) else d) for d in definition.decorator_list}
        if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.With)):
            roots = statement.items if isinstance(statement, ast.With) else [statement]
            called |= {file.resolve(node.func) for root in roots for node in ast.walk(root) if isinstance(node, ast.Call)}
    return called - {""}


def resolver(tree: ast.Module) -> Callable[[ast.AST], str]:
    """The file's dotted names as Python would resolve them, import aliases spelled out: node -> name."""
    return _read_file(tree).resolve


def _matches(pattern: str, name: str) -> bool:
    if pattern.endswith(".*"):
        return name.startswith(pattern[:-1])
    if pattern.startswith("."):
        return name.endswith(pattern)
    return name == pattern or (pattern == "print" and name == "builtins.print")


def _read_file(tree: ast.Module) -> _File:
    file = _File()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            file.aliases.update({(a.asname or a.name).split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                                 for a in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            file.aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            file.functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            file.classes[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):  # `say = print`
            file.aliases.update({t.id: file.resolve(node.value) for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            made = file.resolve(node.value.func)
            wrapped = {arg.id for arg in node.value.args if isinstance(arg, ast.Name)}
            for target in node.targets:
                if isinstance(target, ast.Name) and wrapped:
                    file.wraps[target.id] = wrapped
                if isinstance(target, ast.Name) and made == "logging.getLogger":
                    file.loggers.add(target.id)
                elif isinstance(target, ast.Name) and made:
                    file.instances[target.id] = made
    for statement in tree.body:
        file.hatched |= _handed_to_hatch(file, statement)
    file.applied = _named_autograd_functions(file, tree)
    for statement in tree.body:  # what module-level code puts in a left-out set, or a config.patch anywhere sets
        for node in ast.walk(statement):
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    or _is_call_of(file, node, {"torch._dynamo.config.patch"}):
                file.left_out |= _left_out_names(file, node)
    return file


def _named_autograd_functions(file: _File, tree: ast.Module) -> set[str]:
    functions: set[str] = set()
    while True:  # subclasses of subclasses
        more = {name for name, node in file.classes.items()
                if any(file.resolve(base) in functions | {"torch.autograd.Function"} for base in node.bases)}
        if more <= functions:
            break
        functions |= more
    bases = {id(base) for node in file.classes.values() for base in node.bases}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in functions
            and id(node) not in bases}


def _handed_to_hatch(file: _File, statement: ast.stmt) -> set[str]:
    """The file's functions and classes a module-level statement hands to KEEP_DYNAMO_OUT: by a decorator, or a
    call at module level (`allow_in_graph(F)`, `F = allow_in_graph(F)`); a call inside a function may never run,
    so it is not counted."""
    def hatch(node: ast.AST) -> bool:
        return file.resolve(node.func if isinstance(node, ast.Call) else node) in KEEP_DYNAMO_OUT

    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name} if any(hatch(d) for d in statement.decorator_list) else set()
    call = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    if not (isinstance(call, ast.Call) and hatch(call)):
        return set()
    return {arg.id for arg in call.args if isinstance(arg, ast.Name)}


def _left_out_names(file: _File, node: ast.AST) -> set[str]:
    """The functions `node` puts in one of LEFT_OUT_SETS: `.add(f)`, `.update({f})`, `|= {f}`, `= {f}` or
    `torch._dynamo.config.patch(SET={f})`."""
    def the_set(target: ast.AST) -> bool:
        return file.resolve(target) in {f"torch._dynamo.config.{name}" for name in LEFT_OUT_SETS}

    values: list[ast.AST] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and the_set(node.func.value) \
            and node.func.attr in ("add", "update"):
        values = list(node.args)
    elif _is_call_of(file, node, {"torch._dynamo.config.patch"}):  # patch(reorderable_logging_functions={f})
        values = [keyword.value for keyword in node.keywords if keyword.arg in LEFT_OUT_SETS]
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and the_set(node.target) and node.value:
        values = [node.value]
    elif isinstance(node, ast.Assign) and any(the_set(target) for target in node.targets):
        values = [node.value]
    found = set()
    for value in values:
        items = value.elts if isinstance(value, (ast.Set, ast.List, ast.Tuple)) else [value]
        found |= {file.resolve(item) for item in items} - {""}
    return found


def _entry_functions(file: _File, entry: str) -> list[tuple[ast.AST, str | None]]:
    if entry in file.functions:
        return [(file.functions[entry], None)]
    made = file.instances.get(entry)
    if made in file.classes:
        return [(method, made) for method in _methods(file, made, _SUBMODULE_METHODS)]
    return []


def _methods(file: _File, class_name: str, names: tuple[str, ...]) -> list[ast.FunctionDef]:
    """The class's own definitions of `names`, else its file bases' (the nearest one)."""
    if (class_name, names) in file.found_methods:
        return file.found_methods[class_name, names]
    found, seen = [], set()
    queue = [class_name]
    while queue:
        current = queue.pop(0)
        if current in seen or current not in file.classes:
            continue
        seen.add(current)
        for node in file.classes[current].body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names \
                    and all(node.name != other.name for other in found):
                found.append(node)
        queue += [file.resolve(base) for base in file.classes[current].bases]
    file.found_methods[class_name, names] = found
    return found


def _is_call_of(file: _File, node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Call) and file.resolve(node.func) in names


class _Tracer:
    """A walk over the code Dynamo would trace, yielding (resolved name, line) for every name it refers to."""

    def __init__(self, file: _File, branched_on: set[str], enter_hatched: bool = True):
        self.file = file
        self.enter_hatched = enter_hatched  # False: code handed to a hatch is not traced
        self.branched_on = branched_on  # module-level names a branch of the traced code may not read
        self.seen: set[int] = set()
        # (function, its class, the function it decorates, the parameter that function is passed as)
        self.queue: list[tuple[ast.AST, str | None, ast.AST | None, str | None]] = []
        self.found: list[tuple[str, int]] = []
        self.called: list[tuple[str, int]] = []  # every call's callee, resolved (`Boxes`, `RMSNormFunction.apply`)
        self.live_classes: set[str] = set()

    def references(self, starts: list[tuple[ast.AST, str | None]]) -> list[tuple[str, int]]:
        self.queue = [(function, owner, None, None) for function, owner in starts]
        for _, owner in starts:
            self._use_class(owner)
        while self.queue:
            function, self.owner, self.decorated, self.parameter = self.queue.pop(0)
            if id(function) in self.seen:
                continue
            self.seen.add(id(function))
            self.compiling: set[str] = set()  # local names bound to is_compiling() in this function
            self.derived: dict[str, str] = {}  # local name -> the branched-on global it was computed from
            self._block(function.body)
        return self.found

    def _use_class(self, name: str | None) -> None:
        """A class whose code the trace reaches: its submodules' forward is traced too."""
        if name is None or name in self.live_classes or name not in self.file.classes:
            return
        self.live_classes.add(name)
        for init in _methods(self.file, name, ("__init__",)):
            for node in ast.walk(init):
                if isinstance(node, ast.Call) and self.file.resolve(node.func) in self.file.classes:
                    built = self.file.resolve(node.func)
                    self._use_class(built)
                    self._enqueue_forward(built)

    def _enqueue_forward(self, class_name: str) -> None:
        methods = _methods(self.file, class_name, _SUBMODULE_METHODS)
        self.queue += [(method, class_name, None, None) for method in methods]

    # --- statements, with the eager-only branches left out ---------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self._branch(statement)
            if isinstance(statement, ast.If):
                eager_only = self._eager_only(statement.test)
                if eager_only == "body":
                    self._expressions(statement.test)
                    self._block(statement.orelse)
                    continue
                if eager_only == "else":
                    self._block(statement.body)
                    if statement.body and isinstance(statement.body[-1], (ast.Return, ast.Raise)):
                        return  # what follows runs only when not compiling
                    continue
            if isinstance(statement, ast.Assign) and _is_call_of(self.file, statement.value, EAGER_ONLY_TESTS):
                self.compiling |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
            if isinstance(statement, ast.ClassDef):
                self.found.append(("class", statement.lineno))
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                self.found.append(("import", statement.lineno))
            self._statement(statement)

    def _branch(self, statement: ast.stmt) -> None:
        """Record a test that reads a branched-on global; follow what locals are computed from one."""
        if not self.branched_on:
            return

        def read(node: ast.AST) -> str:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and (sub.id in self.branched_on or sub.id in self.derived):
                    return self.derived.get(sub.id, sub.id)
            return ""

        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            source = read(statement.value)
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and source:
                        self.derived[name.id] = source
        tests = [statement.test] if isinstance(statement, (ast.If, ast.While, ast.Assert)) else []
        own = [value for name, value in ast.iter_fields(statement)  # not the statements nested in it
               if isinstance(value, ast.AST) and name not in ("body", "orelse", "finalbody", "handlers")]
        tests += [node.test for root in own for node in ast.walk(root) if isinstance(node, ast.IfExp)]
        for test in tests:
            if read(test):
                self.found.append((f"branch-on:{read(test)}", test.lineno))

    def _statement(self, statement: ast.stmt) -> None:
        for name, value in ast.iter_fields(statement):
            items = value if isinstance(value, list) else [value]
            if items and all(isinstance(item, ast.stmt) for item in items) and name in ("body", "orelse", "finalbody"):
                self._block(items)
            elif name == "handlers":
                for handler in items:
                    self._block(handler.body)
            else:
                for item in items:
                    if isinstance(item, ast.AST):
                        self._expressions(item)

    def _eager_only(self, test: ast.expr) -> str:
        """"body" when the branch runs only eagerly, "else" when its else-branch does, "" otherwise."""
        def compiling(node: ast.AST) -> bool:
            return _is_call_of(self.file, node, EAGER_ONLY_TESTS) or (isinstance(node, ast.Name)
                                                                      and node.id in self.compiling)

        def not_compiling(node: ast.AST) -> bool:
            return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and compiling(node.operand)

        if not_compiling(test) or (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
                                   and any(not_compiling(value) for value in test.values)):
            return "body"
        return "else" if compiling(test) else ""

    # --- expressions: what they name, and the code of the file they call ---------------------------------

    def _expressions(self, root: ast.AST) -> None:
        skipped: set[int] = set()  # the callee nodes of calls Dynamo leaves out
        for node in ast.walk(root):  # a lambda's body included: it may run in the trace
            if isinstance(node, ast.Call):
                if self._left_out(node.func):
                    skipped |= {id(sub) for sub in ast.walk(node.func)}
                    continue
                self.called.append((self.file.resolve(node.func), node.lineno))
                self._follow_call(node)
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in skipped:
                name = self.file.resolve(node)
                if name:
                    self.found.append((name, node.lineno))
                self._follow_property(node)

    def _left_out(self, func: ast.AST) -> bool:
        name = self.file.resolve(func)
        if name in self.file.left_out:
            return True
        head, _, method = name.rpartition(".")
        return head in self.file.loggers and f"logging.Logger.{method}" in self.file.left_out

    def _follow_call(self, call: ast.Call) -> None:
        name = self.file.resolve(call.func)
        head, _, method = name.rpartition(".")
        if not self.enter_hatched and (name in self.file.hatched or head in self.file.hatched):
            return
        for wrapped in self.file.wraps.get(name, ()):  # `y = nonstrict_trace(f)`, `y = partial(f, ...)`: y calls f
            if wrapped in self.file.functions and (self.enter_hatched or wrapped not in self.file.hatched):
                self.called.append((wrapped, call.lineno))
                self._enqueue_function(self.file.functions[wrapped], None)
        if self.parameter and name == self.parameter and self.decorated is not None:
            self.queue.append((self.decorated, self.owner, None, None))
        elif name in self.file.functions:
            self._enqueue_function(self.file.functions[name], None)
        elif name in self.file.classes:
            self._use_class(name)
            self.queue += [(method, name, None, None) for method in _methods(self.file, name, _BUILT_METHODS)]
        elif method == "apply" and (head in self.file.classes or isinstance(call.func, ast.Attribute)):
            applied = [head] if head in self.file.classes else sorted(self.file.applied)  # the receiver, or any
            for function_class in applied:
                if self.enter_hatched or function_class not in self.file.hatched:
                    self.queue += [(function, function_class, None, None)
                                   for function in _methods(self.file, function_class, _FUNCTION_METHODS)]
        elif self.file.instances.get(name) in self.file.classes:  # a module-level module, called
            self._use_class(self.file.instances[name])
            self._enqueue_forward(self.file.instances[name])
        elif isinstance(call.func, ast.Attribute):
            receiver = self.file.resolve(call.func.value)
            owners = [self.owner] if receiver == "self" and self.owner else sorted(self.live_classes)
            for owner in owners:
                for method in _methods(self.file, owner, (call.func.attr,)):
                    self._enqueue_function(method, owner)

    def _enqueue_function(self, function: ast.FunctionDef, owner: str | None) -> None:
        decorators = [self.file.resolve(d.func if isinstance(d, ast.Call) else d) for d in function.decorator_list]
        wrappers = [self.file.functions[d] for d in decorators if d in self.file.functions]
        if wrappers:  # the decorator's code runs instead, and calls the decorated function through its parameter
            for wrapper in wrappers:
                parameter = wrapper.args.args[0].arg if wrapper.args.args else None
                self.queue += [(inner, owner, function, parameter) for inner in ast.walk(wrapper)
                               if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef))]
        else:
            self.queue.append((function, owner, None, None))

    def _follow_property(self, node: ast.AST) -> None:
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and self.owner):
            return
        setter = isinstance(node.ctx, ast.Store)
        for cls in [self.owner]:
            for item in self.file.classes[cls].body:
                if isinstance(item, ast.FunctionDef) and item.name == node.attr and item.decorator_list:
                    is_setter = any(self.file.resolve(d).endswith(".setter") for d in item.decorator_list)
                    if is_setter == setter:
                        self.queue.append((item, cls, None, None))
