"""Write each exercise's reference solution into its chapter, in a form that reads well everywhere.

    .venv/bin/python scripts/embed_solutions.py           # every chapter; rewrites only the cells that changed
    .venv/bin/python scripts/embed_solutions.py --check   # exit 1 if a cell differs from what it would write

A notebook opened outside the book (Colab, Binder, plain Jupyter) has no `../solutions/` folder and does
not read MyST directives, so the solution cell is plain Markdown with an HTML `<details>` block: collapsed
in Jupyter and Colab, with the solution file's code fenced inside it. The book's `solution_dropdowns`
extension (book/_ext) renders the same cell as the book's other dropdowns, with the lines that differ from
the exercise (`data-changed-lines`) highlighted and numbered.

The exercises, their chapters and file names are read from exercises/exercises.toml each run, so the script
can be run again after exercises are renamed or moved. The solution cell of an exercise is the Markdown cell
whose metadata says `"solution": "<id>"`, or else the Markdown cell right after its `check(...)` cell when
that one shows a solution (an older `{dropdown}` or a `<details>`); with neither, a new cell is put there.
Only the cells that change are written, each notebook loaded and saved at once.
"""

from __future__ import annotations

import difflib
import re
import sys
import tomllib
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"


def changed_lines(exercise: str, solution: str) -> list[int]:
    """The solution's line numbers (from 1) that the exercise does not have: replaced or inserted lines."""
    lines = []
    matcher = difflib.SequenceMatcher(a=exercise.splitlines(), b=solution.splitlines(), autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            lines.extend(range(j1 + 1, j2 + 1))
    return lines


def spans(lines: list[int]) -> str:
    """'3, 7–9 and 12' for [3, 7, 8, 9, 12]."""
    runs: list[list[int]] = []
    for line in lines:
        if runs and line == runs[-1][-1] + 1:
            runs[-1].append(line)
        else:
            runs.append([line])
    words = [str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def solution_cell_source(exercise: dict) -> str:
    """The Markdown of one exercise's solution cell."""
    code = (ROOT / "solutions" / exercise["file"]).read_text(encoding="utf-8")
    lines = changed_lines((ROOT / "exercises" / exercise["file"]).read_text(encoding="utf-8"), code)
    longest_run = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest_run + 1)
    which = (f"Line {lines[0]} differs" if len(lines) == 1 else f"Lines {spans(lines)} differ") if lines else \
        "No line differs"
    return (f'<details class="solution" data-changed-lines="{",".join(map(str, lines))}">\n'
            "<summary>Solution</summary>\n\n"
            f"The reference solution, `solutions/{exercise['file']}`. {which} from the exercise.\n\n"
            f"{fence}python\n{code.rstrip()}\n{fence}\n\n"
            "</details>")


def shows_a_solution(cell) -> bool:
    text = cell.source
    return cell.cell_type == "markdown" and (text.startswith("````{dropdown} Solution")
                                             or text.startswith('<details class="solution"'))


def solution_cell_index(cells, exercise_id: str) -> tuple[int, bool] | None:
    """(index, exists): where the exercise's solution cell is, or where a new one goes; None when the
    chapter has no cell for the exercise yet."""
    for index, cell in enumerate(cells):
        if cell.cell_type == "markdown" and cell.get("metadata", {}).get("solution") == exercise_id:
            return index, True
    found = [i for i, cell in enumerate(cells) if cell.get("metadata", {}).get("exercise") == exercise_id]
    if not found:
        return None
    at = found[0]
    after_check = at + 2 if at + 1 < len(cells) and cells[at + 1].source.startswith("check(") else at + 1
    exists = after_check < len(cells) and shows_a_solution(cells[after_check])
    return after_check, exists


def embed(manifest: list[dict], write: bool = True) -> list[str]:
    """Put every exercise's solution cell in place; the ids whose cell changed (or would)."""
    changed = []
    for chapter in dict.fromkeys(exercise["chapter"] for exercise in manifest):
        path = BOOK / f"{chapter}.ipynb"
        notebook = nbformat.read(path, as_version=4) if path.exists() else None
        before = len(changed)
        for exercise in (e for e in manifest if e["chapter"] == chapter):
            place = solution_cell_index(notebook.cells, exercise["id"]) if path.exists() else None
            if place is None:
                print(f"{exercise['id']}: no exercise cell in {path.name} yet, no solution written", file=sys.stderr)
                continue
            index, exists = place
            wanted = solution_cell_source(exercise)
            if exists and notebook.cells[index].source == wanted \
                    and notebook.cells[index].metadata.get("solution") == exercise["id"]:
                continue
            if not exists:
                notebook.cells.insert(index, nbformat.v4.new_markdown_cell(""))
            notebook.cells[index].source = wanted
            notebook.cells[index].metadata["solution"] = exercise["id"]
            changed.append(exercise["id"])
        if write and len(changed) > before:
            nbformat.write(notebook, path)
    return changed


def load_manifest() -> list[dict]:
    return tomllib.loads((ROOT / "exercises" / "exercises.toml").read_text(encoding="utf-8"))["exercise"]


def main(arguments: list[str]) -> int:
    check_only = "--check" in arguments
    changed = embed(load_manifest(), write=not check_only)
    if check_only:
        if changed:
            print("solution cells out of date: " + ", ".join(changed) + " (run scripts/embed_solutions.py)")
        return 1 if changed else 0
    print(f"{len(changed)} solution cell(s) written" + (": " + ", ".join(changed) if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
