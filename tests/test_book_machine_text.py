"""No stored output of the book shows what belongs to the process that recorded it, only what the reader sees.

A cell is named as IPython names it (`Cell In[3]`): the setup cell's course_display() makes torch's
messages say so too, in the book and in a reader's Colab alike. An object's address (torch quotes reprs
such as `<function f at 0x7f3a2c1e4220>`) is stored as `0x…` by scripts/record_book.py, and nbval's
sanitizer writes a fresh run's the same way. These tests read the notebooks as files and run no kernel.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
NOTEBOOKS = sorted(path.stem for path in BOOK.glob("*.ipynb"))

MACHINE_SPECIFIC = {
    "a kernel's file for a cell": re.compile(r"[^\s\"'<>]*ipykernel_\d+[/\\][^\s\"'<>:]*|<ipython-input-\d+-[0-9a-f]+>"),
    "an object's address": re.compile(r"(?<![0-9a-fA-FxX])0x[0-9a-fA-F]{6,16}(?![0-9a-fA-F])"),
    "a cell named by the hash of its code": re.compile(r"(?<![\w./-])\d{6,}\.py\b"),
    "the checker's temporary copy of a cell": re.compile(r"[^\s\"'<>(,]*gbcheck-nb-[^\s/\\]+[/\\]\S+"),
}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if isinstance(value, dict):  # an image's base64 is no text anyone reads
        return [text for key, item in value.items() if not key.startswith("image/") for text in _strings(item)]
    return []


def _shown_text(output: dict) -> str:
    """All the text an output holds, its traceback and its other formats included, without colour codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(_strings(output)))


def machine_specific(output: dict) -> list[tuple[str, str]]:
    text = _shown_text(output)
    return [(what, found.group(0)) for what, pattern in MACHINE_SPECIFIC.items() if (found := pattern.search(text))]


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_stored_outputs_hold_no_kernel_path_address_or_cell_hash(notebook):
    cells = json.loads((BOOK / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    found = [f"cell {index} ({''.join(cell['source'])[:40]!r}) shows {what}: {text!r}"
             for index, cell in enumerate(cells) for output in cell.get("outputs", [])
             for what, text in machine_specific(output)]
    assert not found, "re-record the chapter with scripts/record_book.py:\n" + "\n".join(found[:10])


@pytest.mark.parametrize("text, kind", [
    ('  File "/tmp/ipykernel_15974/3495555842.py", line 5, in fn', "a kernel's file for a cell"),
    ('  File "<ipython-input-3-0123456789ab>", line 5, in fn', "a kernel's file for a cell"),
    ("Skip calling function `<function log_stats at 0x7f52e20682c0>`", "an object's address"),
    ("GB0170 Data-dependent branching at 3495555842.py:4: if y > 0:", "a cell named by the hash of its code"),
    ("NOT YET  cat-bug  (0/10 points, /tmp/gbcheck-nb-d7w86i3c/submission.py)", "the checker's temporary copy of a cell"),
])
def test_each_kind_is_found(text, kind):
    assert [what for what, _ in machine_specific({"output_type": "stream", "text": [text]})] == [kind]


@pytest.mark.parametrize("text", [
    '  File "Cell In[3]", line 5, in fn', "GB0170 Data-dependent branching at Cell In[3], line 4: if y > 0:",
    "Skip calling function `<function log_stats at 0x…>`", "tensor([0x10])", "tiny_decoder.py:44",
    "inputs drawn with seed 128861277596362-254094365812249", "NOT YET  cat-bug  (0/10 points, Cell In[21])",
])
def test_what_the_reader_sees_is_not_taken_for_the_machine(text):
    assert machine_specific({"output_type": "stream", "text": [text]}) == []


def _recorder():
    spec = importlib.util.spec_from_file_location("record_book", ROOT / "scripts" / "record_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recorder_stores_addresses_elided_and_leaves_images_alone():
    output = {"output_type": "error", "ename": "Unsupported",
              "evalue": "Developer debug context: <function log_stats at 0x7f52e20682c0>",
              "traceback": ["\x1b[0;31mUnsupported\x1b[0m: <built-in method sin of type object at\x1b[0m0x7f5311ecea40>"],
              "data": {"image/png": "iVBORw0KGgo/0xabcdef12+", "text/plain": "(id=0x7fcb2adda7d0)"}}
    stored = _recorder().relative_to_book(output, "/home/you/course/book/")
    assert stored["evalue"] == "Developer debug context: <function log_stats at 0x…>"
    assert stored["traceback"][0].endswith("at\x1b[0m0x…>")
    assert stored["data"] == {"image/png": "iVBORw0KGgo/0xabcdef12+", "text/plain": "(id=0x…)"}
    assert machine_specific(stored) == []


def test_nbval_compares_a_fresh_address_with_the_stored_one_as_equal():
    sanitizer = configparser.ConfigParser()
    sanitizer.read(BOOK / "nbval-sanitize.cfg", encoding="utf-8")

    def sanitized(text: str) -> str:
        for section in sanitizer.sections():
            text = re.sub(sanitizer[section]["regex"], sanitizer[section]["replace"], text)
        return text

    fresh, stored = "<function soft_cap at 0x7fe6a7b1c220>", "<function soft_cap at 0x…>"
    assert sanitized(fresh) == sanitized(stored) == stored
    # nbval runs a cell without a new execution count: its names differ from the recording's by the count only.
    assert sanitized('File "Cell In[1] (2)", line 5') == sanitized('File "Cell In[3]", line 5') == 'File "Cell In[N]", line 5'
    # A kernel's file is not sanitized: should one come back, nbval sees it.
    assert sanitized("/tmp/ipykernel_1/2.py") == "/tmp/ipykernel_1/2.py"
