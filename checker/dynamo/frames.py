"""Where in the user's code something happened: the frame to show for a graph break or an exception.

An exception raised while Dynamo compiles has a traceback that ends in torch's own files; the user's
frames are in what Dynamo was tracing (`real_stack`, on the exception or one it was raised from) or, on
releases without it, only in the "from user code:" part of its message. A learner is shown their own
frame, never a line of torch.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import traceback
from typing import Any

import torch

from checker.dynamo import cells, torch_support

# Folders as prefixes that end in a separator: torch's own folder must not also claim torchvision's or
# torchaudio's, which lie beside it in site-packages.
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_STDLIB_DIR = os.path.dirname(os.__file__) + os.sep
_CHECKER_DIR = os.path.dirname(__file__) + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep  # the whole checker: its frames are no one's code
_INSTALLED_MARKERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")
_USER_CODE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')

Frame = tuple[str, int, str]  # (filename, line, function)


def is_user_file(filename: str | None) -> bool:
    """Outside torch, the standard library and this checker's engine (an installed package counts as outside)."""
    if not filename or "<frozen" in filename or filename.startswith((_TORCH_DIR, _CHECKER_DIR)):
        return False
    # A Python without a venv keeps site-packages inside its standard library's folder.
    return not filename.startswith(_STDLIB_DIR) or any(marker in filename for marker in _INSTALLED_MARKERS)


def is_own_code(filename: str | None) -> bool:
    """Code the user wrote: outside torch, the standard library, this checker and installed packages."""
    return is_user_file(filename) and not any(marker in filename for marker in _INSTALLED_MARKERS)


def source_line(filename: str | None, line: int | None) -> str:
    return linecache.getline(filename, line).strip() if filename and line else ""


def place(filename: str | None, line: int | None) -> str:
    """Where a line is, as the reader sees it: `Cell In[3], line 5` for a notebook cell, as IPython's own
    tracebacks say it (not ipykernel's temporary file), else `file.py:5`."""
    cell = cells.cell_name(filename)
    return f"{cell}, line {line}" if cell else f"{os.path.basename(filename or '')}:{line}"


def shown_place(filename: str | None, line: int | None, checked_file: str, entry=None) -> str:
    """How a report names a line: `line 25` in the checked file (or a notebook cell), else with its file,
    `logging/__init__.py, line 297`, and the checked file's line that led there when it is known."""
    if not line:
        return ""
    if not filename or cells.cell_name(filename) or os.path.realpath(filename) == os.path.realpath(checked_file):
        return f"line {line}"
    place = f"{_python_path_name(filename)}, line {line}"
    entry_file, entry_line = (entry or ("", 0))[:2]
    if entry_line and os.path.realpath(entry_file) == os.path.realpath(checked_file):
        place += f" (reached from line {entry_line})"
    return place


def _python_path_name(filename: str) -> str:
    """A file as its import names it (`logging/__init__.py`, `torch/nn/modules/linear.py`), else its base name."""
    real = os.path.realpath(filename)
    for folder in sorted((os.path.realpath(entry) for entry in sys.path if entry), key=len, reverse=True):
        if real.startswith(folder + os.sep):
            return os.path.relpath(real, folder)
    return os.path.basename(filename)


def user_location(stack, focus_file, fallback):
    """(filename, line, function) of the frame a learner should look at.

    The innermost frame in `focus_file` when given, else the innermost frame outside torch and the
    standard library, else the innermost frame at all, else `fallback`.
    """
    frames = [(f.filename, f.lineno, f.name) for f in (stack or [])]
    if focus_file:
        focus = os.path.realpath(focus_file)
        in_focus = [f for f in frames if f[0] and os.path.realpath(f[0]) == focus]
        if in_focus:
            return in_focus[-1]
    outside = [f for f in frames if is_user_file(f[0])]
    if outside:
        return outside[-1]
    return frames[-1] if frames else fallback


def entry_frame(real_stack) -> tuple[str, int, str]:
    """The innermost frame of the user's own code, over the Python stack that led into Dynamo and the
    stack Dynamo was tracing: for a break deep in a library, the user's call that led there.

    The whole Python stack counts, not only the part above Dynamo's first frame: after a break, Dynamo
    resumes in a frame of its own that the user's forward calls while it runs, and that forward is
    further down the stack than the `compiled(...)` call that started it all."""
    live = [frame for frame in traceback.extract_stack() if not frame.filename.startswith(_PACKAGE_DIR)]
    for frame in reversed(live + list(real_stack or [])):
        if is_own_code(frame.filename) and not frame.filename.startswith(_PACKAGE_DIR):
            return (frame.filename, frame.lineno or 0, source_line(frame.filename, frame.lineno))
    return ("", 0, "")


def error_location(err: BaseException, focus_file: str | None) -> tuple[str | None, int | None]:
    """The user's frame an exception should be shown at, over its traceback and then the code Dynamo was
    tracing: the innermost one in `focus_file`, else the innermost of the user's own code; (None, None)
    when there is none (never a line of torch or of this checker)."""
    frames = list(traceback.extract_tb(err.__traceback__)) + _traced_stack(err)
    focus = os.path.realpath(focus_file) if focus_file else None
    mine = [f for f in frames if focus and f.filename and os.path.realpath(f.filename) == focus] or \
        [f for f in frames if is_own_code(f.filename) and not f.filename.startswith(_PACKAGE_DIR)]
    return (mine[-1].filename, mine[-1].lineno) if mine else (None, None)


def _chain(err: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    while err is not None and err not in found and len(found) < 16:
        found.append(err)
        err = err.__cause__ or err.__context__
    return found


def _traced_stack(err: BaseException) -> list[Any]:
    """The frames Dynamo was tracing when `err` (or an exception it was raised from) began."""
    for inner in _chain(err):
        stack = getattr(inner, "real_stack", None)
        if stack:
            return list(stack)
    text = str(err)
    if "from user code:" not in text:
        return []
    told = text[text.index("from user code:"):]
    return [traceback.FrameSummary(filename, int(line), function, lookup_line=False)
            for filename, line, function in _USER_CODE.findall(told)]


def wrapped_cause(err: BaseException) -> str:
    """For an exception torch raised around another one, the other in a line: the ordinary exception an
    operator raised on fake tensors ("RuntimeError: There was no fake impl registered ..."), else the graph
    break behind an error such as "higher order operator ... Got graph break/error:". "" when none."""
    if not type(err).__module__.startswith("torch"):
        return ""
    own = (str(err).strip().splitlines() or [""])[0]
    inner = _chain(err)[1:]
    root = inner[-1] if inner else None
    if root is not None and type(root).__module__ == "builtins":
        first = (str(root).strip().splitlines() or [""])[0].strip()
        if first and first not in own:
            return f"{type(root).__name__}: {first}"[:400]
    for exc in reversed(inner):
        gb_type, explanation, _ = torch_support.message_parts(exc)
        if gb_type and gb_type not in own:
            return f"{gb_type}: {explanation}"[:400] if explanation else gb_type
    return ""
