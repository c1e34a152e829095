"""A notebook cell's name as the reader sees it. Imports nothing heavy: `checker.notebook` uses it before torch.

ipykernel compiles each cell under a temporary file name (`/tmp/ipykernel_<pid>/<hash>.py`, for its
debugger), which is all that torch and a code object know of the cell. IPython's compiler maps that name
to the cell's execution count, and its tracebacks say `Cell In[3], line 5`: the prompt the reader sees
beside the cell. The course says it the same way.
"""

from __future__ import annotations

import sys


def cell_name(filename: str | None) -> str | None:
    """`Cell In[3]` for the file name of a cell the running IPython compiled, else None (a file, or no IPython)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    format_code_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = format_code_name(filename) if format_code_name and filename else None
    return " ".join(label) if label else None
