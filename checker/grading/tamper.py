"""Detect a submission that switches torch.compile off instead of fixing the break.

Taken before the learner's file is imported, a `Snapshot` records the identity of every function and
class in the modules the check relies on, the compile stance, and torch._dynamo.config. Compared after
the run, any replaced function, changed stance or config key the exercise does not allow is a finding.

Identity alone misses a function changed in place, so for every Python function in those namespaces
(and every method of the watched classes and of the checker's own classes) it also records the code
object, the defaults and what each closure cell holds: swapping `__code__`, or a cell's contents, is a
finding too. Of the checker's own modules it records every global, not only the callables: replacing a
module-level list or dict the recorder reads is as much a patch as replacing a function.

This is a check against honest mistakes and casual cheats, run inside the checked process: code written
to attack it can still reach what no snapshot covers (an object's attributes deep inside Dynamo, the
interpreter itself). The verdict does not rest on it alone: see replay.py.
"""

from __future__ import annotations

import importlib
import logging
import operator
import sys
import types
from dataclasses import dataclass
from typing import Any

import torch
import torch._dynamo
from torch._dynamo import eval_frame, symbolic_convert

from checker.dynamo import engine

# Modules whose functions a cheat could replace to hide a break, fake a result or skip compilation.
WATCHED_MODULES = (
    "torch", "torch.compiler", "torch._dynamo", "torch._dynamo.eval_frame", "torch._dynamo.convert_frame",
    "torch._dynamo.symbolic_convert", "torch._dynamo.output_graph", "torch._dynamo.utils",
    "torch._dynamo.exc", "torch._dynamo.trace_rules", "torch._dynamo.decorators", "torch.fx",
    "torch.testing", "builtins", "warnings", "logging", "io", "os",
    "checker.dynamo.engine", "checker.dynamo.frames", "checker.course.manifest", "checker.course.values",
    "checker.course.draws",
    "checker.grading.sandbox", "checker.grading.trial", "checker.grading.tamper", "checker.grading.replay",
    "checker.grading.allowed", "checker.grading.observe", "checker.grading.probes", "checker.grading.compiled_probes",
    "checker.grading.plain",
)
WATCHED_CLASSES = (torch.Tensor, torch._C.TensorBase, torch.nn.Module, torch.fx.GraphModule,
                   symbolic_convert.InstructionTranslatorBase, logging.Logger)


CHECKER_MODULES = tuple(name for name in WATCHED_MODULES if name.startswith("checker."))


_NOTHING = object()  # an empty cell, or a name no longer there


def _function_state(value: Any) -> tuple[Any, ...] | None:
    """What a function is made of besides its identity: its code, defaults and closure contents, compared by
    identity (`_same`)."""
    if isinstance(value, (staticmethod, classmethod, types.MethodType)):
        value = value.__func__
    if not isinstance(value, types.FunctionType):
        return None
    cells = []
    for cell in value.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # an empty cell
            cells.append(_NOTHING)
    return (value.__code__, value.__defaults__, value.__kwdefaults__, *cells)


def _same(state: tuple[Any, ...] | None, saved: tuple[Any, ...]) -> bool:
    """The same objects, one by one (never `==`: a cell may hold a tensor, whose `==` is a tensor)."""
    return state is not None and len(state) == len(saved) and all(map(operator.is_, state, saved))


def _functions(namespace: dict[str, Any], prefix: str) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    """Every function of a namespace, and the methods of the checker's classes in it, by dotted name."""
    states = {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        state = _function_state(value)
        if state is not None:
            states[f"{prefix}.{name}"] = (value, state)
        elif isinstance(value, type) and value.__module__.startswith("checker."):
            for member, inner in vars(value).items():
                inner_state = _function_state(inner)
                if inner_state is not None:
                    states[f"{prefix}.{name}.{member}"] = (inner, inner_state)
    return states


def _polyfill_handlers() -> dict[Any, Any]:
    """Dynamo's table of substitute_in_graph polyfills, original -> handler (torch 2.8 to 2.15); {} if none."""
    from torch._dynamo.variables import PolyfilledFunctionVariable

    handlers = getattr(PolyfilledFunctionVariable, "_get_polyfill_handlers", None)
    return handlers() if handlers is not None else {}


def _name(value: Any) -> str:
    return f"{getattr(value, '__module__', None) or 'builtins'}.{getattr(value, '__qualname__', type(value).__name__)}"


def _namespaces() -> dict[str, dict[str, Any]]:
    """Every watched namespace by its dotted name: modules by name, classes by module and qualname."""
    spaces = {name: vars(sys.modules.get(name) or importlib.import_module(name)) for name in WATCHED_MODULES}
    spaces.update({f"{klass.__module__}.{klass.__qualname__}": vars(klass) for klass in WATCHED_CLASSES})
    return spaces


@dataclass
class Snapshot:
    # namespace -> name -> every function and class in it, dunder names left out
    identities: dict[str, dict[str, Any]]
    class_members: dict[str, set[str]]  # every attribute of the watched classes: an added method is a patch too
    config: dict[str, Any]
    stance: str
    functions: dict[str, tuple[Any, tuple[Any, ...]]]  # dotted name -> (function, its code, defaults, cells)
    checker_globals: dict[str, dict[str, Any]]  # checker module -> global name -> its value
    substituted: set[int]  # id() of every function Dynamo already traces a polyfill of (substitute_in_graph)
    logging_disabled: int = logging.NOTSET  # `logging.disable`'s level for the whole process

    @classmethod
    def take(cls) -> Snapshot:
        # The objects themselves, compared by `is`, and names, no strings built per entry: a check compares
        # against this once per mode, in a child where every call of `id()` is an audit event both hooks see.
        identities, class_members, functions = {}, {}, {}
        for space, namespace in _namespaces().items():
            identities[space] = {name: value for name, value in namespace.items()
                                 if callable(value) and not name.startswith("__")}
            functions.update(_functions(namespace, space))
        for klass in WATCHED_CLASSES:
            space = f"{klass.__module__}.{klass.__qualname__}"
            class_members[space] = set(vars(klass))
        checker_globals = {name: {key: value for key, value in vars(sys.modules[name]).items()
                                  if not key.startswith("__")} for name in CHECKER_MODULES}
        return cls(identities=identities, class_members=class_members, config=engine.config_snapshot(),
                   stance=eval_frame._stance.stance, functions=functions, checker_globals=checker_globals,
                   substituted={id(original) for original in _polyfill_handlers()},
                   logging_disabled=logging.root.manager.disable)

    def findings(self, allowed_config: tuple[str, ...], entry: Any,
                 config_changed_while_compiling: list[str] = (), stances_while_compiling: list[str] = (),
                 polyfills: tuple[str, ...] = ()) -> list[str]:
        """What changed since the snapshot, one sentence each; empty when nothing was switched off.
        `polyfills`: the functions the exercise teaches a polyfill of (substitute_in_graph): one of those is a fix,
        not a finding."""
        found = []
        replaced = set()
        for space, namespace in _namespaces().items():
            for name, saved in self.identities[space].items():
                if namespace.get(name, _NOTHING) is not saved:
                    replaced.add(f"{space}.{name}")
            if space in self.class_members:
                replaced |= {f"{space}.{name}" for name in set(namespace) - self.class_members[space]}
        replaced |= {name for name, (function, state) in self.functions.items()
                     if not _same(_function_state(function), state)}
        for module, saved in self.checker_globals.items():
            namespace = vars(sys.modules[module])
            replaced |= {f"{module}.{key}" for key, value in saved.items()
                         if namespace.get(key, _NOTHING) is not value}
            replaced |= {f"{module}.{key}" for key in namespace if key not in saved and not key.startswith("__")}
        replaced = sorted(replaced)
        if replaced:
            shown = ", ".join(replaced[:5]) + (f" and {len(replaced) - 5} more" if len(replaced) > 5 else "")
            found.append(f"replaced, changed or removed functions and objects the check relies on: {shown}")
        changed = (engine.config_differences(self.config) | set(config_changed_while_compiling)) - set(allowed_config)
        if changed:
            allowed = ", ".join(allowed_config) or "none"
            found.append(f"changed torch._dynamo.config.{', '.join(sorted(changed))} "
                         f"(this exercise allows: {allowed})")
        stances = {eval_frame._stance.stance, *stances_while_compiling} - {"default"}
        if stances:
            found.append(f"changed the compile stance to {', '.join(sorted(stances))} (torch.compiler.set_stance)")
        # A polyfill of `print`, `warnings.warn` or a clock makes Dynamo trace something else in their place: the
        # break's cause is switched off for every compiled call, as a config key would, not taken out of the code.
        substituted = sorted({_name(original) for original in _polyfill_handlers()  # not the wrappers it adds
                              if id(original) not in self.substituted
                              and not hasattr(original, "__torch_dynamo_polyfill__")} - set(polyfills))
        if substituted:
            taught = f" (it teaches one of {', '.join(polyfills)} alone)" if polyfills else ""
            found.append(f"substituted {', '.join(substituted)} in what Dynamo traces "
                         f"(torch.compiler.substitute_in_graph), which this exercise does not teach{taught}")
        # `logging.disable` silences every logger of the process: the program's own logs, not only the file's
        if logging.root.manager.disable > self.logging_disabled:
            found.append(f"switched logging off for the whole process, up to level "
                         f"{logging.getLevelName(logging.root.manager.disable)} (logging.disable)")
        if getattr(entry, "_torchdynamo_disable", False):
            found.append("wrapped the function in torch.compiler.disable / torch._dynamo.disable")
        return found
