"""Where a function's values go, read from its text: which calls hand their result on, and which take its inputs.

A task that keeps using a function (the vendored code, a dataclass, `np.interp`) is not kept by a call whose
result goes nowhere the caller sees (`assert isinstance(built, Boxes)`, a value only a print reads), nor by one
that reads none of the function's inputs (`np.interp(0.5, XP, FP)` beside a curve computed otherwise). Both are
read here, per function and without regard to order (a name is what any of its bindings made it), so that a
rebinding or a loop cannot hide a flow:
  - `live_calls`: the calls whose value may reach what the function returns or yields, or state that outlives
    the call: an attribute the file reads somewhere, a `global` or `nonlocal` name, an object that is itself
    live (`out.append(v)`, `rows[i] = v`, `t.copy_(v)`, a result stored into with `out=`), or a context manager
    a `with` enters;
  - `fed_calls`: the calls with an argument computed from the function's parameters (`self` included).
What a value of trivial use still passes (`x + 0 * kept(y)`) is arithmetic, which a reading of names cannot see.
Pure functions of the syntax tree.
"""

from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def live_calls(function: ast.AST, read_attributes: set[str]) -> set[int]:
    """The ids of the calls in `function` whose value reaches its result or lasting state (see the module)."""
    roots, edges = _flows(function, read_attributes)
    live_names = {name for statement in _statements(function)
                  if isinstance(statement, (ast.Global, ast.Nonlocal)) for name in statement.names}
    live, done = list(roots), set()
    while True:
        for node in live:
            live_names |= _loaded(node)
        more = [source for index, (sinks, sources) in enumerate(edges)
                if index not in done and sinks & live_names for source in sources]
        done |= {index for index, (sinks, _) in enumerate(edges) if sinks & live_names}
        if not more:
            break
        live = more
        roots += more
    return {id(node) for root in roots for node in ast.walk(root) if isinstance(node, ast.Call)}


def fed_calls(function: ast.AST) -> set[int]:
    """The ids of the calls in `function` with an argument that reads a parameter or a name computed from one."""
    arguments = getattr(function, "args", None)
    fed = {argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                         *filter(None, (arguments.vararg, arguments.kwarg))]} if arguments else set()
    _, edges = _flows(function, set())
    grown = True
    while grown:  # forwards: a name bound from a fed expression is fed
        grown = False
        for sinks, sources in edges:
            if not sinks <= fed and any(_loaded(source) & fed for source in sources):
                fed |= sinks
                grown = True
    return {id(node) for node in ast.walk(function) if isinstance(node, ast.Call)
            and any(_loaded(argument) & fed for argument in [*node.args, *(k.value for k in node.keywords)])}


def _flows(function: ast.AST, read_attributes: set[str]) -> tuple[list[ast.AST], list[tuple[set[str], list[ast.AST]]]]:
    """What the function hands on (returned, yielded, stored where it lasts) and its bindings: (names bound,
    the expressions they are bound from)."""
    roots: list[ast.AST] = []
    edges: list[tuple[set[str], list[ast.AST]]] = []

    def store(target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                store(element, value)
        elif isinstance(target, ast.Starred):
            store(target.value, value)
        elif isinstance(target, ast.Name):
            edges.append(({target.id}, [value]))
        elif isinstance(target, ast.Attribute) and target.attr in read_attributes:
            roots.append(value)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):  # into an object: it carries the value on
            edges.append((_root_names(target), [value, target]))

    for statement in _statements(function):
        if isinstance(statement, ast.Return) and statement.value is not None:
            roots.append(statement.value)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                store(target, statement.value)
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
            store(statement.target, statement.value)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            store(statement.target, statement.iter)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:  # a context manager acts on its block: it is used as it is entered
                roots.append(item.context_expr)
                if item.optional_vars is not None:
                    store(item.optional_vars, item.context_expr)
        elif isinstance(statement, _SCOPES):  # a closure reads what its body reads
            edges.append(({statement.name}, [statement]))
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value  # a method called for its effect changes its receiver; `out=` its target
            sinks = _root_names(call.func.value) if isinstance(call.func, ast.Attribute) else set()
            sinks |= {name for keyword in call.keywords if keyword.arg == "out" for name in _root_names(keyword.value)}
            edges.append((sinks, [call]))
        for node in _expressions(statement):
            if isinstance(node, (ast.Yield, ast.YieldFrom)) and node.value is not None:
                roots.append(node.value)
            elif isinstance(node, ast.NamedExpr):
                store(node.target, node.value)
    return roots, edges


def _statements(function: ast.AST) -> list[ast.stmt]:
    """Every statement of the function's own body, nested blocks included; a nested scope as one statement."""
    found: list[ast.stmt] = []
    todo = list(getattr(function, "body", []))
    while todo:
        statement = todo.pop()
        found.append(statement)
        if isinstance(statement, _SCOPES):
            continue
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                todo.append(child)
            elif isinstance(child, (ast.excepthandler, ast.match_case)):
                todo += child.body
    return found


def _expressions(statement: ast.stmt) -> list[ast.AST]:
    """The expression nodes of the statement itself, not of the statements nested in it."""
    found: list[ast.AST] = []
    todo = [child for child in ast.iter_child_nodes(statement) if not isinstance(child, (ast.stmt, ast.excepthandler,
                                                                                         ast.match_case))]
    while todo:
        node = todo.pop()
        found.append(node)
        todo += [child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES)]
    return found


def _loaded(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def _root_names(node: ast.AST) -> set[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return {node.id} if isinstance(node, ast.Name) else set()
