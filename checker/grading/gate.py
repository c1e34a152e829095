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

A text check, not a sandbox: it cannot see through every door torch itself leaves open, and it says so in
the threat model. What it does is take away the plain ways, which are all the ways a forged report has
been written so far.
"""

from __future__ import annotations

import ast

from checker.grading.report import FAIL, PASS, CheckResult

NAME = "no-grader-access"

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
    "__defaults__", "__import__",
}


_METHODS = {"modules", "open"}  # called, they are torch's and a file object's own: `module.modules()`


def problems(source: str | None) -> list[str]:
    """Each construct of `source` that reaches into the checker, as "line N: what"; [] for a plain file."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        return []  # the import reports it, at its line
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: `import {a.name}`" for a in node.names if _denied_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and (node.level or _denied_module(node.module or "")) \
                and not _notebook_check(node):
            found.append(f"line {node.lineno}: `from {'.' * node.level}{node.module or ''} import ...`")
        elif isinstance(node, ast.Name) and node.id in _BUILTINS:
            found.append(f"line {node.lineno}: `{node.id}`")
        elif isinstance(node, ast.Attribute) and node.attr in _ATTRIBUTES \
                and not (node.attr in _METHODS and id(node) in called):
            found.append(f"line {node.lineno}: `.{node.attr}`")
    return sorted(set(found), key=lambda text: int(text.split()[1].rstrip(":")))


def _notebook_check(node: ast.ImportFrom) -> bool:
    """`from checker.notebook import check`, in the cell a notebook grades: the grading call, not an attack."""
    return node.module == "checker.notebook" and [(a.name, a.asname) for a in node.names] == [("check", None)]


def _denied_module(name: str) -> bool:
    return name.split(".")[0] in _MODULES


def gate_check(source: str | None) -> CheckResult:
    found = problems(source)
    if not found:
        return CheckResult(NAME, PASS, "the file uses nothing that reaches into the checker")
    shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    return CheckResult(NAME, FAIL, "The file uses what reaches into the checker that runs it, which no fix needs, "
                       f"so it cannot pass: {shown}. Remove it (a fix needs torch and plain Python only).")
