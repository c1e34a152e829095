"""checker.notebook.course_display, as a chapter's setup cell uses it: real torch and a real IPython shell,
each in a process of its own (the display changes process-wide state: torch's log handlers, IPython's exception handler)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

LOG_PREFIX = re.compile(r"^[A-Z]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+:\d+\]", re.M)

RECOMPILE = """
import torch
torch._logging.set_logs(recompiles=True)
scale = torch.compile(lambda x: x * 2, backend="eager")
scale(torch.ones(2))
scale(torch.ones(3))
"""

BREAK_IN_A_SHELL = """
import re
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
{setup}
shell.run_cell('''
import torch

def clip_norm(x):
    norm = x.norm()
    if norm > 1.0:
        x = x / norm
    return x

torch.compile(clip_norm, backend="eager", fullgraph=True)(torch.ones(3))
''')
"""


def _run(code: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    return done


@pytest.mark.parametrize("enabled", [True, False])
def test_torch_logs_lose_their_prefix_and_keep_the_compile_id(enabled):
    done = _run(f"from checker.notebook import course_display\ncourse_display({enabled})\n" + RECOMPILE)
    assert done.returncode == 0, done.stderr
    assert "[0/1] [__recompiles] Recompiling function <lambda>" in done.stderr
    assert "size mismatch at index 0. expected 2, actual 3" in done.stderr
    assert bool(LOG_PREFIX.search(done.stderr)) is not enabled, done.stderr


def test_a_graph_break_error_shows_the_cell_and_torchs_message_without_torchs_frames():
    pytest.importorskip("IPython")
    setup = "from checker.notebook import course_display\ncourse_display()"
    shown = re.sub(r"\x1b\[[0-9;]*m", "", _run(BREAK_IN_A_SHELL.format(setup=setup)).stdout)
    assert "Unsupported: Data-dependent branching" in shown and "gb0170" in shown
    assert "from user code:" in shown and "if norm > 1.0:" in shown
    assert "Cell In[1], line 9" in shown  # the reader's own frame stays
    assert "eval_frame.py" not in shown and "site-packages" not in shown, shown

    plain = re.sub(r"\x1b\[[0-9;]*m", "", _run(BREAK_IN_A_SHELL.format(setup="")).stdout)
    assert "eval_frame.py" in plain, "without the course's display, IPython shows torch's frames"
