"""Record the book's outputs: run each notebook top to bottom and store what it showed.

    .venv/bin/python scripts/record_book.py                      # every chapter
    .venv/bin/python scripts/record_book.py book/capstone.ipynb  # some
    .venv/bin/python scripts/record_book.py --reports-only book/does-it-matter.ipynb  # its reports alone

The same run as `jupyter nbconvert --execute --inplace` (a 900 s cell timeout, no timings), with one change
to what is stored: where an output names a file of the book's folder by its absolute path (torch writes
`co_filename`, which Python makes absolute, as in "Graph break in user code at /home/you/course/book/
tiny_decoder.py:44"), the stored output names it relative to the book, `tiny_decoder.py:44`; and where an
output shows an object's address, as Python's repr does (`<function log_stats at 0x7f3a2c1e4220>`, which torch
quotes in its messages), the stored output keeps `0x…` in its place. The path of the recording machine's
checkout and the addresses of one process are nobody's lesson; nbval's sanitizer (book/nbval-sanitize.cfg)
writes the fresh run's the same way before comparing. A reader's own run shows torch's text unchanged.

A cell is named in every output as IPython names it, `Cell In[3]`, not by ipykernel's temporary file: the
chapter's setup cell (course_display) does that in the kernel itself, so a reader in Colab sees the same.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ExecutePreprocessor

BOOK = Path(__file__).resolve().parent.parent / "book"


# An object's address in a repr, `<... at 0x7f3a2c1e4220>` or `(id=0x7f3a2c1e4220)`: 6 to 16 hex digits (after
# a colour code's `m` too, in a traceback).
ADDRESS = re.compile(r"(?<![0-9a-fA-FxX])0x[0-9a-fA-F]{6,16}(?![0-9a-fA-F])")


def relative_to_book(value, folder: str):
    """`value` (an output, or any part of it) with `folder` + separator removed from its strings and each
    object address written `0x…`; images are left as they are."""
    if isinstance(value, str):
        return ADDRESS.sub("0x…", value.replace(folder, ""))
    if isinstance(value, list):
        return [relative_to_book(item, folder) for item in value]
    if isinstance(value, dict):
        return {key: item if key.startswith("image/") else relative_to_book(item, folder)
                for key, item in value.items()}
    return value


def coalesced(outputs: list) -> list:
    """Consecutive pieces of one stream as one output, as the reader sees them: how the kernel happened to
    flush a cell's prints is no difference between two recordings."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (previous is not None and output.output_type == previous.output_type == "stream"
                and output.name == previous.name):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


def shows_a_report(cell) -> bool:
    """Whether a code cell's outputs hold a check's report (what course_display shows for check(...))."""
    return any("gbcheck-report" in str(output.get("data", {})) for output in cell.get("outputs", []))


def record(path: Path, reports_only: bool = False) -> None:
    """Run the chapter and store its outputs. `reports_only`: store the fresh outputs of the cells that show a
    check's report alone, and keep every other cell's stored ones (a chapter whose timing figures were recorded
    on a quiet machine keeps them when the checker's reports change)."""
    stored = nbformat.read(path, as_version=4)
    notebook = nbformat.read(path, as_version=4)
    ExecutePreprocessor(timeout=900, record_timing=False).preprocess(notebook, {"metadata": {"path": str(path.parent)}})
    folder = str(path.parent.resolve()) + "/"
    for cell, kept in zip(notebook.cells, stored.cells):
        if cell.cell_type == "code":
            cell.outputs = coalesced([nbformat.from_dict(relative_to_book(output, folder)) for output in cell.outputs])
            if reports_only and not shows_a_report(kept):
                cell.outputs, cell.execution_count = kept.outputs, kept.execution_count
    nbformat.write(notebook, path)


def main(arguments: list[str]) -> int:
    reports_only = "--reports-only" in arguments
    paths = [Path(argument) for argument in arguments if argument != "--reports-only"] or sorted(BOOK.glob("*.ipynb"))
    for path in paths:
        print(f"recording {path}" + (" (the cells that show a report)" if reports_only else ""), flush=True)
        record(path, reports_only)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
