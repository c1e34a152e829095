"""checker.notebook.course_display, as a chapter's setup cell uses it: real torch and a real IPython shell,
each in a process of its own (the display changes process-wide state: torch's log handlers, IPython's exception
handler and the names it compiles cells under)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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


# Three cells, run as a kernel runs them (each with its own execution count): a definition, then calls
# whose messages name it. `diagnose` and `check` come from the book's one module.
CELLS_IN_A_KERNEL = """
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell('from checker.notebook import check, course_display, diagnose\\ncourse_display({enabled})',
               store_history=True)
shell.run_cell('''import torch
torch._logging.set_logs(recompiles=True)

def clip_norm(x):
    norm = x.norm()
    if norm > 1.0:
        x = x / norm
    return x
''', store_history=True)
shell.run_cell('''scale = torch.compile(clip_norm, backend="eager")
scale(torch.ones(3)); scale(torch.ones(3, 3))
print(diagnose(clip_norm, (torch.ones(3),), "default"))
torch.compile(clip_norm, backend="eager", fullgraph=True)(torch.ones(3))
''', store_history=True)
"""


def _shown(code: str) -> str:
    done = _run(code)
    return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)


def test_torch_names_a_cell_as_ipython_does_and_still_quotes_its_lines():
    pytest.importorskip("IPython")
    shown = _shown(CELLS_IN_A_KERNEL.format(enabled=True))
    # The user's line as torch quotes it, read from the cell (torch 2.13 marks it with carets, 2.8 does not).
    assert 'File "Cell In[2]", line 6, in clip_norm\n    if norm > 1.0:\n' in shown, shown
    assert "Recompiling function clip_norm in Cell In[2]:4" in shown  # the log names the same cell
    assert "GB0170 Data-dependent branching at Cell In[2], line 6: if norm > 1.0:" in shown  # and diagnose
    assert "Cell In[3], line 4" in shown  # IPython's own frame of the calling cell
    assert "ipython-input" not in shown and "ipykernel" not in shown and not re.search(r"\d{5,}\.py", shown)


def test_without_the_course_display_torch_has_the_shells_name_and_diagnose_still_the_readers():
    pytest.importorskip("IPython")
    shown = _shown(CELLS_IN_A_KERNEL.format(enabled=False))
    assert re.search(r'File "<ipython-input-2-[0-9a-f]+>", line 6, in clip_norm', shown), shown
    assert "GB0170 Data-dependent branching at Cell In[2], line 6: if norm > 1.0:" in shown


def test_cells_run_without_a_new_count_keep_their_own_lines():
    """A silent run (store_history=False) shares the next cell's count: each cell keeps a name of its own."""
    pytest.importorskip("IPython")
    code = """
from IPython.core.interactiveshell import InteractiveShell
import linecache
shell = InteractiveShell.instance()
shell.run_cell('from checker.notebook import course_display\\ncourse_display()')
shell.run_cell('def first():\\n    return 1')
shell.run_cell('def second():\\n    return 2')
names = [shell.user_ns[f].__code__.co_filename for f in ("first", "second")]
print(*names, *(linecache.getline(name, 2).strip() for name in names), sep=" | ")
"""
    assert _shown(code).strip().splitlines()[-1] == "Cell In[1] | Cell In[1] (2) | return 1 | return 2"


def test_a_check_names_the_cell_it_graded_not_the_graders_copy():
    pytest.importorskip("IPython")
    exercise = (Path(__file__).resolve().parent.parent / "exercises" / "01_cat_bug.py").read_text(encoding="utf-8")
    code = f"""
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell('from checker.notebook import check, course_display\\ncourse_display()', store_history=True)
shell.run_cell({exercise!r}, store_history=True)
shell.run_cell('report = check("cat-bug", add_position_features)\\nprint("FILE", report.report.file)\\nprint(repr(report))',
               store_history=True)
"""
    shown = _shown(code)
    assert "FILE Cell In[2]" in shown, shown
    assert "(0/10 points, Cell In[2])" in shown and "gbcheck-nb-" not in shown
