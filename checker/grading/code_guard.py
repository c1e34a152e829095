"""No text becomes code behind the gate's back: an audit hook in the checked process.

The gate (gate.py) reads the file's text. But torch has many functions that run a string as code (fx's
`_method_from_src`, `jit.unsupported_tensor_ops.execWrapper`, the `eval` of a string annotation in
`torch.library.infer_schema`, and dozens more), and a string can be built at run time, where no text check
sees it. So the checked process gets, before the learner's file is imported, an audit hook that reads each
piece of text Python is asked to compile *on the learner's behalf* with the same gate, and refuses it, naming
what it found, when the gate would refuse it in the file. A string that passes is no more than what the file
could have written itself.

"On the learner's behalf": going out from the compile through the call stack, past torch's, numpy's and the
standard library's frames, the first other frame is the learner's (their file, or code their file had
compiled), not the checker's own, and no Dynamo compilation (`convert_frame`) stands between. Dynamo compiling
the learner's function compiles code of its own (guards, graph modules, resumed frames): that is torch's, and
is left alone; so is what the checker compiles (the learner's file itself, which the gate has read). What
Python's import machinery compiles or unmarshals from a file under those folders, and what such a module's
body compiles as it is imported (its dataclasses), are left alone too.

Also refused on the learner's behalf, since no fix needs them: a function's code or defaults replaced (what
runs would not be what the gate read), by the learner's code or by a helper (only a helper giving defaults to a
function of the learner's that had none is left alone: Dynamo does so as it rebuilds a nested function to resume
after a graph break, `namedtuple` to its `__new__`), an object's class swapped (by the learner's code: torch's
parametrize gives a module a class of its own), a code object built from parts (`code.__new__`, `code.replace`),
a syntax tree compiled, `marshal.loads`, an unpickled global the gate would refuse to name, a file descriptor
opened by number to write (the result pipe is one), and text compiled under the name of a file of those folders
(its frames would pass for theirs).

Each refusal is also written straight to the process's stderr descriptor, which the grader reads after the
child has ended (`refused_code`): a file that catches the PermissionError still fails the gate. The hook is
Python's: code that reaches the OS another way is the gate's and the sandbox's to stop (README, "Threat
model").
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
import types

import numpy
import torch

from checker.grading import audit_hook, gate

_MARK = "gbcheck refused code: "
_IMPORT_MACHINERY = ("<frozen importlib._bootstrap", "<frozen zipimport")
_DYNAMO_COMPILES = os.path.join(os.path.dirname(torch.__file__), "_dynamo", "convert_frame.py")
_CHECKER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_installed: list[bool] = []
_SETS = ("object.__setattr__", "object.__delattr__")  # audited for a function's innards and an object's class
_FUNCTION_INNARDS = ("__code__", "__defaults__", "__kwdefaults__")
_EVENTS = {"compile", "code.__new__", "marshal.loads", "pickle.find_class", "open", *_SETS}
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT


def _trusted_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders |= {os.path.dirname(torch.__file__), os.path.dirname(numpy.__file__)}
    return tuple(sorted(os.path.realpath(folder) + os.sep for folder in folders if folder))


def install(shipped: str | None) -> None:
    """Install the hook in this process, once (a hook cannot be removed: it lasts as long as the process).
    `shipped`: the exercise file as shipped, whose imports the gate allows."""
    if _installed:
        return
    _installed.append(True)
    audit_hook.watch(_EVENTS, _hook(_trusted_folders(), shipped))


def _hook(trusted: tuple[str, ...], shipped: str | None):
    realpaths: dict[str, bool] = {}

    def is_trusted(filename: str) -> bool:
        known = realpaths.get(filename)
        if known is None:
            known = filename.startswith("<frozen ") or (
                filename.startswith(os.sep) and os.path.realpath(filename).startswith(trusted))
            realpaths[filename] = known
        return known

    def guarded(filename: str) -> bool:
        return is_trusted(filename) or filename.startswith(_CHECKER)

    def for_learner(frame) -> bool:
        """Whether the event was raised on the learner's behalf (module docstring)."""
        while frame is not None:
            code = frame.f_code  # read once: each read of a frame's code is an audit event, this hook's too
            filename = code.co_filename
            if filename == _DYNAMO_COMPILES or filename.startswith(_CHECKER):
                return False  # torch compiling the learner's code, or the checker running it
            if not is_trusted(filename):
                return True
            outer = frame.f_back
            if code.co_name == "<module>" and outer is not None \
                    and outer.f_code.co_filename.startswith(_IMPORT_MACHINERY):
                return False  # the body of a module of torch's (or numpy's, Python's) being imported
            frame = outer
        return False

    def refuse(what: str) -> None:
        os.write(2, f"\n{_MARK}{what}\n".encode(errors="replace"))
        raise PermissionError(f"{gate.NAME}: {what}")

    def hook(event: str, args: tuple) -> None:
        if event not in _EVENTS or (event in _SETS and not _watched(args[0], args[1])):
            return
        if event == "open" and not (type(args[0]) is int and _writes(args[1], args[2])):
            return  # a path: confine.py's to judge; a descriptor opened by number to write (the result pipe's), ours
        caller = sys._getframe(audit_hook.CALLER)
        if caller.f_code.co_filename.startswith(_IMPORT_MACHINERY) and (
                event == "marshal.loads" or (event == "compile" and is_trusted(str(args[1])))):
            return  # a module of torch, numpy or the standard library, imported from its file
        if event in _SETS and type(args[0]) is types.FunctionType and args[1] != "__code__" \
                and is_trusted(caller.f_code.co_filename) and getattr(args[0], args[1]) is None \
                and not guarded(args[0].__code__.co_filename):
            return  # a helper giving defaults to a function it has just made
        if event in _SETS and args[1] == "__class__" and is_trusted(caller.f_code.co_filename):
            return  # torch's own (parametrize gives a module a class of its own)
        if not for_learner(caller):  # the gate's own ast.parse below is the checker's: it stops here
            return
        problem = _problem(event, args, shipped)  # runs none of the learner's code (no repr, no str of theirs)
        if event == "compile" and not problem and (is_trusted(str(args[1])) or str(args[1]).startswith(_CHECKER)):
            problem = f"text compiled under the name of a file of torch's, Python's or the checker's ({args[1]})"
        if problem:
            refuse(problem)

    return hook


def _writes(mode: object, flags: object) -> bool:
    return any(c in mode for c in "wax+") if isinstance(mode, str) else isinstance(flags, int) and bool(flags & _WRITES)


def _watched(target: object, name: str) -> bool:
    """A set or del the learner's code may not make: a function's code or defaults, or any object's class (a
    module given a class of the file's answers every look-up as that class says). Python 3.11 audits no other."""
    return name == "__class__" or (type(target) is types.FunctionType and name in _FUNCTION_INNARDS)


def _problem(event: str, args: tuple, shipped: str | None) -> str | None:
    if event == "open":
        return f"file descriptor {args[0]} opened to write"
    if event in _SETS and args[1] == "__class__":
        return "an object's class replaced"
    if event in _SETS:
        return f"a function's `{args[1]}` replaced"
    if event == "code.__new__":
        return "a code object built from parts"
    if event == "marshal.loads":
        return "code read with marshal"
    if event == "pickle.find_class":
        module, name = str(args[0]), str(args[1])
        found = gate.problems(f"from {module} import {name}", shipped)
        return f"an unpickled `{module}.{name}`" if found else None
    source = args[0]
    if type(source) in (bytes, bytearray):
        text = source.decode("utf-8", errors="replace")
    elif type(source) is str:
        text = source
    else:  # a syntax tree (its constants may be any object) or a buffer: no fix compiles one
        return "a syntax tree, or an object other than text, compiled as code"
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return None  # Python refuses it too, before running any of it
    found = gate.problems(text, shipped)
    if not found:
        return None
    first = text.strip().splitlines()[0][:80] if text.strip() else ""
    return f"text run as code ({first!r}...): " + "; ".join(p.split(": ", 1)[1] for p in found[:3])


def refused_code(output: str) -> list[str]:
    """What the hook refused, read from a child's output."""
    return list(dict.fromkeys(line[len(_MARK):] for line in output.splitlines() if line.startswith(_MARK)))
