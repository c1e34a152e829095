"""How a notebook of the course shows torch's errors, logs and warnings: the lesson, not the machine.

Every chapter's setup cell calls `course_display()`. It changes how output is shown, never what torch
says: an error keeps torch's whole message (the graph break, its GB id, the user's line) and the frames
of the reader's own code, and leaves out the frames inside torch; torch's log records are printed without
the level letter, timestamp, process id and torch source line that start each line by default (the compile
id such as `[0/0]` stays); a warning names its file relative to the Python path. A cell run after it is
named as IPython names it in a traceback, `Cell In[3]`, rather than ipykernel's temporary file
(`/tmp/ipykernel_<pid>/<hash>.py`), so torch's messages say `File "Cell In[3]", line 5, in fn`, which the
reader can find by the cell's prompt; the lines torch quotes still come from the cell, through linecache,
as before. ipykernel's name serves its debugger, whose breakpoints in cells need it: `course_display(False)`
shows everything as before, the names of cells run from then on included.
"""

from __future__ import annotations

import importlib.util
import linecache
import logging
import os
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any

# The start of every line torch logs (torch/_logging/_internal.py, TorchLogsFormatter): an optional rank, the
# level letter, the date and time, the process id and torch's own file and line. What follows it stays: the
# compile id such as [0/0], the artifact such as [__graph_breaks], and the message.
_LOG_PREFIX = re.compile(r"^(\[rank\d+\]:)?[A-Z]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+:\d+\] ?", re.M)
_LOG_INTERNALS = ("DEFAULT_FORMATTER", "TorchLogsFormatter", "handlers", "LazyTraceHandler")
_original_formatwarning = warnings.formatwarning


def course_display(enabled: bool = True) -> None:
    """Show torch's errors, logs and warnings as the book does (or, with False, as torch and IPython do)."""
    _set_log_formatter(enabled)
    warnings.formatwarning = _formatwarning if enabled else _original_formatwarning
    shell = _ipython()
    if shell is not None:
        shell.set_custom_exc(*(((Exception,), _show_without_torch_frames) if enabled else ((), None)))
        _name_cells_as_ipython_shows_them(shell, enabled)


def strip_log_prefix(text: str) -> str:
    """torch's log lines without their level, time, process id and torch source line."""
    return _LOG_PREFIX.sub(lambda match: match.group(1) or "", text)


def _ipython() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None


def _name_cells_as_ipython_shows_them(shell: Any, enabled: bool) -> None:
    """Cells compiled from now on are named `Cell In[N]` (N, the execution count), or as the shell's compiler
    names them (with False). IPython's compiler keeps the cell's lines in linecache under that name and maps
    it to N, which is how its own tracebacks say `Cell In[N], line 5`."""
    compiler = getattr(shell, "compile", None)
    if compiler is None or not hasattr(compiler, "get_code_name"):
        return
    compiler.__dict__.pop("get_code_name", None)  # the class's own naming
    if enabled:
        own_naming = compiler.get_code_name

        def get_code_name(raw_code: str, transformed_code: str, number: int) -> str:
            lines = [line + "\n" for line in transformed_code.splitlines()]
            name, again = f"Cell In[{number}]", 1
            # Code run without a new execution count (a silent run) shares the count of the next cell:
            # another name, so that each keeps its own lines.
            while name in linecache.cache and linecache.cache[name][2:3] != (lines,):
                again += 1
                name = f"Cell In[{number}] ({again})"
            return name if number else own_naming(raw_code, transformed_code, number)

        compiler.get_code_name = get_code_name


def _set_log_formatter(enabled: bool) -> None:
    """torch's handlers, and those `torch._logging.set_logs` makes from now on, format without the prefix."""
    if importlib.util.find_spec("torch") is None:
        return
    import torch._logging._internal as internal

    if not all(hasattr(internal, name) for name in _LOG_INTERNALS):
        return  # a torch whose logging is built otherwise keeps its own format

    class CourseLogFormatter(internal.TorchLogsFormatter):
        def format(self, record: logging.LogRecord) -> str:
            return strip_log_prefix(super().format(record))

    formatter = CourseLogFormatter() if enabled else internal.TorchLogsFormatter()
    internal.DEFAULT_FORMATTER = formatter
    for handler in list(internal.handlers):
        if not isinstance(handler, internal.LazyTraceHandler):  # TORCH_TRACE's structured log keeps its format
            handler.setFormatter(formatter)


def _formatwarning(message, category, filename, lineno, line=None) -> str:
    return _original_formatwarning(message, category, _relative_to_python_path(filename), lineno, line)


def _relative_to_python_path(filename: str) -> str:
    path = Path(filename)
    for entry in sorted((p for p in sys.path if p), key=len, reverse=True):
        if path.is_relative_to(entry):
            return str(path.relative_to(entry))
    return filename


def _torch_folder() -> str | None:
    torch = sys.modules.get("torch")
    origin = getattr(torch, "__file__", None)
    return os.path.dirname(origin) + os.sep if origin else None


def _without_torch_frames(tb: types.TracebackType | None, torch_folder: str) -> types.TracebackType | None:
    """The same traceback, less the frames whose code lives in torch's package."""
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(torch_folder):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for frame in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return rebuilt


def _show_without_torch_frames(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: its usual display, of a traceback without torch's frames."""
    torch_folder = _torch_folder()
    if torch_folder is not None:
        tb = _without_torch_frames(tb, torch_folder)
        seen, chained = {id(value)}, value.__cause__ or value.__context__
        while chained is not None and id(chained) not in seen:  # the causes IPython shows above the error
            seen.add(id(chained))
            chained.__traceback__ = _without_torch_frames(chained.__traceback__, torch_folder)
            chained = chained.__cause__ or chained.__context__
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
