"""Files that keep an exercise's graph break on a path the checked process never takes: for the tests that the
grader's reading of the text refuses them."""

import ast

from checker.course.manifest import Exercise


def fixed_only_where_imported(exercise: Exercise) -> str:
    """The reference fix where the file is imported as a module (as the checked process imports it), the unfixed
    code where it runs as a script (a program of the learner's own): the entry picks by `__name__`."""
    entry = exercise.entry
    unfixed = exercise.exercise_path.read_text().replace(f"def {entry}(", f"def _unfixed_{entry}(")
    fixed = exercise.solution_path.read_text().replace(f"def {entry}(", f"def _fixed_{entry}(")
    signature = next(node.args for node in ast.parse(fixed).body
                     if isinstance(node, ast.FunctionDef) and node.name == f"_fixed_{entry}")
    passed = ", ".join(f"{a.arg}={a.arg}" for a in signature.args)  # the entry's own parameters, for the replay
    chooser = (f"\n\ndef {entry}({ast.unparse(signature)}):\n    if __name__ == '__main__':\n"
               f"        return _unfixed_{entry}({passed})\n    return _fixed_{entry}({passed})\n")
    return unfixed + "\n\n" + fixed + chooser
