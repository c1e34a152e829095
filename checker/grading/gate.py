"""What a checked file may not write: code that reaches into the checker that runs it.

The checked process runs the checker's own trial code beside the learner's, so a file could patch what
the trial reports (the checker's modules, found by import, `sys.modules` or a frame), write result frames
of its own, or read the checker's frames for the draws. No fix of any exercise needs to: every solution,
alternative fix and book cell uses torch, numpy and a few plain standard modules. So the grader reads the
file's text (as Python reads it, before any trial) and fails, naming the line, a file that
imports the checker or a module that reaches the interpreter or the operating system (ctypes, gc, inspect,
os, importlib, io, ...), names a builtin that runs text as code or looks attributes up by string (exec, eval,
getattr, globals, open, ...), or uses an attribute that walks frames, modules or a function's innards
(`_getframe`, `modules`, `f_back`, `__globals__`, `__subclasses__`, ...).

Imports are read against an allow-list, not a deny-list: torch, numpy and the plain standard modules the
course's fixes use (IMPORTABLE), and whatever the shipped exercise file itself imports (its vendored code's
optional kernels). A name a `from` import brings in is read as the attribute it is (`from sys import
modules` is `sys.modules`), and so is a class pattern's attribute in a `match` (`case object(f_back=f)`).

A string in the file that parses as code which calls, imports or looks a name up is read as code too: torch
has many functions that run a string (fx's `_method_from_src`, a string annotation `eval`ed by
`torch.library.infer_schema`). A string built at run time is the checked process's audit hook's to read
(code_guard.py), with this same reading.

A text check, not a sandbox: it cannot see through every door torch itself leaves open, and it says so in
the threat model. What it does is take away the plain ways, which are all the ways a forged report has
been written so far.
"""

from __future__ import annotations

import ast
import re

from checker.grading.report import FAIL, PASS, CheckResult

NAME = "no-grader-access"

# The modules a checked file may import (their submodules too, but DENIED_SUBMODULES): what every fix the course
# knows imports, and the plain standard modules beside them that reach neither the interpreter nor the system.
# Not `operator` (attrgetter) or `string` (Formatter.get_field): each looks attributes up by a string.
IMPORTABLE = {
    "torch", "numpy", "math", "cmath", "bisect", "copy", "dataclasses", "functools", "itertools", "collections",
    "typing", "typing_extensions", "enum", "abc", "numbers", "contextlib", "logging", "warnings", "time", "timeit",
    "zlib", "random", "statistics", "re", "json", "heapq", "__future__",
    "_bisect", "_heapq",  # the C functions bisect and heapq hand on (Dynamo's message names `_bisect.bisect_left`)
}
# Submodules of importable modules that read code or import modules by a string, or reach the system.
DENIED_SUBMODULES = {"logging.config", "logging.handlers", "torch.utils.cpp_extension", "torch.package", "torch.hub",
                     "torch.multiprocessing", "torch._dynamo.test_case", "torch.testing._internal",
                     "torch.utils.collect_env"}
# Timers that compile their statement from a string (`timeit.Timer`, `torch.utils.benchmark.Timer`): a string
# there must be written out, and is read as code too; a callable is as good.
_STATEMENT_KEYWORDS = {"stmt", "setup", "global_setup"}
_MODULES = {  # imported by no fix; each reaches the checker, the interpreter's innards or the system
    "checker", "ctypes", "gc", "inspect", "importlib", "os", "subprocess", "socket", "multiprocessing",
    "threading", "_thread", "signal", "builtins", "pickle", "marshal", "types", "code", "codeop", "runpy",
    "pty", "mmap", "fcntl", "resource", "select", "traceback", "posix", "_io", "shutil", "pathlib", "tempfile",
    "sysconfig", "site", "atexit", "faulthandler", "tracemalloc", "dis", "cffi", "_ctypes", "_posixsubprocess",
    # what opens a file descriptor by number (the checked process's result pipe is one): `io.open(4, "wb")`
    "io", "codecs", "gzip", "bz2", "lzma", "zipfile", "tarfile", "fileinput", "asyncio", "selectors", "concurrent",
}
_BUILTINS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "getattr", "setattr", "delattr",
             "open", "breakpoint", "memoryview", "__builtins__", "__loader__", "__spec__"}
_ATTRIBUTES = {
    # frames, tracebacks, generators
    "_getframe", "_current_frames", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "gi_frame", "gi_code",
    "cr_frame", "ag_frame", "tb_frame", "tb_next", "settrace", "setprofile", "exc_info",
    # modules and imports, also as attributes of torch (`torch.sys`, `torch.os`)
    "modules", "meta_path", "path_hooks", "addaudithook", "os", "sys", "builtins", "importlib", "import_module",
    "_import_dotted_name", "load_library", "cpp_extension", "load_inline", "_forward_from_src", "_exec_with_source",
    "attrgetter", "methodcaller", "open", "fdopen", "FileIO", "open_code", "raw", "multiprocessing",
    # a function's or a class's innards
    "__globals__", "__code__", "__closure__", "__builtins__", "__dict__", "__subclasses__", "__getattribute__",
    "__bases__", "__base__", "__mro__", "__self__", "__func__", "__wrapped__", "__loader__", "__spec__",
    "__reduce__", "__reduce_ex__", "__setstate__", "__class_getitem__", "__init_subclass__", "__kwdefaults__",
    "__defaults__", "__import__", "_init_fn",  # a custom operator's own Python, called past the operator
    # what evaluates a string as code or imports by name: annotations, logging's config, a timer's statement
    "get_type_hints", "ForwardRef", "_eval_type", "dictConfig", "fileConfig", "listen", "_resolve",
    "_getattr", "attrgetter", "locate", "_locate", "import_string", "_import_module",
    # what compiles a string of the caller's (module docstring: the strings themselves are read as code too)
    "_method_from_src", "execWrapper", "unsupported_tensor_ops", "CodeGen", "set_codegen", "_codegen",
    "__annotations__", "__text_signature__", "__signature__", "_eval_no_call", "AST_Rewriter", "rewriter", "ast",
    # what reads or writes an attribute named by a string (a name the gate would refuse, built at run time)
    "update_wrapper", "_copy_attr", "_assign_attr", "fetch_attr",  # and `wraps`, told which ones (problems)
    # what hands back a module, a frame or the members of either (`inspect` and `enum` look modules up by name)
    "getmodule", "getmembers", "currentframe", "getframeinfo", "getouterframes", "getinnerframes", "_convert_",
    "_old_convert_", "global_enum", "_simple_enum", "__module__",
    # what hands back an object's own namespace (`object.__getstate__(torch)` is `vars(torch)`), or reads one by
    # a name given at run time (a descriptor's `__get__`: cached_property's reads `obj.__dict__[its name]`)
    "__getstate__", "__get__", "__set__", "__delete__", "__set_name__", "__getattr__",
    # a text stream's byte buffer, whose raw file makes a file of any descriptor (the result pipe's)
    "buffer",
    # what runs a shell command or moves the process (torch.utils.collect_env.run, contextlib.chdir)
    "collect_env", "chdir",
}
# What tells the checked process from a program's own, which no fix reads: its thread counts (one intra-op thread,
# so that forking is safe), torch's parallel settings as text, and Dynamo's counters (the grader compiled before
# the file was imported); and the file's own path (`__file__`: class grading checks a copy). A file that branches on
# one runs its fix only where it is checked.
_TELLS = {"get_num_threads", "get_num_interop_threads", "_get_num_threads", "_get_num_interop_threads", "__config__",
          "parallel_info", "counters"}
_ATTRIBUTES |= _TELLS
# The refused modules, as attributes: torch's modules hold some of them (`torch.inspect` is `inspect`). Not those
# whose names are also methods or submodules of torch's (`Tensor.select`, `torch.signal`).
_ATTRIBUTES |= _MODULES - {"select", "signal", "code", "io"}
# A string holding these is read as code: whatever looks a name up, or calls, or imports.
_CODE_NODES = (ast.Import, ast.ImportFrom, ast.Call, ast.Attribute)


# Names of a kind, wherever torch defines one: what looks an object up by a string (`getattr_recursive`,
# `import_module`, `_jit_internal.createResolutionCallbackFromEnv(torch)("sys.modules")`, `resolve_name`) or
# reads a function's closure or globals. Tensor.resolve_conj and resolve_neg are plain tensor methods.
_REFUSED_KINDS = re.compile(r"get_?attr|(^|_)import(_|$|lib)|resolv|resolution|locate|load_obj|jit_internal|closure|"
                            r"globals", re.IGNORECASE)
_TENSOR_METHODS = {"resolve_conj", "resolve_neg"}
_METHODS = {"modules", "open"}  # called, they are torch's and a file object's own: `module.modules()`


def problems(source: str | None, shipped: str | None = None) -> list[str]:
    """Each construct of `source` that reaches into the checker, as "line N: what"; [] for a plain file.
    `shipped`: the exercise file as shipped, whose own imports are allowed too."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        return []  # the import reports it, at its line
    allowed = IMPORTABLE | _imported_by(shipped)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    timeit_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names if alias.name == "timeit"}
    timeit_names |= {f"{alias.asname or alias.name}()" for node in ast.walk(tree)  # `from timeit import timeit`
                     if isinstance(node, ast.ImportFrom) and node.module == "timeit" for alias in node.names}
    # `C.__module__ = __name__`, as a class statement of this file would set it (make_dataclass before 3.12)
    own_module = {id(target) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and isinstance(node.value, ast.Name) and node.value.id == "__name__" for target in node.targets
                  if isinstance(target, ast.Attribute) and target.attr == "__module__"}
    # The standard library's private names (`copy._reconstruct` sets an attribute named at run time,
    # `warnings._getcategory` imports a module by name): no fix uses one, and each is a door of its own.
    stdlib = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
              for alias in node.names if alias.name.split(".")[0] in _STDLIB}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__class__" and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.append(f"line {node.lineno}: an assignment to `.__class__`")
        if isinstance(node, ast.Attribute) and _private(node.attr) and _root(node.value) in stdlib:
            found.append(f"line {node.lineno}: `.{node.attr}`, a private name of the standard library")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _STDLIB:
            found += [f"line {node.lineno}: `from {node.module} import {a.name}`, a private name of the standard "
                      "library" for a in node.names if _private(a.name)]
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: `import {a.name}`" for a in node.names if _denied_module(a.name, allowed)]
        elif isinstance(node, ast.ImportFrom) and _notebook_check(node):
            continue
        elif isinstance(node, ast.ImportFrom) and (node.level or _denied_module(node.module or "", allowed)):
            found.append(f"line {node.lineno}: `from {'.' * node.level}{node.module or ''} import ...`")
        elif isinstance(node, ast.ImportFrom):  # each name it brings in is an attribute of the module
            found += [f"line {node.lineno}: `from {node.module} import {a.name}`" for a in node.names
                      if a.name == "*" or a.name in _MODULES | _BUILTINS or _refused_attribute(a.name)
                      or _denied_module(f"{node.module}.{a.name}", allowed)]
        elif isinstance(node, ast.Name) and (node.id in _BUILTINS or node.id == "__module__"):  # a class's too
            found.append(f"line {node.lineno}: `{node.id}`")
        elif isinstance(node, ast.Name) and node.id == "__file__":  # class grading checks a copy of the file
            found.append(f"line {node.lineno}: `__file__` (it tells the checker's process from your program's)")
        elif isinstance(node, ast.Attribute) and _refused_attribute(node.attr) \
                and not (node.attr in _METHODS and id(node) in called) and id(node) not in own_module:
            found.append(f"line {node.lineno}: `.{node.attr}`" + (" (it tells the checker's process from your "
                                                                  "program's)" if node.attr in _TELLS else ""))
        elif isinstance(node, ast.MatchClass):  # `case C(attr=p)` reads `subject.attr`
            found += [f"line {node.lineno}: `case ...({name}=...)`" for name in node.kwd_attrs if _refused_attribute(name)]
        if isinstance(node, ast.Call) and _runs_its_strings(node.func, timeit_names):
            found += _statement_problems(node, shipped, defined)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _refused_name(node.value.strip()):  # handed to what looks it up: `fetch_attr(obj, "__globals__")`
                found.append(f"line {node.lineno}: the string {node.value.strip()!r}")
            found += [f"line {node.lineno}: in a string, {problem.split(': ', 1)[1]}"
                      for problem in _string_problems(node.value, shipped)]
        elif isinstance(node, ast.Call) and "wraps" in _names(node.func) and (
                any(k.arg in ("assigned", "updated", None) for k in node.keywords) or len(node.args) > 1
                or any(isinstance(arg, ast.Starred) for arg in node.args)):
            found.append(f"line {node.lineno}: `wraps` told which attributes to copy")
    return sorted(set(found), key=lambda text: int(text.split()[1].rstrip(":")))


def _string_problems(text: str, shipped: str | None) -> list[str]:
    """A string that parses as code that looks a name up, calls or imports is read as code: torch has many
    functions that run a string (a string annotation `eval`ed by `torch.library.infer_schema`, fx's sources).
    One built at run time is the audit hook's to read (code_guard.py)."""
    try:
        tree = ast.parse(text.strip())
    except (SyntaxError, ValueError):
        return []  # not code: nothing Python would run
    if not any(isinstance(node, _CODE_NODES) for node in ast.walk(tree)):
        return []
    return problems(text.strip(), shipped)


# Refused names a fix may well write as a string of its own (a mode, a label): what reaches them by a string is
# read at run time (eval's or open's own checks), not here.
_WORDS = {"open", "raw", "listen", "locate", "ast", "rewriter", "eval", "exec", "compile", "breakpoint", "memoryview",
          "buffer"}
_STRING_MODULES = {"sys", "os", "builtins", "gc", "checker", "importlib", "ctypes", "inspect", "posix", "io", "_io"}


def _refused_name(text: str) -> bool:
    """A string that is a name the gate refuses (a module that reaches the interpreter, a builtin, an attribute),
    as one hands to what looks a name up: `fetch_attr(obj, "__globals__")`, `namespace["sys"]`."""
    return text not in _WORDS and (text in _STRING_MODULES | _BUILTINS | _ATTRIBUTES or text.startswith("checker."))


_STDLIB = IMPORTABLE - {"torch", "numpy", "typing_extensions", "__future__"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _root(node: ast.AST) -> str:
    """The name a chain of attributes starts from (`a` of `a.b.c`); "" for anything else."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _names(func: ast.AST) -> set[str]:
    return {func.id} if isinstance(func, ast.Name) else {func.attr} if isinstance(func, ast.Attribute) else set()


def _refused_attribute(name: str) -> bool:
    return name in _ATTRIBUTES or (name not in _TENSOR_METHODS and _REFUSED_KINDS.search(name) is not None)


def _runs_its_strings(func: ast.AST, timeit_names: set[str]) -> bool:
    """A timer's constructor (`timeit.Timer`, `benchmark.Timer`), or the timeit module's `timeit` or `repeat`."""
    if isinstance(func, ast.Name):
        return func.id == "Timer" or f"{func.id}()" in timeit_names
    return isinstance(func, ast.Attribute) and (func.attr == "Timer" or (
        func.attr in ("timeit", "repeat") and isinstance(func.value, ast.Name) and func.value.id in timeit_names))


def _statement_problems(call: ast.Call, shipped: str | None, defined: set[str]) -> list[str]:
    """A timer's statement and setup: a string written out (read as code too), a lambda, or a function of the
    file; anything else may be a string made at run time."""
    statements = call.args[:2] + [k.value for k in call.keywords if k.arg in _STATEMENT_KEYWORDS]
    found = []
    for statement in statements:
        if isinstance(statement, ast.Constant) and isinstance(statement.value, str):
            found += [f"line {call.lineno}: in the timer's statement, {problem.split(': ', 1)[1]}"
                      for problem in problems(statement.value, shipped)]
        elif not (isinstance(statement, ast.Lambda) or (isinstance(statement, ast.Name) and statement.id in defined)):
            found.append(f"line {call.lineno}: a timer's statement that is not written out in the file")
    return found


def _imported_by(shipped: str | None) -> set[str]:
    """The top-level modules the shipped exercise file imports (a vendored kernel package, tried and missed)."""
    try:
        tree = ast.parse(shipped or "")
    except SyntaxError:
        return set()
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
              and not node.level}
    return {name.split(".")[0] for name in names} - _MODULES


def _notebook_check(node: ast.ImportFrom) -> bool:
    """`from checker.notebook import check`, in the cell a notebook grades: the grading call, not an attack."""
    return node.module == "checker.notebook" and [(a.name, a.asname) for a in node.names] == [("check", None)]


def _denied_module(name: str, allowed: set[str]) -> bool:
    parts = name.split(".")
    return parts[0] not in allowed or parts[0] in _MODULES \
        or any(".".join(parts[:length]) in DENIED_SUBMODULES for length in range(2, len(parts) + 1))


def gate_check(source: str | None, shipped: str | None = None, refused: list[str] = ()) -> CheckResult:
    """The gate's check: the file's text, and `refused`, what the checked process asked Python to run as code
    and was refused (code_guard.py)."""
    found = problems(source, shipped) + [f"at run time, {what}" for what in refused]
    if not found:
        return CheckResult(NAME, PASS, "the file uses nothing that reaches into the checker")
    shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    return CheckResult(NAME, FAIL, "The file uses what reaches into the checker that runs it, which no fix needs, "
                       f"so it cannot pass: {shown}. Remove it (a fix needs torch and plain Python only).")
