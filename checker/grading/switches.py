"""The `nothing-switched-off` check: what the file switched off instead of fixing the break.

Two readings. The checked process's tamper snapshot (tamper.py) names what changed while the file ran: a
disabled entry, the compile stance, a config key the exercise does not allow, a function of torch's replaced.
The grader's own reading of the file's text names what no snapshot watches: an attribute of an imported module
assigned (`torch.jit.isinstance = ...` swaps a function for the whole process), but for a config module's
(`torch._dynamo.config.NAME = True`, which the snapshot judges against what the exercise allows).
"""

from __future__ import annotations

import ast
from typing import Any

from checker.grading.file_text import FileText, read_file
from checker.grading.report import FAIL, PASS, SKIP, CheckResult

NAME = "nothing-switched-off"


def switched_off_check(payloads: list[dict[str, Any] | None], source: str | None) -> CheckResult:
    """`payloads`: each trial mode's payload (None where the mode sent none); `source`: the file's text."""
    findings = module_patches(source)
    for payload in payloads:
        if payload and payload["stage"] == "done":
            findings += [f for f in payload["tampering"] if f not in findings]
    if findings:
        return CheckResult(NAME, FAIL, "the file " + "; ".join(findings)
                           + ". Fix the graph break instead of switching the compiler off.")
    if not any(payload and payload["stage"] == "done" for payload in payloads):
        return CheckResult(NAME, SKIP, "needs the code to run first")
    return CheckResult(NAME, PASS, "compiler, stance and config untouched (beyond what is allowed)")


def module_patches(source: str | None) -> list[str]:
    """Each assignment to (or deletion of) an attribute of a module the file imports, other than a config
    module's: "replaces `torch.jit.isinstance` (line 9)"."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the import reports it
    file = read_file(tree)  # the file's import aliases, as Python resolves them
    found = []
    for node in ast.walk(tree):
        # `object.__setattr__(torch.jit, "isinstance", f)`, `type(m).__setattr__(m, ...)`: the same, by hand
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in ("__setattr__", "__delattr__") and _imported_root(file, node.args[0]):
            found.append(f"sets an attribute of `{file.resolve(node.args[0])}` by `{node.func.attr}` (line "
                         f"{node.lineno}), for the whole process")
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and _imported_root(file, node):
            dotted = file.resolve(node)
            if not any(part == "config" or part.endswith("_config") for part in dotted.split(".")[:-1]):
                found.append(f"replaces `{dotted}` (line {node.lineno}), for the whole process")
    return found


def _imported_root(file: FileText, node: ast.AST) -> bool:
    """Whether a chain of attributes starts at a name the file binds by an import."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in file.aliases
