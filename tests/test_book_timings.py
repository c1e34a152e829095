"""The book's timing cells and the prose that reads them: honest on every run, not only on the recorded one.

A timing cell is tagged `nbval-ignore-output`: nbval runs it but does not compare what it prints, and every
re-recording prints other figures. So the prose after such a cell may quote only figures its stored output
shows (best, none: it explains how to read them), and the cell itself must show what it measured: the
threads, the spread of its rounds, and a verdict its own figures support. These tests read the notebooks;
they run no kernel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
NOTEBOOKS = sorted(path.stem for path in BOOK.glob("*.ipynb"))

# A measured figure as prose would quote it: a time, a ratio or a share ("13 microseconds", "1.19x", "5%").
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:x|×|µs|us|ms|s|sec|seconds?|microseconds?|milliseconds?|%)(?!\w)")
# A ratio line of does-it-matter's timing cell: "A / B: 1.28x [1.12x to 1.45x], above 1 in every round".
RATIO = re.compile(r"(?P<name>[\w' ]+?) / (?P<over>[\w' ]+?): (?P<median>\d+\.\d\d)x "
                   r"\[(?P<low>\d+\.\d\d)x to (?P<high>\d+\.\d\d)x\], (?P<verdict>[^\n]+)")
ABOVE, BELOW, BOTH = "above 1 in every round", "below 1 in every round", "on both sides of 1: within this run's noise"


def load(chapter: str) -> dict:
    return json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def stored_text(cell: dict) -> str:
    """What the cell printed: its stream outputs and the plain text of its results."""
    parts = []
    for output in cell.get("outputs", []):
        value = output.get("text", output.get("data", {}).get("text/plain", ""))
        parts.append("".join(value) if isinstance(value, list) else value)
    return "".join(parts)


def timing_cells(chapter: str) -> list[tuple[dict, str]]:
    """Each timing cell of `chapter` with the prose that follows it, up to the next code cell."""
    cells = load(chapter)["cells"]
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code" or "nbval-ignore-output" not in cell.get("metadata", {}).get("tags", []):
            continue
        prose = []
        for after in cells[index + 1:]:
            if after["cell_type"] != "markdown":
                break
            prose.append(source(after))
        found.append((cell, "\n".join(prose)))
    return found


def test_the_figure_pattern_catches_what_prose_would_quote():
    quoted = "7 to 13 microseconds slower (1.10x to 1.19x); 3.6 s; 84 us; a tenth, 10%"
    assert FIGURE.findall(quoted) == ["13 microseconds", "1.10x", "1.19x", "3.6 s", "84 us", "10%"]
    assert not FIGURE.findall("torch 2.13, 16 sequences of 128 tokens, warns past 8, 1 in every round")


@pytest.mark.parametrize("chapter", NOTEBOOKS)
def test_prose_after_a_timing_cell_quotes_only_what_the_cell_shows(chapter):
    for cell, prose in timing_cells(chapter):
        shown = stored_text(cell)
        assert shown, f"{chapter}: a timing cell with no stored output: {source(cell)[:60]!r}"
        unsupported = [figure for figure in FIGURE.findall(prose) if figure not in shown]
        assert not unsupported, (
            f"{chapter}: the prose after {source(cell)[:60]!r} quotes {unsupported}, which its stored output does "
            "not show; a re-recording changes the figures, so read them in the prose, do not quote them")


def test_does_it_matter_times_on_the_models_threads_in_rounds_with_a_control():
    [(cell, _), *_] = timing_cells("does-it-matter")
    code = source(cell)
    timers = re.findall(r"benchmark\.Timer\((.*)\)", code)
    assert timers and all("num_threads=THREADS" in timer for timer in timers)
    assert "THREADS = torch.get_num_threads()" in code and "ROUNDS = " in code
    assert "torch.compile(tensor_peak_model)" in code, "the control (same work, one graph) is timed"
    model_cell = next(c for c in load("does-it-matter")["cells"] if "class EncoderLayerTensorPeak" in source(c))
    assert "self.peak = x.abs().amax().detach()" in source(model_cell)
    assert "EncoderLayerTensorPeak: default: 1 graph(s)" in stored_text(model_cell)


def test_does_it_matter_timing_output_shows_threads_spread_and_verdicts_its_figures_support():
    [(cell, _), *_] = timing_cells("does-it-matter")
    shown = stored_text(cell)
    assert re.match(r"\d+ thread\(s\) for every variant; \d+ rounds", shown)
    ratios = list(RATIO.finditer(shown))
    assert len(ratios) == 6, "three ratios for each of the two sizes"
    for found in ratios:
        low, median, high = (float(found[key]) for key in ("low", "median", "high"))
        assert low <= median <= high
        # The cell decides on unrounded ratios: a bound printed as 1.00 may lie on either side of 1.
        allowed = ({ABOVE} if low >= 1 else set()) | ({BELOW} if high <= 1 else set()) | (
            {BOTH} if low <= 1 <= high else set())
        assert found["verdict"] in allowed, found[0]
    assert {found["name"].strip() for found in ratios} == {"with the break", "peak as a tensor", "eager"}
