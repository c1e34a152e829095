"""The checker's layout: sub-packages by layer, imports only downwards, no circle, one public module for the book.

Read from the source text (ast), so it sees every import, those inside functions too: a lazy import that
runs upwards is as much a tangle as one at the top of a file.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "checker"
# Each sub-package's rank; a module outside them (cli, commands/, notebook, service, display) is a face.
LAYERS = {"dynamo": 0, "course": 1, "grading": 2, "diagnose": 3, "classroom": 3}
FACE = 4
PUBLIC_MODULE = "checker.notebook"  # the one module the book's cells import
MAX_LINES = 450


def module_name(package: Path, path: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path) -> dict[str, Path]:
    return {module_name(package, path): path for path in sorted(package.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that `name` imports, at any depth of its code (`from a import b` may name a module)."""
    found = set()
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            origin = node.module or ""
            if node.level:
                anchor = base.split(".")[: len(base.split(".")) - node.level + 1]
                origin = ".".join(anchor + ([origin] if origin else []))
            targets = [origin] + [f"{origin}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {target for target in targets if target in known and target != name}
    # A package's __init__ is imported on the way to any of its modules; it holds no code here, so the
    # module itself is the edge that counts.
    return {target for target in found if not any(other.startswith(target + ".") for other in found)}


def layer(name: str) -> tuple[int, str]:
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS[parts[1]], parts[1]
    return FACE, "faces"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import into a higher layer, or across to a sibling sub-package of the same rank."""
    wrong = []
    for name, targets in graph.items():
        rank, group = layer(name)
        for target in sorted(targets):
            target_rank, target_group = layer(target)
            if target_rank > rank or (target_rank == rank and target_group != group):
                wrong.append(f"{name} ({group}) imports {target} ({target_group})")
    return wrong


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of `graph`, each as the path that closes it."""
    found, state = [], {}  # state: 1 on the current path, 2 done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    known = modules(package)
    return {name: imports(name, path, set(known)) for name, path in known.items()}


def test_the_checker_is_laid_out_by_layer():
    names = set(modules(PACKAGE))
    for sub in LAYERS:
        assert f"checker.{sub}" in names, f"checker/{sub}/ is missing"
    loose = sorted(n for n in names if n.count(".") == 1 and layer(n)[0] == FACE
                   and n not in {"checker.cli", "checker.notebook", "checker.service", "checker.display",
                                 "checker.__main__", "checker.commands"})
    assert not loose, f"modules beside the faces that belong in a layer's folder: {loose}"


def test_every_subpackage_says_what_it_holds_and_what_it_may_import():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc.split()) >= 20 and "import" in doc, f"{init.relative_to(ROOT)} needs a docstring saying " \
                                                           "what it holds and what it may import"


def test_imports_only_run_downwards_and_never_in_a_circle():
    graph = import_graph(PACKAGE)
    assert sum(len(targets) for targets in graph.values()) > 50  # the parser sees the checker's imports
    assert not upward_imports(graph), "\n".join(upward_imports(graph))
    assert not circles(graph), circles(graph)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "checker"
    for relative, text in files.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text, encoding="utf-8")
    return package


def test_the_layout_rules_catch_an_upward_import_a_sibling_import_and_a_circle(tmp_path):
    package = _tree(tmp_path, {
        "__init__.py": "", "cli.py": "from checker.grading import strict\n",
        "dynamo/__init__.py": "", "dynamo/engine.py": "def f():\n    from checker.course.manifest import Exercise\n",
        "course/__init__.py": "", "course/manifest.py": "from checker.dynamo import engine\n",
        "grading/__init__.py": "", "grading/strict.py": "from . import report\n",
        "grading/report.py": "from .strict import check_file\n",
        "diagnose/__init__.py": "", "diagnose/run.py": "import checker.classroom.grade\n",
        "classroom/__init__.py": "", "classroom/grade.py": "from checker.grading import strict\n",
    })
    graph = import_graph(package)
    assert graph["checker.cli"] == {"checker.grading.strict"}
    assert graph["checker.grading.strict"] == {"checker.grading.report"}  # a relative import resolved
    assert upward_imports(graph) == [
        "checker.diagnose.run (diagnose) imports checker.classroom.grade (classroom)",
        "checker.dynamo.engine (dynamo) imports checker.course.manifest (course)"]
    assert sorted(sorted(set(circle)) for circle in circles(graph)) == [
        ["checker.course.manifest", "checker.dynamo.engine"], ["checker.grading.report", "checker.grading.strict"]]


def test_no_module_is_over_the_size_limit():
    long = {name: n for name, path in modules(PACKAGE).items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by what they do): {long}"


def _book_imports() -> dict[str, set[str]]:
    """Every checker module each chapter notebook's code cells import."""
    found = {}
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        names = set()
        for cell in cells:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            # IPython lines (%%writefile, !pip) are not Python: parse what is.
            python = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(python)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "checker":
                    names.add(node.module)
                elif isinstance(node, ast.Import):
                    names |= {a.name for a in node.names if a.name.split(".")[0] == "checker"}
        found[notebook.name] = names
    return found


def test_the_book_imports_one_public_module():
    found = _book_imports()
    assert len(found) >= 10 and all(found.values()), found  # every chapter uses the checker somewhere
    others = {name: sorted(mods - {PUBLIC_MODULE}) for name, mods in found.items() if mods - {PUBLIC_MODULE}}
    assert not others, f"chapters import checker modules other than {PUBLIC_MODULE}: {others}"


@pytest.mark.parametrize("name", ["check", "diagnose", "course_display"])
def test_the_public_module_exports_what_the_book_uses(name):
    import importlib

    public = importlib.import_module(PUBLIC_MODULE)
    assert name in public.__all__ and callable(getattr(public, name))
