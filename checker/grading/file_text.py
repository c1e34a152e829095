"""What a file's text defines, binds and hands to Dynamo, as Python resolves it: the grader's reading of a
checked file, for the constructs of grading/traced_text.py.

A pure function of the text (no import, no execution): the file's import aliases, its module-level functions,
classes, instances and loggers, how many times it binds each name, what it hands to a hatch that keeps Dynamo
out (`allow_in_graph`, `nonstrict_trace`, `disable`, `custom_op`), and which functions its module-level code
puts in a set of Dynamo's config whose calls are left out of the trace.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

# The config sets of functions whose calls Dynamo keeps out of the graph (reordered after it, or dropped).
LEFT_OUT_SETS = ("reorderable_logging_functions", "ignore_logging_functions", "ignore_logger_methods")
# Hatches under which Dynamo does not trace the code it is handed (torch 2.8 to 2.15).
KEEP_DYNAMO_OUT = {"torch.compiler.allow_in_graph", "torch._dynamo.allow_in_graph", "torch._dynamo.nonstrict_trace",
                   "torch.compiler.nonstrict_trace", "torch.compiler.disable", "torch._dynamo.disable",
                   "torch.library.custom_op", "torch._library.custom_ops.custom_op", "torch.library.triton_op"}


# The C modules whose functions a standard module hands on as its own (`bisect.bisect_left is _bisect.bisect_left`):
# a name read through the C module is the standard one's, as Dynamo's message and the manifest may spell it.
ACCELERATED = {"_bisect": "bisect", "_heapq": "heapq"}


@dataclass
class FileText:
    """What read_file found in one file's text."""

    aliases: dict[str, str] = field(default_factory=dict)  # a name bound by an import -> what it names
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)  # module-level `x = C(...)` -> "C"
    loggers: set[str] = field(default_factory=set)  # module-level `x = logging.getLogger(...)`
    hatched: set[str] = field(default_factory=set)  # the file's functions and classes handed to KEEP_DYNAMO_OUT
    operators: dict[str, str] = field(default_factory=dict)  # "ns::name" -> the file's function that implements it
    applied: set[str] = field(default_factory=set)  # its autograd.Functions named other than as a base
    bound_values: dict[str, ast.expr] = field(default_factory=dict)  # module-level `y = <not a plain name>`
    bindings: dict[str, int] = field(default_factory=dict)  # how many times the module binds each name
    honoured: tuple[str, ...] = LEFT_OUT_SETS  # the left-out sets the exercise lets a fix use
    left_out: set[str] = field(default_factory=set)  # resolved names in LEFT_OUT_SETS
    found_methods: dict[tuple[str, tuple[str, ...]], list] = field(default_factory=dict)  # methods, once each

    def resolve(self, node: ast.AST) -> str:
        """A dotted name with the file's import aliases spelled out (`np.interp` -> `numpy.interp`); an
        attribute of something that is not a name, as `.attr`; "" for anything else."""
        attributes = []
        while isinstance(node, ast.Attribute):  # a loop, not recursion: a file may hold a chain of any length
            attributes.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return f".{attributes[0]}" if attributes else ""
        root = self.aliases.get(node.id, node.id)
        head, dot, rest = root.partition(".")
        root = ACCELERATED.get(head, head) + dot + rest
        return ".".join([root, *reversed(attributes)])


@functools.lru_cache(maxsize=4)  # a check reads one file's text several times (each reading, the gate): parse it once
def parse_live(source: str) -> ast.Module:
    """The file's syntax tree without the statements Python never runs, which a construct must not count: what
    follows a `return`, `raise`, `break` or `continue` in its block, and the side of an `if` or `while` that a
    constant test (`if False:`) rules out. Raises what ast.parse raises. A loop, not recursion, like the reading."""
    tree = ast.parse(source)
    for node in ast.walk(tree):  # each node's children are queued before it is changed: what is cut is still read
        test = node.test if isinstance(node, (ast.If, ast.While)) else None
        if isinstance(test, ast.Constant):
            setattr(node, "body" if not test.value else "orelse", [])
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and all(isinstance(statement, ast.stmt) for statement in block):
                ends = [i for i, statement in enumerate(block) if isinstance(statement, _ENDS)]
                block = block[:ends[0] + 1] if ends else block
                setattr(node, name, block or ([ast.Pass()] if name == "body" else []))
    return ast.fix_missing_locations(tree)


_ENDS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def resolver(tree: ast.Module) -> Callable[[ast.AST], str]:
    """The file's dotted names as Python would resolve them, import aliases spelled out: node -> name."""
    return read_file(tree).resolve


def read_file(tree: ast.Module, honoured: tuple[str, ...] = LEFT_OUT_SETS) -> FileText:
    """The file's definitions, bindings and hatches; `honoured`: the left-out sets whose additions count."""
    file = FileText(honoured=honoured)
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
        elif isinstance(node, ast.Assign):  # `y = wrapper(f)`, `y = lambda: ...`, `y = (P(),)[0]`: calling y runs it
            file.bound_values.update({t.id: node.value for t in node.targets if isinstance(t, ast.Name)})
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            made = file.resolve(node.value.func)
            for target in node.targets:
                if isinstance(target, ast.Name) and made == "logging.getLogger":
                    file.loggers.add(target.id)
                elif isinstance(target, ast.Name) and made:
                    file.instances[target.id] = made
    file.bindings = module_bindings(tree)
    for statement in tree.body:
        file.hatched |= handed_to_hatch(file, statement)
    file.applied = named_autograd_functions(file, tree)
    file.operators = registered_operators(file, tree)
    for statement in tree.body:  # what module-level code puts in a left-out set, or a config.patch anywhere sets
        for node in always_run(statement):
            if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    or is_call_of(file, node, {"torch._dynamo.config.patch"}):
                file.left_out |= left_out_names(file, node)
    if _empties_a_left_out_set(file, tree):  # what is taken out again, the reading cannot follow: nothing counts
        file.left_out = set()
    return file


def _empties_a_left_out_set(file: FileText, tree: ast.Module) -> bool:
    """Whether the file takes anything out of a left-out set anywhere: `.clear()`, `.remove(f)`, `-=`, a store
    the reading does not count as filling it (`SET, _ = set(), 0`, `for SET in ...`)."""
    sets = {f"torch._dynamo.config.{name}" for name in file.honoured}
    filled = {id(t) for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets}
    filled |= {id(node.target) for node in ast.walk(tree) if isinstance(node, ast.AugAssign)
               and isinstance(node.op, ast.BitOr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and file.resolve(node.func.value) in sets \
                and node.func.attr not in ("add", "update", "copy", "issubset", "issuperset", "union"):
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and file.resolve(node) in sets and id(node) not in filled:
            return True
    return False


def may_skip(statement: ast.AST, field_name: str) -> bool:
    """Whether a field of a statement may not run when the statement does: a branch, a loop's body, a handler, a
    match case, a nested definition's body; not a `with` body, a `try` body or its finally."""
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return field_name in ("body", "orelse")
    if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
        return field_name in ("handlers", "orelse")
    if isinstance(statement, ast.Match):
        return field_name == "cases"
    return isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) \
        and field_name == "body"


def always_run(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and what it holds that runs whenever it does (a definition's body: whenever it is called): not what
    `may_skip` says a statement may skip (an `if`'s branches, a loop's body, a `try`'s handlers, a `match`'s
    cases), nor the operands `and`, `or` and `x if c else y` may skip, a lambda's or a comprehension's body. A
    setting made there may not be made where the file is used (`if torch.get_num_threads() == 1:` tells the
    grader's process from a program's own), so it is not counted."""
    yield node
    if isinstance(node, ast.IfExp):
        inside = [node.test]
    elif isinstance(node, ast.BoolOp):
        inside = node.values[:1]
    elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        inside = []
    else:
        definition = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        inside = [child for name, value in ast.iter_fields(node) if definition or not may_skip(node, name)
                  for child in (value if isinstance(value, list) else [value]) if isinstance(child, ast.AST)]
    for child in inside:
        yield from always_run(child)


def conditional_nodes(root: ast.AST) -> set[int]:
    """The nodes of an expression that may not be evaluated when it is: the branches of a conditional
    expression, the operands after the first of `and` and `or`, a comprehension's and a lambda's insides."""
    maybe: set[int] = set()
    for node in ast.walk(root):
        if isinstance(node, ast.IfExp):
            parts = [node.body, node.orelse]
        elif isinstance(node, ast.BoolOp):
            parts = node.values[1:]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
            parts = [child for child in ast.iter_child_nodes(node)]
        else:
            continue
        maybe |= {id(sub) for part in parts for sub in ast.walk(part)}
    return maybe


def module_bindings(tree: ast.Module) -> dict[str, int]:
    """How many statements bind each name in the module's own scope (a definition, an assignment, an import,
    a `for` or `with` target, in any branch of a module-level statement), and a `global` anywhere counts as
    one more: a name bound twice may not be the definition the reading follows."""
    counts: dict[str, int] = {}

    def bind(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    def scope(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(statement.name)
                continue
            for node in ast.walk(statement):  # not into a lambda's or comprehension's own names: they are Load
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    bind(node.id)
                elif isinstance(node, ast.alias):
                    bind((node.asname or node.name).split(".")[0])
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bind(node.name)  # defined in a module-level branch (its body is not the module's scope)
    scope(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name)
    return counts


_READABLE_DECORATORS = ("torch.", "functools.", "dataclasses.", "typing.", "contextlib.", "abc.")


def unreadable_decorators(file: FileText, definition: ast.AST) -> str:
    """A decorator the reading cannot follow, which may put other code in the definition's place; "" if none."""
    for decorator in getattr(definition, "decorator_list", ()):
        name = file.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name in file.functions or name.startswith(_READABLE_DECORATORS) or name.rpartition(".")[2] in (
                "staticmethod", "classmethod", "property", "setter", "getter", "deleter", "dataclass"):
            continue
        return (f"a decorator the grader cannot read (line {decorator.lineno}) may put other code in place of "
                f"`{definition.name}`, so nothing shows what it traces.")
    return ""


def named_autograd_functions(file: FileText, tree: ast.Module) -> set[str]:
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


def through_hatch(file: FileText, call: ast.Call) -> ast.Call:
    """`hatch(f)(x)`, a hatch of KEEP_DYNAMO_OUT applied where it is called, as the call `f(x)` it makes; any
    other call as it is."""
    inner = call.func
    if isinstance(inner, ast.Call) and inner.args and file.resolve(inner.func) in KEEP_DYNAMO_OUT:
        return ast.copy_location(ast.Call(func=inner.args[0], args=call.args, keywords=call.keywords), call)
    return call


def built_as(file: FileText, owner: str | None, attribute: str) -> str | None:
    """The file's class that `owner`'s `__init__` builds as `self.<attribute>` (once, and nothing else bound
    there), whose forward a call `self.<attribute>(...)` runs; None where the text does not say."""
    built = set()
    for init in class_methods(file, owner, ("__init__",)) if owner else ():
        for node in ast.walk(init):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) else [(target, node.value)])
                for one, value in pairs:
                    if isinstance(one, ast.Attribute) and isinstance(one.value, ast.Name) \
                            and one.value.id == "self" and one.attr == attribute:
                        built.add(file.resolve(value.func) if isinstance(value, ast.Call) else "")
    only = built.pop() if len(built) == 1 else None
    return only if only in file.classes else None


def handed_to_hatch(file: FileText, statement: ast.stmt) -> set[str]:
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


def left_out_names(file: FileText, node: ast.AST) -> set[str]:
    """The functions `node` puts in one of LEFT_OUT_SETS: `.add(f)`, `.update({f})`, `|= {f}`, `= {f}` or
    `torch._dynamo.config.patch(SET={f})`."""
    def the_set(target: ast.AST) -> bool:
        return file.resolve(target) in {f"torch._dynamo.config.{name}" for name in file.honoured}

    values: list[ast.AST] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and the_set(node.func.value) \
            and node.func.attr in ("add", "update"):
        values = list(node.args)
    elif is_call_of(file, node, {"torch._dynamo.config.patch"}):  # patch(reorderable_logging_functions={f})
        values = [keyword.value for keyword in node.keywords if keyword.arg in file.honoured]
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and the_set(node.target) and node.value:
        values = [node.value]
    elif isinstance(node, ast.Assign) and any(the_set(target) for target in node.targets):
        values = [node.value]
    found = set()
    for value in values:
        items = value.elts if isinstance(value, (ast.Set, ast.List, ast.Tuple)) else [value]
        found |= {file.resolve(item) for item in items} - {""}
    return found


def class_methods(file: FileText, class_name: str, names: tuple[str, ...]) -> list[ast.FunctionDef]:
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


def local_stores(function: ast.AST) -> dict[str, int]:
    """The names a function binds itself (its parameters included), with how many times; not a nested scope's."""
    counts: dict[str, int] = {}
    arguments = getattr(function, "args", None)
    if arguments is not None:
        for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                         *filter(None, (arguments.vararg, arguments.kwarg))]:
            counts[argument.arg] = counts.get(argument.arg, 0) + 1
    todo = list(getattr(function, "body", []))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] = counts.get(node.name, 0) + 1
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.alias):
            name = (node.asname or node.name).split(".")[0]
            counts[name] = counts.get(name, 0) + 1
        todo.extend(ast.iter_child_nodes(node))
    return counts


def is_call_of(file: FileText, node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Call) and file.resolve(node.func) in names


def registered_operators(file: FileText, tree: ast.Module) -> dict[str, str]:
    """The operators the module registers with a function of its own as their kernel, "ns::name" -> function:
    `@torch.library.custom_op("ns::name")` or `@torch.library.impl("ns::name", ...)` on it,
    `torch.library.custom_op("ns::name", f)`, or `lib.impl("name", f)` on `lib = torch.library.Library("ns", ...)`.
    A fake (`register_fake`) is not a kernel."""
    def text(node: ast.AST | None) -> str:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""

    libraries, found = {}, {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in statement.decorator_list:
                if isinstance(decorator, ast.Call) and decorator.args and file.resolve(decorator.func) in (
                        "torch.library.custom_op", "torch.library.impl"):
                    found[text(decorator.args[0])] = statement.name
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args \
                    and file.resolve(node.value.func) == "torch.library.Library":
                libraries.update({t.id: text(node.value.args[0]) for t in node.targets if isinstance(t, ast.Name)})
            if not (isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[1], ast.Name)):
                continue
            if file.resolve(node.func) == "torch.library.custom_op":
                found[text(node.args[0])] = node.args[1].id
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "impl" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in libraries:
                found[f"{libraries[node.func.value.id]}::{text(node.args[0])}"] = node.args[1].id
    return {name: function for name, function in found.items() if "::" in name and function in file.functions}


def hatch_targets(file: FileText, tree: ast.Module) -> list[tuple[str, str]]:
    """(hatch, what it is applied to) for each hatch the module's own statements apply when it is imported: a
    decorator of a module-level definition (the definition's name; for `substitute_in_graph(original)`, the
    original), or a module-level call `hatch(target)` (`substitute_in_graph(original)(polyfill)` too). Not one
    in a function nothing calls, nor under a module-level branch."""
    found = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in statement.decorator_list:
                hatch = file.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator)
                original = decorator.args[0] if isinstance(decorator, ast.Call) and decorator.args else None
                found.append((hatch, file.resolve(original) if hatch.endswith("substitute_in_graph") and original
                              else statement.name))
        elif isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign)) and statement.value is not None:
            for node in ast.walk(statement.value):
                if isinstance(node, ast.Call) and node.args:
                    found.append((file.resolve(node.func), file.resolve(node.args[0])))
    return [(hatch, target) for hatch, target in found if hatch and target]
