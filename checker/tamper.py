"""Detect a submission that switches torch.compile off instead of fixing the break.

Taken before the learner's file is imported, a `Snapshot` records the identity of every function and
class in the modules the check relies on, the compile stance, and torch._dynamo.config. Compared after
the run, any replaced function, changed stance or config key the exercise does not allow is a finding.
"""

from __future__ import annotations

import builtins
import importlib
import logging
import warnings
from dataclasses import dataclass
from typing import Any

import torch
import torch._dynamo
from torch._dynamo import eval_frame, symbolic_convert

from checker import engine

# Modules whose functions a cheat could replace to hide a break, fake a result or skip compilation.
WATCHED_MODULES = (
    "torch", "torch.compiler", "torch._dynamo", "torch._dynamo.eval_frame", "torch._dynamo.convert_frame",
    "torch._dynamo.symbolic_convert", "torch._dynamo.output_graph", "torch._dynamo.utils",
    "torch._dynamo.exc", "torch._dynamo.trace_rules", "torch._dynamo.decorators", "torch.fx",
    "torch.testing", "builtins", "warnings", "logging", "io", "os",
    "checker.engine", "checker.manifest", "checker.sandbox", "checker.trial", "checker.tamper",
)
WATCHED_CLASSES = (torch.Tensor, torch._C.TensorBase, torch.nn.Module, torch.fx.GraphModule,
                   symbolic_convert.InstructionTranslatorBase, logging.Logger)


def _callables(namespace: dict[str, Any], prefix: str) -> dict[str, int]:
    return {f"{prefix}.{name}": id(value) for name, value in list(namespace.items())
            if callable(value) and not name.startswith("__")}


@dataclass
class Snapshot:
    identities: dict[str, int]  # qualified name -> id() of every watched function and class
    class_members: set[str]  # every attribute of the watched classes: an added method is a patch too
    config: dict[str, Any]
    stance: str

    @classmethod
    def take(cls) -> Snapshot:
        identities: dict[str, int] = {}
        class_members: set[str] = set()
        for name in WATCHED_MODULES:
            module = importlib.import_module(name)
            identities.update(_callables(vars(module), name))
        for klass in WATCHED_CLASSES:
            prefix = f"{klass.__module__}.{klass.__qualname__}"
            identities.update(_callables(dict(vars(klass)), prefix))
            class_members.update(f"{prefix}.{member}" for member in vars(klass))
        return cls(identities=identities, class_members=class_members, config=engine.config_snapshot(),
                   stance=eval_frame._stance.stance)

    def findings(self, allowed_config: tuple[str, ...], entry: Any,
                 config_changed_while_compiling: list[str] = (), stances_while_compiling: list[str] = ()) -> list[str]:
        """What changed since the snapshot, one sentence each; empty when nothing was switched off."""
        found = []
        now = Snapshot.take()
        replaced = sorted({name for name, ident in self.identities.items()
                           if now.identities.get(name, ident) != ident or name not in now.identities}
                          | (now.class_members - self.class_members))
        if replaced:
            shown = ", ".join(replaced[:5]) + (f" and {len(replaced) - 5} more" if len(replaced) > 5 else "")
            found.append(f"replaced or removed functions the check relies on: {shown}")
        changed = (engine.config_differences(self.config) | set(config_changed_while_compiling)) - set(allowed_config)
        if changed:
            allowed = ", ".join(allowed_config) or "none"
            found.append(f"changed torch._dynamo.config.{', '.join(sorted(changed))} "
                         f"(this exercise allows: {allowed})")
        stances = {now.stance, *stances_while_compiling} - {"default"}
        if stances:
            found.append(f"changed the compile stance to {', '.join(sorted(stances))} (torch.compiler.set_stance)")
        if getattr(entry, "_torchdynamo_disable", False):
            found.append("wrapped the function in torch.compiler.disable / torch._dynamo.disable")
        return found
