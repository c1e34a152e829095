"""What tells where the code runs, read from a file's text: for the `no-environment-switch` check.

The grader sees the graphs the checked process captured; a file whose traced code chooses its path by something
other than the call's inputs could take the fixed path there and keep its graph break in a program of the
learner's own (one intra-op thread, a grader's logging handlers, the time since start, a module's own name, what
`/proc/self` says, a write the sandbox refuses: a process shows many such signs, and no list of them is complete).
So the traced code, and the module's own code when it is imported, may branch only on what the call is given (its
arguments and the module it runs on) and on constants the file writes out; a test (a branch's, a loop's iterable,
an `and`/`or` operand, a callee picked by an index, a match's subject or guard, a `try` body whose exception
picks a handler) that reads anything else reads the environment:
  - a module-level name of the file not bound once at the top to a constant expression (a literal, the file's
    other constants, calls of them: `SCALE = torch.tensor(0.5)`, `HOT = bool(SCALE > 1)`), or changed after
    (`STATE["x"] = ...`); a module's own name (`__name__`, `__file__`); `id` and `hash`;
  - a call of a module's function (not a class) given nothing (`torch.is_grad_enabled()`, `time.process_time()`), a
    method that reads or writes a file on anything (`.from_file`, `.read`);
    any name of a module that holds process state or reads files (STATE_NAMESPACES, FILE_NAMESPACES), or a
    private one (`torch._C`, `numpy._core`);
  - a function of the file whose code reads one of those, anywhere in it;
  - an attribute (of `self` or anything) that the file sets anywhere from one of those;
  - a local computed from one of those, or a parameter whose default is one (the tracer follows locals).
`is_compiling()` and its kin are not among them: the tracer leaves their eager-only side out of the trace; nor are
the hatches that hand a function to Dynamo. A pure function of the text, like the tracer it serves.
"""

from __future__ import annotations

import ast

from checker.grading.file_text import KEEP_DYNAMO_OUT, FileText, local_stores

ENVIRONMENT = "environment"
# Namespaces whose names read or hold the process's state rather than a call's: a test on one may read otherwise
# in the grader's process than in the learner's program.
STATE_NAMESPACES = ("torch.backends", "torch.cuda", "torch.mps", "torch.xpu", "torch.cpu", "torch.mtia",
                    "torch.accelerator", "torch.distributed", "torch.compiler", "torch.random", "torch.utils",
                    "torch.amp", "torch.autograd", "torch.multiprocessing", "torch.profiler", "torch.testing",
                    "torch.overrides", "torch.fx.experimental", "torch.export", "torch.monitor", "torch.hub",
                    "torch.version", "logging", "warnings", "time", "timeit", "random", "numpy.random",
                    "numpy.core", "numpy.testing", "numpy.ctypeslib", "numpy.f2py", "numpy.distutils",
                    "numpy.show_config", "numpy.show_runtime")
# What reads or writes files (`/proc/self/status`; a write the sandbox refuses), its classes included.
FILE_NAMESPACES = ("torch.load", "torch.save", "torch.from_file", "torch.serialization", "torch.storage",
                   "torch.UntypedStorage.from_file", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile",
                   "numpy.memmap", "numpy.save", "numpy.savez", "numpy.savetxt", "numpy.lib", "numpy.DataSource",
                   "numpy.fromregex", "numpy.ma.mrecords", "numpy.rec.fromfile")
# Where a call made for its effect sets something and reads nothing back.
_WRITTEN = ("torch._dynamo.config.", "torch._inductor.config.", "logging.", "warnings.", "torch.utils._pytree.register",
            "torch.utils.pytree.register", "torch.export.register")
# What a logger says of the process's logging setup (its level, its handlers), not what it logs.
_LOGGER_STATE = {"level", "handlers", "filters", "disabled", "propagate", "parent", "manager", "isEnabledFor",
                 "getEffectiveLevel", "hasHandlers", "getChild", "findCaller", "root"}
# Methods that read or write a file, whatever they are called on (a storage, a file object numpy opened).
_FILE_METHODS = {"from_file", "fromfile", "tofile", "open", "read", "readline", "readlines", "read_text",
                 "read_bytes", "write", "write_text", "write_bytes"}
# Builtins whose answer differs from process to process: an object's address, a string's salted hash.
_BUILTIN_READS = {"id", "hash"}
_EAGER_ONLY = {"torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling",
               "torch._utils.is_compiling"}  # the tracer's EAGER_ONLY_TESTS, which it takes out of the trace
# What a file calls on its own code to hand it to Dynamo: torch's compiler namespaces, but no read of their state.
_HATCHES = KEEP_DYNAMO_OUT | {"torch.compiler.substitute_in_graph", "torch._dynamo.substitute_in_graph",
                              "torch._dynamo.dont_skip_tracing", "torch.compiler.dont_skip_tracing",
                              "torch._dynamo.config.patch", "torch.library.register_fake", "torch.library.impl"}
# What `import_time_read` reports for an exception caught where the module runs: no name is read, but a memory cap
# or a refused write raises in one process and not in another.
CAUGHT = "catches an exception (a `try` with a handler, or `contextlib.suppress`)"
_MODULE_DUNDERS = {"__name__", "__file__", "__spec__", "__loader__", "__package__", "__path__", "__cached__"}


class Environment:
    """The file's constants and the attributes of `self` it sets from the environment; what a test reads."""

    def __init__(self, file: FileText, tree: ast.Module):
        self.file = file
        self.shown: dict[int, str] = {}  # line -> what a test there read, for the message
        self.tainted_attributes: set[str] = set()
        self.reading_functions: set[str] = set()  # the file's functions whose code reads the environment
        mutated = mutated_names(tree, set(file.bindings))
        functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        while True:  # constants and the functions that read: each may make more of the other
            self.constants = set(file.functions) | set(file.classes)  # one that reads counts where it is called
            for statement in tree.body:  # in order: a constant is built from the constants before it
                targets = statement.targets if isinstance(statement, ast.Assign) else \
                    [statement.target] if isinstance(statement, ast.AnnAssign) and statement.value is not None else []
                names = [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]
                if names and all(self.file.bindings.get(name, 0) == 1 and name not in mutated for name in names) \
                        and not self.read(statement.value, {}):
                    self.constants.update(names)
            self.constants -= mutated  # a class changed from outside (`C.flag = ...`)
            self.constants |= file.loggers - mutated  # a module's logger is one object; its state is read below
            reading = {f.name for f in functions if self.import_time_read(f.body, local_stores(f))}
            if reading <= self.reading_functions:
                break
            self.reading_functions |= reading
        self.tainted_attributes = self._tainted_attributes(tree)

    def read(self, node: ast.AST, stores: dict[str, int], tainted: set[str] = frozenset()) -> str:
        """What `node` reads of the environment, as the file writes it; "" for nothing. `stores`: the names the
        function being read binds itself (its parameters and locals, which the tracer follows); `tainted`: those
        of them set from the environment."""
        # a function of the file that reads counts where it is called or handed on as an argument (`map(f, ...)`),
        # not where a decorator or an attribute names it (`@op.register_fake`)
        run_here = {id(part) for sub in ast.walk(node) if isinstance(sub, ast.Call)
                    for part in [sub.func, *sub.args, *(k.value for k in sub.keywords)]}
        inner = {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)}
        inner |= {a.arg for sub in ast.walk(node) if isinstance(sub, ast.Lambda) for a in ast.walk(sub.args)
                  if isinstance(a, ast.arg)}
        stores = {**stores, **dict.fromkeys(inner, 1)}  # a comprehension's or a lambda's own names
        todo = [node]
        while todo:
            sub = todo.pop()
            shown = sub.id if isinstance(sub, ast.Name) and sub.id in tainted else self._one(sub, stores, run_here)
            if shown:
                if hasattr(node, "lineno"):  # the last read of a line is its test's: a statement's value is read first
                    self.shown[node.lineno] = shown
                return shown
            if isinstance(sub, ast.Attribute) and self.module_rooted(sub) or isinstance(sub, ast.Call) and \
                    self.file.resolve(sub.func) in _EAGER_ONLY:
                continue  # a module's dotted name is read whole (`torch.compiler.is_compiling` is not `torch.compiler`)
            if isinstance(sub, ast.Call) and self.file.resolve(sub.func) in _HATCHES:  # it wraps what it is given
                todo.extend(a for a in [*sub.args, *sub.keywords] if not isinstance(a, (ast.Name, ast.Attribute)))
                continue
            todo.extend(ast.iter_child_nodes(sub))
        return ""

    def parameters(self, function: ast.AST) -> dict[str, set[str]]:
        """The parameters of `function` whose default reads the environment, as the tracer's derived locals."""
        arguments = getattr(function, "args", None)
        if arguments is None:
            return {}
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
        return {argument.arg: {ENVIRONMENT} for argument, default in pairs if self.read(default, {})}

    def _one(self, node: ast.AST, stores: dict[str, int], run_here: set[int]) -> str:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in stores:
            if node.id in _MODULE_DUNDERS or node.id in _BUILTIN_READS or (
                    node.id in self.reading_functions and id(node) in run_here):
                return node.id
            if node.id in self.file.aliases:
                return node.id if self._state(self.file.resolve(node)) else ""
            if node.id in self.file.bindings and node.id not in self.constants:
                return node.id
            return ""
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if isinstance(node.value, ast.Name) and node.value.id in self.file.loggers and node.attr in _LOGGER_STATE:
                return ast.unparse(node)
            if node.attr in _FILE_METHODS:  # on any receiver: `torch.zeros(1).untyped_storage().from_file(...)`
                return f".{node.attr}"
            if self.module_rooted(node):
                return self.file.resolve(node) if self._state(self.file.resolve(node)) else ""
            return f"{ast.unparse(node)}" if node.attr in self.tainted_attributes else ""  # `self.flag`, `C.flag`
        if isinstance(node, ast.Call) and not node.args and not node.keywords and self.module_rooted(node.func):
            name = self.file.resolve(node.func)  # a function given nothing reads state; a class builds (`nn.GELU()`)
            return f"{name}()" if name not in _EAGER_ONLY and name.rpartition(".")[2][:1].islower() else ""
        return ""

    def module_rooted(self, node: ast.AST) -> bool:
        """A dotted name that starts at a module the file imports (`torch.cuda.is_available`), not at a value."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.file.aliases and node.id not in self.file.functions

    @staticmethod
    def _state(name: str) -> bool:
        def under(spaces: tuple[str, ...]) -> bool:
            return any(name == space or name.startswith(space + ".") for space in spaces)

        if name in _EAGER_ONLY or name in _HATCHES:
            return False
        private = any(part.startswith("_") and part != "__version__" for part in name.split(".")[1:])
        if private or under(FILE_NAMESPACES):
            return True  # private names (torch's compiler, its C bindings, a module's globals), and what reads files
        if name.rpartition(".")[2][:1].isupper():
            return False  # a class or a constant (`logging.StreamHandler`, `logging.INFO`) is no state
        parts = name.split(".")
        if len(parts) > 2 and parts[-2][:1].isupper():
            return False  # a class's method, named as a function (`logging.Logger.info`); not what it holds after
        return under(STATE_NAMESPACES)

    def import_time_read(self, statements: list[ast.stmt],
                         stores: dict[str, int] | None = None) -> tuple[int, str] | None:
        """Where the code that runs when the module is imported (its statements, class bodies, decorators and
        defaults; not a function's body, which runs when called) reads the environment, and what: there it may
        set a config, register a function or raise, not only branch. A call made for its effect alone
        (`torch._dynamo.config.reorderable_logging_functions.add(print)`) writes, and is read in its arguments; a
        module logger (`log = logging.getLogger(__name__)`) is none. An exception caught there (CAUGHT) counts too:
        whether an allocation or a write raises is the process's. With `stores`, a function's body read so (its
        parameters and locals bound there), for the functions whose code reads."""
        stores = {} if stores is None else stores
        for statement in statements:
            if getattr(statement, "handlers", None) or isinstance(statement, ast.With) and any(
                    self.file.resolve(item.context_expr.func if isinstance(item.context_expr, ast.Call)
                                      else item.context_expr) == "contextlib.suppress" for item in statement.items):
                return statement.lineno, CAUGHT  # whether an allocation or a write raises differs by process
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts = [*statement.decorator_list, *statement.args.defaults, *statement.args.kw_defaults]
            elif isinstance(statement, ast.ClassDef):
                found = self.import_time_read(statement.body, stores)
                if found:
                    return found
                parts = [*statement.decorator_list, *statement.bases, *statement.keywords]
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and self._writes(
                    statement.value.func):
                parts = [*statement.value.args, *statement.value.keywords]
            elif isinstance(statement, ast.Assign) and (_is_logger(self.file, statement.value) or all(
                    isinstance(t, ast.Attribute) and t.attr == "__module__" for t in statement.targets)):
                parts = []  # a module logger; a class's `__module__` set to the module's name
            else:
                blocks = [v for name, v in ast.iter_fields(statement) if name in ("body", "orelse", "finalbody")]
                blocks += [[h for handler in getattr(statement, "handlers", []) for h in handler.body]]
                blocks += [case.body for case in getattr(statement, "cases", [])]
                found = next(filter(None, (self.import_time_read(block, stores) for block in blocks)), None)
                if found:
                    return found
                parts = [v for name, v in ast.iter_fields(statement) if name not in ("body", "orelse", "finalbody",
                                                                                      "handlers", "cases")]
                parts += [case.guard for case in getattr(statement, "cases", []) if case.guard]
            for part in (p for value in parts for p in (value if isinstance(value, list) else [value])):
                if isinstance(part, ast.AST) and not isinstance(part, ast.expr_context):
                    what = self.read(part, stores)
                    if what:
                        return statement.lineno, what
        return None

    def _writes(self, func: ast.AST) -> bool:
        """A call made for its effect on a setting alone, which raises nowhere: Dynamo's or inductor's config, the
        logging and warnings setup, a module logger's, a pytree registration (an I/O call or a function of the
        file that reads is not)."""
        name = self.file.resolve(func)
        return name.startswith(_WRITTEN) or name.split(".")[0] in self.file.loggers

    def _tainted_attributes(self, tree: ast.Module) -> set[str]:
        """The attribute names the file sets anywhere from the environment (`self.flag = ...`, `block.flag = ...`,
        `self.cfg["x"] = ...`, `self.cfg.update(x=...)`, a class attribute), through a local set so too."""
        found: set[str] = set()
        scopes = [tree, *(node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                                ast.ClassDef)))]
        for scope in scopes:
            function = isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
            stores, tainted = (local_stores(scope) if function else {}), set(self.parameters(scope) if function else ())
            for node in _own_nodes(scope):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                    if self.read(node.value, stores, tainted):
                        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                            found |= _attributes_written(target)
                            if isinstance(target, ast.Name):
                                (found if isinstance(scope, ast.ClassDef) else tainted).add(target.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _mutates(node.func.attr) \
                        and any(self.read(arg, stores, tainted) for arg in [*node.args, *node.keywords]):
                    found |= _attributes_written(node.func.value)
        return found


def _own_nodes(scope: ast.AST):
    """The nodes of a scope's own code: not those of a function or class defined in it (a scope of its own)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _is_logger(file: FileText, value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and file.resolve(value.func) == "logging.getLogger" and all(
        isinstance(a, ast.Constant) or isinstance(a, ast.Name) and a.id == "__name__" for a in value.args)


# Methods that change their receiver: a container's, and a tensor's in-place ones (`fill_`).
_MUTATORS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "add", "remove",
             "discard", "__setitem__", "appendleft", "sort", "reverse"}


def _mutates(method: str) -> bool:
    return method in _MUTATORS or (method.endswith("_") and not method.startswith("__"))


def _attributes_written(target: ast.AST) -> set[str]:
    """The attribute names a store writes through: `block.sub.flag = ...` writes `sub` and `flag`, and
    `self.cfg["x"] = ...` writes `cfg` (a test may read any of them from another object: `self.flag`)."""
    names = set()
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        target = target.value
    return names


def mutated_names(tree: ast.Module, module_names: set[str]) -> set[str]:
    """The module-level names the file changes after binding them: a store into one (`STATE["x"] = ...`,
    `C.flag = ...`), a changing method called on one (`STATE.update(...)`), or one handed to a function of the
    file in the place of a parameter it changes so, anywhere; a local of the same name is not one."""
    found: set[str] = set()
    scopes = [tree, *(node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    changed = {node.name: _changed_parameters(node) for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for scope in scopes:
        local = local_stores(scope) if scope is not tree else {}
        for node in ast.walk(scope):
            roots = _changed_roots(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in changed:
                places, names = changed[node.func.id]
                roots = [_root_name(a) for i, a in enumerate(node.args) if i in places]
                roots += [_root_name(k.value) for k in node.keywords if k.arg in names]
            found |= {root for root in roots if root in module_names and root not in local}
    return found


def _changed_parameters(function: ast.FunctionDef) -> tuple[set[int], set[str]]:
    """The places and names of the parameters a function changes (a store into one, a changing method on one)."""
    names = [a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]]
    changed = {root for node in ast.walk(function) for root in _changed_roots(node)}
    return {i for i, name in enumerate(names) if name in changed}, {name for name in names if name in changed}


def _changed_roots(node: ast.AST) -> list[str]:
    """The names whose objects `node` changes in place: a store into one (`x["k"] = ...`, `x.a = ...`, `del x[0]`),
    a changing method called on one (`x.update(...)`)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return [_root_name(t) for t in targets if not isinstance(t, ast.Name)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _mutates(node.func.attr):
        return [_root_name(node.func.value)]
    return []


def _root_name(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""
