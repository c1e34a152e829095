"""The solution cells of the book: plain Markdown that Jupyter and Colab show, holding the solution files' code.

scripts/embed_solutions.py writes them from exercises/exercises.toml and solutions/; the book renders them as
dropdowns with book/_ext/solution_dropdowns.py (tests/test_book_browser.py opens them in a browser). These
tests read the notebooks as files and run no kernel.
"""

from __future__ import annotations

import difflib
import html
import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
MANIFEST = tomllib.loads((ROOT / "exercises" / "exercises.toml").read_text(encoding="utf-8"))["exercise"]


def _embedder():
    spec = importlib.util.spec_from_file_location("embed_solutions", ROOT / "scripts" / "embed_solutions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _solution_cell(exercise: dict) -> tuple[list[dict], int]:
    cells = json.loads((BOOK / f"{exercise['chapter']}.ipynb").read_text(encoding="utf-8"))["cells"]
    if not any(cell.get("metadata", {}).get("exercise") == exercise["id"] for cell in cells):
        pytest.skip("not in the book yet: tests/test_book_content.py::test_every_exercise_is_in_the_book says so")
    found = [i for i, cell in enumerate(cells) if cell.get("metadata", {}).get("solution") == exercise["id"]]
    assert len(found) == 1, f"{exercise['id']}: {len(found)} solution cells (run scripts/embed_solutions.py)"
    return cells, found[0]


def _changed_lines(exercise: str, solution: str) -> list[int]:
    """The solution's lines that the exercise does not have, counted here on their own (not the script's)."""
    matcher = difflib.SequenceMatcher(a=exercise.splitlines(), b=solution.splitlines(), autojunk=False)
    return [line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert")
            for line in range(j1 + 1, j2 + 1)]


@pytest.mark.parametrize("exercise", MANIFEST, ids=[e["id"] for e in MANIFEST])
def test_solution_cell_holds_the_solution_file_after_the_check(exercise):
    cells, index = _solution_cell(exercise)
    cell = cells[index]
    assert cell["cell_type"] == "markdown"
    assert cells[index - 1]["cell_type"] == "code" and _source(cells[index - 1]).startswith(f'check("{exercise["id"]}"')
    text = _source(cell)
    solution = (ROOT / "solutions" / exercise["file"]).read_text(encoding="utf-8")
    [code] = re.findall(r"^(`{3,})python\n(.*?)\n\1$", text, re.S | re.M)
    assert code[1] == solution.rstrip("\n"), f"the cell's code differs from solutions/{exercise['file']}"
    [lines] = re.findall(r'^<details class="solution" data-changed-lines="([\d,]*)">', text)
    exercise_text = (ROOT / "exercises" / exercise["file"]).read_text(encoding="utf-8")
    assert lines == ",".join(map(str, _changed_lines(exercise_text, solution)))
    assert lines, "a solution the same as its exercise"
    assert f"`solutions/{exercise['file']}`" in text


@pytest.mark.parametrize("exercise", MANIFEST, ids=[e["id"] for e in MANIFEST])
def test_solution_cell_reads_as_plain_markdown_outside_the_book(exercise):
    """As Jupyter and Colab render Markdown (CommonMark with HTML): a collapsed <details> around the code,
    and nothing of MyST's, which they would print as it stands."""
    cells, index = _solution_cell(exercise)
    text = _source(cells[index])
    for myst in ["{dropdown}", "{literalinclude}", "```{", ":emphasize-lines:", "../solutions/"]:
        assert myst not in text, f"{exercise['id']}: {myst!r} is MyST, or a folder a lone notebook lacks"
    shown = MarkdownIt("commonmark", {"html": True}).render(text)
    assert shown.startswith('<details class="solution"') and " open" not in shown.split(">", 1)[0]
    assert "<summary>Solution</summary>" in shown and shown.rstrip().endswith("</details>")
    [code] = re.findall(r'<pre><code class="language-python">(.*?)</code></pre>', shown, re.S)
    solution = (ROOT / "solutions" / exercise["file"]).read_text(encoding="utf-8")
    assert html.unescape(code).rstrip("\n") == solution.rstrip("\n")


def test_embedding_again_changes_nothing():
    """The cells are what the script writes from today's manifest and solutions (the lead re-runs it)."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "embed_solutions.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_embedder_words_the_changed_lines_as_ranges():
    embedder = _embedder()
    assert embedder.spans([3]) == "3"
    assert embedder.spans([3, 7, 8, 9, 12]) == "3, 7–9 and 12"
    assert embedder.changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == [2, 4]


def test_a_fence_is_longer_than_any_backtick_run_in_the_code(tmp_path, monkeypatch):
    """A solution whose docstring quotes a Markdown fence must not close the cell's fence early."""
    embedder = _embedder()
    for folder, text in [("exercises", "x = 1\n"), ("solutions", 'x = 2\n"""```python\ny\n```"""\n')]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "01_t.py").write_text(text, encoding="utf-8")
    monkeypatch.setattr(embedder, "ROOT", tmp_path)
    text = embedder.solution_cell_source({"file": "01_t.py"})
    assert "\n````python\n" in text and "\n````\n" in text
    [code] = re.findall(r'<pre><code class="language-python">(.*?)</code></pre>',
                        MarkdownIt("commonmark", {"html": True}).render(text), re.S)
    assert html.unescape(code) == 'x = 2\n"""```python\ny\n```"""\n'
