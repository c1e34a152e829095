"""What a branch's test, or a loop's iterable, reads: for the `untraced branch-on:…` and `loop-over:…` readings.

A source is a module-level name the exercise names (`branch-on:TEMPERATURE`, hoist-global-cond's table), or one of
two kinds the text shows without types:
  - TENSOR_VALUES (`branch-on:tensor-values`): what a tensor holds, read through a value, reduction or comparison
    method (`.mean()`, `.max()`, `.item()`, ...), not its shape (`size`, `dim`, `numel` are not among them): a
    Python branch on it is data-dependent, a graph break;
  - SIZES (`loop-over:tensor-sizes`): a size (`.shape`, `.size()`, `len()`): a Python loop over it is unrolled,
    one copy per step, so each new size is a new graph.
A method of such a name on anything counts, whatever its receiver: the reading fails closed. Both kinds are
spelt as no identifier is, so no name of a file can stand for them.
"""

from __future__ import annotations

import ast

TENSOR_VALUES = "tensor-values"
SIZES = "tensor-sizes"
_VALUE_METHODS = {"item", "tolist", "any", "all", "sum", "mean", "max", "min", "amax", "amin", "aminmax", "norm",
                  "prod", "std", "var", "median", "argmax", "argmin", "count_nonzero", "nonzero", "equal",
                  "allclose", "isclose", "isnan", "isinf", "isfinite", "lt", "le", "gt", "ge", "eq", "ne"}


def sources_read(node: ast.AST, wanted: set[str], derived: dict[str, set[str]]) -> set[str]:
    """The sources of `wanted` that `node` reads, directly or through a local of `derived` (local name -> the
    sources it was computed from)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and (sub.id in wanted or sub.id in derived):
            found |= derived.get(sub.id, {sub.id})
        elif TENSOR_VALUES in wanted and isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                and sub.func.attr in _VALUE_METHODS:
            found.add(TENSOR_VALUES)
        elif SIZES in wanted and _reads_a_size(sub):
            found.add(SIZES)
    return found


def _reads_a_size(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "shape") or isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "size")
        or (isinstance(node.func, ast.Name) and node.func.id == "len"))
