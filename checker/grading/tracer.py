"""A walk over the code torch.compile traces from an entry, read from the file's text (grading/file_text.py).

From the entry, the code Dynamo would trace:
  - the entry function's body, or for a module-level instance `x = C(...)` its class's `forward`, and the
    `forward` of every class of the file that `C.__init__` builds (submodules), which a call `self.name(...)` of
    the one built as `self.name` runs;
  - the file's functions and classes that code calls, by name (`helper(...)`, `self.method(...)`, `C.method(...)`,
    `Class(...)` for its `__init__`, `__enter__` and `__exit__`, a property read or set), through a decorator
    of the file (its body, with a call of its parameter taken as a call of the decorated function), and a
    module-level name bound to an expression (a lambda, a factory's result, a wrapped function): that expression;
    `torch.ops.ns.name(...)` of an operator the file registers: its kernel;
  - `C.apply(...)` of an autograd.Function of the file: its `forward` and `backward`, which Dynamo traces (on a
    receiver the text cannot type, those of every autograd.Function the file names other than as a base);
  - not an eager-only branch: the body of `if not torch.compiler.is_compiling():` (or `is_dynamo_compiling`,
    `torch._dynamo.is_compiling`, a local name bound once to one of them or to its negation, a function of the
    file whose one statement returns one of those, an operand of an `and`), the
    `else` of `if is_compiling():`, and what follows an `if is_compiling():` whose body returns or raises;
    the same sides of a conditional expression (`x if is_compiling() else check(x)`);
  - not a call Dynamo leaves out of the trace: a function the file's module-level code adds to one of
    file_text.LEFT_OUT_SETS that the exercise allows, with `logging.Logger.info` there covering `info` on every
    module-level logger;
  - with `enter_hatched` False, not code the file hands to a hatch that keeps Dynamo out (at module level, or
    where it calls it: `nonstrict_trace(f)(x)`);
  - with `eager_too`, what runs at all instead: eager-only branches and left-out calls included.
It over-approximates where the text cannot say (a nested function's body counts; a method call on an object of
unknown type counts every class of the file with a method of that name), so that a construct the text shows is
never looked past; and it notes where the definition it reads may not be the code that runs (a name bound twice,
a decorator it cannot follow), which the constructs take as a failure.
"""

from __future__ import annotations

import ast

from checker.grading.file_text import (FileText, built_as, class_methods, conditional_nodes, is_call_of, local_stores,
                                       may_skip, through_hatch, unreadable_decorators)
from checker.grading.branch_reads import sources_read
from checker.grading.environment_reads import ENVIRONMENT, Environment
from checker.grading.flow import fed_calls, live_calls

EAGER_ONLY_TESTS = {"torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling",
                    "torch._utils.is_compiling"}
SUBMODULE_METHODS = ("forward", "__call__")
_BUILT_METHODS = ("__init__", "__post_init__", "__enter__", "__exit__")
_FUNCTION_METHODS = ("forward", "backward")  # an autograd.Function's, traced by Dynamo on `.apply`


def module_body(tree: ast.Module) -> ast.FunctionDef:
    """The module's own statements, what runs when it is imported, as a function the tracer can walk."""
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    body = [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return ast.FunctionDef(name="<module>", args=arguments, body=body, decorator_list=[], lineno=1)


def entry_functions(file: FileText, entry: str) -> list[tuple[ast.AST, str | None]]:
    """Where the trace starts: the entry function, or a module-level instance's `forward` (with its class)."""
    if entry in file.functions:
        return [(file.functions[entry], None)]
    made = file.instances.get(entry)
    if made in file.classes and file.bindings.get(entry, 0) == 1:
        return [(method, made) for method in class_methods(file, made, SUBMODULE_METHODS)]
    return []


class Tracer:
    """A walk over the code Dynamo would trace, yielding (resolved name, line) for every name it refers to."""

    def __init__(self, file: FileText, branched_on: set[str], enter_hatched: bool = True, eager_too: bool = False,
                 environment: Environment | None = None):
        self.file = file
        self.environment = environment  # reads `branch-on:environment` where given (environment_reads.py)
        self.enter_hatched = enter_hatched  # False: code handed to a hatch is not traced
        self.eager_too = eager_too  # True: what runs at all, eager-only branches and left-out calls included
        self.branched_on = branched_on | ({ENVIRONMENT} if environment else set())  # what a test may not read
        self.seen: set[int] = set()
        # (function, its class, the function it decorates, the parameter that function is passed as)
        self.queue: list[tuple[ast.AST, str | None, ast.AST | None, str | None]] = []
        self.found: list[tuple[str, int]] = []
        self.called: list[tuple[str, int]] = []  # every call's callee, resolved (`Boxes`, `RMSNormFunction.apply`)
        self.unreadable = ""  # why the text cannot show what is traced: a name bound twice, an unknown decorator
        self.values_followed: set[str] = set()  # module-level names bound to an expression, followed once each
        # For what runs on every call: each call's (function, callee name, unconditional there, fed the function's
        # inputs), each edge (caller, callee function, unconditional), and the depth of branches the walk is inside.
        self.calls: list[tuple[int, str, bool, bool]] = []
        self.edges: list[tuple[int, int, bool]] = []
        self.depth = 0
        self.current = 0
        self.unconditional = True  # the call being followed runs whenever its function does, its result handed on
        self.fed = True  # the call being followed reads the function's inputs
        self.starts: set[int] = set()
        self.live_classes: set[str] = set()
        # The calls of the function being walked whose result it hands on, and those fed its inputs (grading/flow.py)
        self.live: set[int] = set()
        self.fed_here: set[int] = set()
        self.discarded: set[int] = set()  # the calls of the function being walked made as statements of their own
        self.read_attributes = {node.attr for root in [*file.functions.values(), *file.classes.values()]
                                for node in ast.walk(root) if isinstance(node, ast.Attribute)
                                and isinstance(node.ctx, ast.Load)}

    def references(self, starts: list[tuple[ast.AST, str | None]]) -> list[tuple[str, int]]:
        self.queue = []
        for function, owner in starts:  # a decorated entry function runs as a call of it would: its wrapper's code
            if owner is None and isinstance(function, ast.FunctionDef) and function.name in self.file.functions:
                self._enqueue_function(function, None)
            else:
                self.queue.append((function, owner, None, None))
        self.starts = {id(queued[0]) for queued in self.queue}
        for _, owner in starts:
            self._use_class(owner)
        while self.queue:
            function, self.owner, self.decorated, self.parameter = self.queue.pop(0)
            if id(function) in self.seen:
                continue
            self.seen.add(id(function))
            self.current, self.depth = id(function), 0
            self.unreadable = self.unreadable or self._unreadable(function)
            self.compiling: set[str] = set()  # local names bound to is_compiling() in this function
            self.eager: set[str] = set()  # and to `not is_compiling()`
            # local name -> the sources it was computed from; a parameter, from its default
            self.derived: dict[str, set[str]] = self.environment.parameters(function) if self.environment else {}
            self.stores = local_stores(function)  # local name -> how many times this function binds it
            called = {node.func.id for node in ast.walk(function) if isinstance(node, ast.Call)
                      and isinstance(node.func, ast.Name)} | {node.value.id for node in ast.walk(function)
                      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}  # `F.apply(...)`
            shadowed = sorted(set(self.stores) & called & (set(self.file.functions) | set(self.file.classes)))
            if shadowed and not self.unreadable:  # a call of that name there is not the module's definition
                self.unreadable = (f"`{getattr(function, 'name', 'a function')}` binds `{shadowed[0]}` itself (a "
                                   "parameter or a local), so the grader cannot tell which it calls, nor what it traces.")
            self.live, self.fed_here = live_calls(function, self.read_attributes), fed_calls(function)
            self.discarded = {id(node.value) for node in ast.walk(function) if isinstance(node, ast.Expr)}
            self._block(function.body)
        return self.found

    def sure_calls(self, fed: bool = False) -> tuple[set[str], set[int]]:
        """What runs on every run of the entry: the callee names called outside any branch, loop or handler of
        a function that itself runs on every run, with its result handed on there, and those functions (by id);
        over the walk just made. `fed`: only the calls given something computed from their function's inputs."""
        sure = set(self.starts)
        grown = True
        while grown:
            more = {callee for caller, callee, unconditional in self.edges if unconditional and caller in sure}
            grown = not more <= sure
            sure |= more
        return {name for function, name, unconditional, given in self.calls
                if unconditional and function in sure and (given or not fed)}, sure

    def _unreadable(self, function: ast.AST) -> str:
        """Why this definition may not be the code that runs: its name, or its class's, bound more than once
        at module level; a decorator the reading cannot follow."""
        for name in (self.owner, getattr(function, "name", None) if self.owner is None else None):
            if name in self.file.functions or name in self.file.classes:
                if self.file.bindings.get(name, 0) > 1:
                    return (f"the file binds `{name}` more than once, so the grader cannot tell which of its "
                            "definitions runs, nor what it traces.")
        return unreadable_decorators(self.file, function) or (
            unreadable_decorators(self.file, self.file.classes[self.owner]) if self.owner in self.file.classes else "")

    def _use_class(self, name: str | None) -> None:
        """A class whose code the trace reaches: its submodules' forward is traced too."""
        if name is None or name in self.live_classes or name not in self.file.classes:
            return
        self.live_classes.add(name)
        for init in class_methods(self.file, name, ("__init__",)):
            for node in ast.walk(init):
                if isinstance(node, ast.Call) and self.file.resolve(node.func) in self.file.classes:
                    built = self.file.resolve(node.func)
                    self._use_class(built)
                    self._enqueue_forward(built)

    def _enqueue_forward(self, class_name: str) -> None:
        self.queue += [(method, class_name, None, None)
                       for method in class_methods(self.file, class_name, SUBMODULE_METHODS)]

    # --- statements, with the eager-only branches left out ---------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self._branch(statement)
            if isinstance(statement, ast.If) and not self.eager_too:
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
            guard = self._guard(statement.value) if isinstance(statement, ast.Assign) else ""
            if guard:  # bound once: a later `c = False` would undo it
                bound = {t.id for t in statement.targets if isinstance(t, ast.Name) and self.stores.get(t.id) == 1}
                (self.compiling if guard == "compiling" else self.eager).update(bound)
            if isinstance(statement, ast.ClassDef):
                self.found.append(("class", statement.lineno))
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                self.found.append(("import", statement.lineno))
            self._statement(statement)

    def _branch(self, statement: ast.stmt) -> None:
        """Record a test, or a loop's iterable, that reads a source (branch_reads.py); follow what locals are
        computed from one."""
        if not self.branched_on:
            return

        def reads(node: ast.AST) -> set[str]:
            environment = self.environment and self.environment.read(node, self.stores)
            return sources_read(node, self.branched_on, self.derived) | ({ENVIRONMENT} if environment else set())

        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            sources = reads(statement.value)
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    # `self.x = ...` taints `x` alone, through environment_reads' attributes, not all of `self`
                    kept = sources - {ENVIRONMENT} if isinstance(name, ast.Name) and name.id == "self" else sources
                    if isinstance(name, ast.Name) and kept:
                        self.derived[name.id] = kept
        tests = [statement.test] if isinstance(statement, (ast.If, ast.While, ast.Assert)) else []
        if isinstance(statement, ast.If) and not self.eager_too and self._eager_only(statement.test):
            tests = []  # `not is_compiling() and x`: Dynamo never evaluates `x`
        own = [value for name, value in ast.iter_fields(statement)  # not the statements nested in it
               if isinstance(value, ast.AST) and name not in ("body", "orelse", "finalbody", "handlers")]
        tests += [node.test for root in own for node in ast.walk(root) if isinstance(node, ast.IfExp)]
        # what picks a value or a callee too: `and`/`or`'s operands but the last, `fns[i](x)`'s index, a match's subject
        tests += [value for root in own for node in ast.walk(root) if isinstance(node, ast.BoolOp)
                  for value in node.values[:-1]]
        tests += [node.func.slice for root in own for node in ast.walk(root)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)]
        tests += [statement.subject, *(c.guard for c in statement.cases if c.guard)] \
            if isinstance(statement, ast.Match) else []
        if self.environment:  # what raises in a `try` body picks the handler; an argument, the file's code's path
            tests += statement.body if isinstance(statement, ast.Try) and statement.handlers else []
            tests += [arg for root in own for node in ast.walk(root) if isinstance(node, ast.Call)
                      and not self.environment.module_rooted(node.func) for arg in [*node.args, *node.keywords]]
        for test in tests:
            self.found += [(f"branch-on:{source}", test.lineno) for source in sorted(reads(test))]
        loops = [statement.iter] if isinstance(statement, (ast.For, ast.AsyncFor)) else []
        loops += [generator.iter for root in own for node in ast.walk(root)
                  if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
                  for generator in node.generators]
        for loop in loops:
            self.found += [(f"loop-over:{source}", loop.lineno) for source in sorted(reads(loop))]

    def _statement(self, statement: ast.stmt) -> None:
        for name, value in ast.iter_fields(statement):
            items = value if isinstance(value, list) else [value]
            branch = self._branches(statement, name)
            self.depth += branch
            if items and all(isinstance(item, ast.stmt) for item in items) and name in ("body", "orelse", "finalbody"):
                self._block(items)
            elif name == "handlers":
                for handler in items:
                    self._block(handler.body)
            else:
                for item in items:
                    if isinstance(item, ast.AST):
                        self._expressions(item)
            self.depth -= branch

    @staticmethod
    def _branches(statement: ast.stmt, field_name: str) -> int:
        """1 where a field of the statement may not run on every call (file_text.may_skip), else 0."""
        return int(may_skip(statement, field_name))

    def _eager_only(self, test: ast.expr) -> str:
        """"body" when the branch runs only eagerly, "else" when its else-branch does, "" otherwise."""
        if self._guard(test) == "eager" or (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
                                            and any(self._guard(value) == "eager" for value in test.values)):
            return "body"
        return "else" if self._guard(test) == "compiling" else ""

    def _guard(self, node: ast.AST, helper: bool = True) -> str:
        """"compiling" for `is_compiling()` (a local bound once to it, a function of the file whose one statement
        returns it, called without arguments), "eager" for its negation, "" for anything else."""
        if self._compiling_call(node) or (isinstance(node, ast.Name) and node.id in self.compiling):
            return "compiling"
        if isinstance(node, ast.Name) and node.id in self.eager:
            return "eager"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self._guard(node.operand, helper)
            return {"compiling": "eager", "eager": "compiling"}.get(inner, "")
        name = self.file.resolve(node.func) if isinstance(node, ast.Call) and not node.args and not node.keywords else ""
        function = self.file.functions.get(name) if helper and name not in self.stores else None
        body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))] \
            if function is not None and not function.decorator_list and self.file.bindings.get(name, 0) == 1 else []
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            outer, self.stores = self.stores, local_stores(function)  # read in the helper's own names
            try:
                return self._guard(body[0].value, helper=False)
            finally:
                self.stores = outer
        return ""

    def _compiling_call(self, node: ast.AST) -> bool:
        """`torch.compiler.is_compiling()` and its kin, where the name it starts from is not a local or a
        parameter of this function (a parameter named `torch` could be anything)."""
        if not is_call_of(self.file, node, EAGER_ONLY_TESTS):
            return False
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id not in self.stores

    # --- expressions: what they name, and the code of the file they call ---------------------------------

    def _expressions(self, root: ast.AST) -> None:
        skipped: set[int] = set()  # the callee nodes of calls Dynamo leaves out
        maybe = conditional_nodes(root)
        eager = set() if self.eager_too else self._eager_only_parts(root)
        for node in ast.walk(root):  # a lambda's body included: it may run in the trace
            if id(node) in eager:
                continue
            if isinstance(node, ast.Call):
                if not self.eager_too and self._left_out(node.func):
                    skipped |= {id(sub) for sub in ast.walk(node.func)}
                    continue
                # a call whose result goes nowhere is not what the code keeps using, whenever it runs
                unconditional = self.unconditional = (self.depth == 0 and id(node) not in maybe
                                                      and id(node) in self.live)
                self.fed = id(node) in self.fed_here
                callee = self.file.resolve(through_hatch(self.file, node).func)
                self.called.append((callee, node.lineno))
                self.calls.append((self.current, callee, unconditional, self.fed))
                queued = len(self.queue)
                self._follow_call(node)
                self.edges += [(self.current, id(item[0]), unconditional) for item in self.queue[queued:]]
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in skipped:
                name = self.file.resolve(node)
                if name:
                    self.found.append((name, node.lineno))
                self._follow_property(node)

    def _eager_only_parts(self, root: ast.AST) -> set[int]:
        """The nodes of a conditional expression's eager-only side (`x if is_compiling() else check(x)`)."""
        parts = []
        for node in ast.walk(root):
            if isinstance(node, ast.IfExp):
                side = self._eager_only(node.test)
                parts += [node.body] if side == "body" else [node.orelse] if side == "else" else []
        return {id(sub) for part in parts for sub in ast.walk(part)}

    def _left_out(self, func: ast.AST) -> bool:
        name = self.file.resolve(func)
        if name in self.file.left_out:
            return True
        head, _, method = name.rpartition(".")
        return head in self.file.loggers and f"logging.Logger.{method}" in self.file.left_out

    def _follow_call(self, call: ast.Call) -> None:
        if through_hatch(self.file, call) is not call:
            if not self.enter_hatched:  # Dynamo does not trace what the hatch is handed
                return
            call = through_hatch(self.file, call)
        name = self.file.resolve(call.func)
        head, _, method = name.rpartition(".")
        receiver_is_self = head == "self" and self.owner is not None and isinstance(call.func, ast.Attribute)
        if not self.enter_hatched and (name in self.file.hatched or head in self.file.hatched):
            return
        if name in self.file.bound_values and name not in self.values_followed:
            self._follow_value(name, call.lineno)
        operator = self.file.operators.get("::".join(name.split(".")[2:4])) if name.startswith("torch.ops.") else None
        if operator:  # `torch.ops.ns.name(...)` runs the file's kernel for it
            self.called.append((operator, call.lineno))
            self.calls.append((self.current, operator, self.unconditional, self.fed))
            self._enqueue_function(self.file.functions[operator], None)
        if self.parameter and name == self.parameter and self.decorated is not None:
            self.queue.append((self.decorated, self.owner, None, None))
        elif name in self.file.functions:
            self._enqueue_function(self.file.functions[name], None)
        elif name in self.file.classes:
            self._use_class(name)
            self.queue += [(method, name, None, None) for method in class_methods(self.file, name, _BUILT_METHODS)]
        elif method == "apply" and (head in self.file.classes or isinstance(call.func, ast.Attribute)):
            applied = [head] if head in self.file.classes else sorted(self.file.applied)  # the receiver, or any
            for function_class in applied:
                if self.enter_hatched or function_class not in self.file.hatched:
                    self.queue += [(function, function_class, None, None)
                                   for function in class_methods(self.file, function_class, _FUNCTION_METHODS)]
        elif self.file.instances.get(name) in self.file.classes:  # a module-level module, called
            self._use_class(self.file.instances[name])
            self._enqueue_forward(self.file.instances[name])
        elif receiver_is_self and id(call) not in self.discarded and \
                (submodule := built_as(self.file, self.owner, call.func.attr)):
            # `h = self.norm(x)` runs the submodule's forward; one called for its effect alone is taken as nothing
            self._use_class(submodule)
            self._enqueue_forward(submodule)
        elif isinstance(call.func, ast.Attribute):
            receiver = self.file.resolve(call.func.value)
            receiver = self.file.instances.get(receiver, receiver)  # a module-level instance: its class
            owners = ([self.owner] if receiver == "self" and self.owner else [receiver]
                      if receiver in self.file.classes else sorted(self.file.classes))  # unknown: any class's
            for owner in owners:
                for method in class_methods(self.file, owner, (call.func.attr,)):
                    self._enqueue_function(method, owner)

    def _follow_value(self, name: str, line: int) -> None:
        """A call of a module-level name bound to an expression: the expression's own calls and lambdas, and
        every function and class of the file it names (a wrapped function, a factory, an instance's `__call__`)."""
        self.values_followed.add(name)
        value = self.file.bound_values[name]
        if self.environment:  # `f = (broken, fixed)[FLAG]`, `f = partial(g, flag=FLAG)`: what picks the code
            self._branch(ast.If(test=value, body=[], orelse=[]))
        for node in ast.walk(value):
            named = node.id if isinstance(node, ast.Name) else ""
            if not self.enter_hatched and named in self.file.hatched:
                continue
            if named in self.file.functions:
                self.called.append((named, line))
                self.calls.append((self.current, named, self.unconditional, self.fed))
                self._enqueue_function(self.file.functions[named], None)
            elif named in self.file.classes:
                self.called.append((named, line))
                self.calls.append((self.current, named, self.unconditional, self.fed))
                self._use_class(named)
                self.queue += [(method, named, None, None) for method in
                               class_methods(self.file, named, _BUILT_METHODS + SUBMODULE_METHODS)]
        self._expressions(value)

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

