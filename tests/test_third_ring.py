"""The third ring: submissions that attack the grader around the verdict, not the graph. Each family is
answered by a fact the grader establishes itself, outside the checked process, and fails closed."""

import re
from pathlib import Path

import pytest
import torch

from checker.course.manifest import find_exercise, load_exercises
from checker.grading import audit
from path_choosers import fixed_only_where_imported
from student_users import NO_STUDENT_USERS, SAME_USER

ROOT_TESTS = Path(__file__).parent


def test_a_graph_whose_fake_run_raises_is_not_taken_for_one_default_mode_compiles():
    """Wrapping `.item()` (which default mode breaks on) behind an operator fake tensors cannot run used to
    make the default-mode check look away; now that operator gets its real value and the run goes on."""
    def hidden_item(x):
        hide = torch.geqrf(x)[0]  # no fake-tensor implementation: the fake run raises here
        return x * x.sum().item() + 0 * hide.sum()

    graph = torch.fx.symbolic_trace(hidden_item)
    assert torch.allclose(graph(torch.ones(4, 4)), hidden_item(torch.ones(4, 4)))  # the real graph runs
    problem = audit._default_mode_problem(find_exercise("cond-on-input"), graph, [torch.randn(4, 4)])
    assert problem and "reads a tensor's value as a Python number" in problem  # found behind the geqrf


SNOOP = '''
import gc, sys
_found = [name for name in sys.modules if name.startswith("reference")]
_found += [o.__code__.co_filename for o in gc.get_objects()
           if callable(o) and hasattr(o, "__code__") and {solutions!r} in o.__code__.co_filename]
assert not _found, _found[:3]
'''


def test_no_reference_is_in_the_memory_a_class_graders_checks_are_forked_from(tmp_path):
    """Secrets inherited by fork: the class grader warms up with the shipped files and audits in children
    of its own, so a student's check, forked after other students' audits, finds no reference in memory."""
    from checker.classroom.grade import grade_class
    from checker.grading.sandbox import Limits

    exercise = find_exercise("cond-on-input")
    solution = exercise.solution_path.read_text()
    submissions = tmp_path / "submissions"
    for number in range(6):  # enough distinct files for the warm-up, graded one after the other
        (submissions / f"student{number}").mkdir(parents=True)
        (submissions / f"student{number}" / exercise.file).write_text(solution + f"\n# student {number}\n")
    snoop = SNOOP.format(solutions=str(exercise.solution_path.parent))
    (submissions / "student9").mkdir()
    (submissions / "student9" / exercise.file).write_text(snoop + solution)
    grade_class(submissions, tmp_path / "out", parallel=1, limits=Limits(timeout=30, memory_mb=2048),
                same_user=SAME_USER)
    feedback = (tmp_path / "out" / "student9" / "feedback.md").read_text()
    assert "✓ eager-runs" in feedback, feedback


# Reads this process's own memory (ctypes: no permission needed) for what follows a marker, and stops with it.
MEMORY_SCAN = '''
import ctypes, re
_marker, _seen = b"secret of " + b"student a: ", set()
with open("/proc/self/maps") as maps:
    regions = [line.split() for line in maps]
for fields in regions:
    if fields[1].startswith("rw") and (len(fields) < 6 or fields[5] == "[heap]"):
        start, end = (int(part, 16) for part in fields[0].split("-"))
        block = ctypes.string_at(start, end - start)
        _seen.update(found.group(1) for found in re.finditer(re.escape(_marker) + b"([0-9a-f]{32})", block))
raise RuntimeError("found: " + " ".join(sorted(found.decode() for found in _seen)))
'''


def test_a_students_check_finds_no_other_students_file_in_its_memory(tmp_path):
    """Secrets inherited by fork: the class grader reads every student's file (to stage and group them);
    a check forked from it held them all in its memory. Checks are forked from a server started before
    any submission was read, by a worker that read only its own file (classroom/pristine.py)."""
    import subprocess
    import sys

    from checker.classroom.grade import grade_class
    from checker.grading.sandbox import Limits

    exercise = find_exercise("cond-on-input")
    submissions = tmp_path / "submissions"
    for name in "ab":
        (submissions / name).mkdir(parents=True)
    (submissions / "b" / exercise.file).write_text(MEMORY_SCAN)
    # Student a's secret is written by another process: this one (which the grader forks from) never held it.
    write_a = ("import secrets, sys; open(sys.argv[2], 'w').write(open(sys.argv[1]).read()"
               " + '\\n# secret of student a: ' + secrets.token_hex(16) + '\\n')")
    subprocess.run([sys.executable, "-c", write_a, str(exercise.solution_path), str(submissions / "a" / exercise.file)],
                   check=True)
    grade_class(submissions, tmp_path / "out", parallel=1, limits=Limits(timeout=60, memory_mb=2048),
                same_user=SAME_USER)
    feedback = (tmp_path / "out" / "b" / "feedback.md").read_text()
    assert "found:" in feedback, feedback  # the scan ran to its end
    secret = (submissions / "a" / exercise.file).read_text().rsplit("student a: ", 1)[1].strip()
    assert secret not in feedback
    assert "**pass**" in (tmp_path / "out" / "a" / "feedback.md").read_text()


def test_a_process_that_leaves_the_check_cannot_rewrite_the_results_afterwards(tmp_path):
    """setsid, wait for the grader to finish, rewrite what it wrote: the escaped process is a new
    interpreter (no audit hook), still inside the check's Landlock domain, which refuses the write."""
    import sys
    import time


    from checker.grading.confine import landlock_abi
    from checker.grading.sandbox import Limits
    from checker.grading.strict import check_file

    if not landlock_abi():
        pytest.skip("needs Landlock (Linux 5.13 or later, switched on)")
    results = tmp_path / "results.json"
    results.write_text('{"score": 0}')
    later = (f"import time; time.sleep(3)\nopen({str(results)!r}, 'w').write('{{\"score\": 10}}')\n")
    exercise = find_exercise("cond-on-input")
    escape = (f"import subprocess, sys\nsubprocess.Popen([{sys.executable!r}, '-c', {later!r}], start_new_session=True,"
              " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n")
    attempt = tmp_path / "attempt.py"
    attempt.write_text(escape + exercise.exercise_path.read_text())
    check_file(exercise, attempt, Limits(timeout=30))
    time.sleep(5)  # the escaped process has woken and tried by now
    assert results.read_text() == '{"score": 0}'


def test_a_counter_kept_in_a_graph_constant_starts_afresh_on_every_replayed_call():
    """Constants registered without a copy let one rebuilt graph count its calls and pick a branch by the
    count; every replayed call now gets its own rebuild, and a rebuild its own copy of the constants."""
    from checker.grading import replay

    graph, root = torch.fx.Graph(), torch.nn.Module()
    root.register_buffer("count", torch.zeros(()))
    x = graph.placeholder("x")
    counted = graph.call_method("add_", (graph.get_attr("count"), 1))  # the count, kept in the constant
    graph.output(graph.call_function(torch.mul, (x, counted)))
    record = replay.graph_record(torch.fx.GraphModule(root, graph), (torch.ones(2),))
    outputs = []
    for _ in range(3):
        module, _, _ = replay.rebuild(record)
        outputs.append(module(torch.ones(2)))
    assert all(torch.equal(output, torch.ones(2)) for output in outputs)  # each rebuild counts from zero


def test_process_wide_getters_and_setters_are_not_replayed():
    import pytest

    from checker.grading import allowed

    for name in ("torch.set_float32_matmul_precision", "torch.get_float32_matmul_precision",
                 "torch.is_grad_enabled", "torch.set_warn_always", "torch.are_deterministic_algorithms_enabled"):
        with pytest.raises(allowed.Refused):
            allowed.resolve(name)
    assert allowed.resolve("torch.is_floating_point") is torch.is_floating_point  # a tensor's own property


SIZE_PICKER = '''
import torch


def {entry}(features):
    """Right only at the lengths of the manifest's examples: the dynamic graph keeps the size test."""
    good = ({fix})
    length = features.shape[1]
    known = (length == 6) | (length == 9) | (length == 12) | (length == 15) | (length == 100) | (length == 140)
    return torch.cond(known, lambda g: g.clone(), lambda g: g * 0, (good,))
'''


def test_a_graph_that_picks_its_answer_by_size_fails_at_a_size_the_check_never_drew(tmp_path):
    """A recompilation in disguise: one dynamic graph, right at every size the trial and the replay draw
    (the examples' own), wrong elsewhere. The replay of an exercise about recompilation adds sizes no call
    of the check had, after the checked process ended. (stack-frames's windows, a strided view, are not
    a `torch.cond` output torch accepts: the same file there fails to compile at all.)"""
    from checker.grading.strict import check_file

    exercise = find_exercise("online-normalize")
    fix = ("features - features.cumsum(dim=1) / torch.arange(1, features.shape[1] + 1, "
           "dtype=features.dtype).view(1, -1, 1)")
    path = tmp_path / exercise.file
    path.write_text(SIZE_PICKER.format(entry=exercise.entry, fix=fix))
    report = check_file(exercise, path)
    checks = {check.name: check for check in report.checks}
    assert checks["no-recompilation"].status == "pass", report.checks  # it is one dynamic graph
    assert report.status == "fail" and checks["replay-matches"].status == "fail", report.checks
    assert "at a size no call of the check had" in checks["replay-matches"].message


def test_every_process_a_check_leaves_behind_is_killed_when_it_ends(tmp_path):
    """setsid and a double fork leave the check's process group; the grader, a child subreaper, gets the
    orphans and kills them when the check ends, while the check's verdict still comes."""
    import os
    import secrets
    import sys
    import time

    from checker.grading import sandbox, strays
    from checker.grading.strict import check_file

    if not sys.platform.startswith("linux"):
        pytest.skip("a child subreaper is Linux's")
    marker = f"gbstray{secrets.token_hex(3)}"  # the leftover's name, found in /proc afterwards
    leave = (f"import ctypes, os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
             f"        ctypes.CDLL(None).prctl(15, {marker.encode()!r}, 0, 0, 0)\n        time.sleep(60)\n"
             f"    os._exit(0)\n")
    exercise = find_exercise("cond-on-input")
    attempt = tmp_path / "attempt.py"
    attempt.write_text(leave + exercise.solution_path.read_text())

    def named() -> list[str]:
        found = []
        for entry in (e for e in os.listdir("/proc") if e.isdigit()):
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() == marker:
                        found.append(entry)
            except OSError:
                pass
        return found

    sandbox.prepare()
    report = check_file(exercise, attempt, sandbox.Limits(timeout=30))
    assert {check.name: check.status for check in report.checks}["eager-runs"] == "pass"
    time.sleep(0.5)
    assert named() == [], "a process the check left is still running"
    assert strays.children() == []  # and nothing of it is left unreaped either


WHOLE_LOSS_AS_OPERATOR = '''
_unfixed_step = greedy_match  # the exercise's own code above, unchanged


@torch.library.custom_op("gbhostile::whole_loss", mutates_args=())
def whole_loss(pred_boxes: torch.Tensor, target_boxes: torch.Tensor) -> torch.Tensor:
    """The unfixed function, all of it, behind one operator: Dynamo sees no break, and nothing to check."""
    cost = torch.cdist(pred_boxes, target_boxes, p=1)
    match = _unfixed_step(cost)
    return (pred_boxes[match] - target_boxes).abs().mean()


@whole_loss.register_fake
def _(pred_boxes, target_boxes):
    return pred_boxes.new_empty(())


def box_matching_loss(pred_boxes, target_boxes):
    return whole_loss(pred_boxes, target_boxes)
'''


@pytest.mark.parametrize("case", ["whole function", "another interface"])
def test_an_operator_is_replayed_as_the_reference_step_so_a_skip_is_no_pass(tmp_path, case):
    """An operator exercise's graph used to be unreplayable (the operator is the file's code), and a skip
    counted as a pass: any graph around any operator got full marks. Now the grader replays the graph with
    the reference's step in place of the learner's one operator: hiding the whole function in an operator,
    or an operator with another interface than the step's, fails; the book's fix passes (verify)."""
    from checker.grading.strict import check_file

    if case == "whole function":
        exercise = find_exercise("custom-op-matching")
        path = tmp_path / exercise.file
        path.write_text(exercise.exercise_path.read_text() + WHOLE_LOSS_AS_OPERATOR)
    else:
        exercise = find_exercise("numpy-custom-op")
        path = ROOT_TESTS / "alternatives" / "numpy-custom-op__curve_as_arguments.rejected.py"
    report = check_file(exercise, path)
    checks = {check.name: check for check in report.checks}
    failing = [name for name, check in checks.items() if check.status != "pass"]
    # the whole function behind an operator also hides the matching from the grader's reading of the text, and
    # gives a loss that no gradient flows through, eagerly or compiled (a double-precision training step too)
    # (and it defines the entry twice, so no reading of the text can say which one is traced)
    whole = ["eager-matches", "compiled-matches", "replay-matches", "matching-called", "matches-double-precision-costs",
             "no-environment-switch"]
    assert failing == (whole if case == "whole function" else ["replay-matches"]), report.checks
    assert f"in place of your operator, which must take and return what `{exercise.opaque_step}` does" in \
        checks["replay-matches"].message


def test_a_graph_calling_two_operators_of_the_file_is_refused_for_an_operator_exercise():
    from checker.grading import allowed, replay

    record = {"nodes": [{"name": "x", "op": "placeholder", "input": {"kind": "argument", "name": "x"}},
                        {"name": "a", "op": "call_function", "target": "torch.ops.mine.one.default",
                         "args": {"tuple": [{"node": "x"}]}, "kwargs": {"dict": []}},
                        {"name": "b", "op": "call_function", "target": "torch.ops.mine.two.default",
                         "args": {"tuple": [{"node": "a"}]}, "kwargs": {"dict": []}},
                        {"name": "output", "op": "output", "args": {"tuple": [{"node": "b"}]}}], "subgraphs": {}}
    with pytest.raises(allowed.Refused, match="2 operators of the file"):
        replay.rebuild(record, operator=torch.ops.aten.neg.default)
    module, _, _ = replay.rebuild({**record, "nodes": record["nodes"][:2] + [
        {"name": "output", "op": "output", "args": {"tuple": [{"node": "a"}]}}]}, operator=torch.ops.aten.neg.default)
    assert torch.equal(module(torch.ones(2)), -torch.ones(2))  # the one operator, replayed as the reference


def test_gradescope_runs_a_submissions_checks_as_a_user_of_its_own_when_the_grader_is_root(tmp_path):
    """Gradescope's container runs the grader as root; a check running as root could read what root reads
    and signal what root may. The submission's checks run as the student's uid, as class grading's do."""
    import os

    from checker.classroom.gradescope import grade_one_submission

    if os.geteuid() != 0:
        pytest.skip("the grader switches users only when it runs as root")
    if SAME_USER:
        pytest.skip(NO_STUDENT_USERS)
    exercise = find_exercise("cond-on-input")
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / exercise.file).write_text(
        "import os\nassert os.getuid() != 0, 'this check runs as root'\n" + exercise.solution_path.read_text())
    results = grade_one_submission(tmp_path / "submission", tmp_path / "results" / "results.json")
    test = next(test for test in results["tests"] if test["name"].startswith(exercise.id + ":"))
    assert "✓ eager-runs" in test["output"], test["output"]  # the probe's assert held (it fails the text check)


def _only_the_text_check_fails(report):
    """A probe that uses ctypes and os is failed by its text (no-grader-access, and no-environment-switch: what it
    runs when imported reads the process); everything else must pass, its own assert included (it ran as the first
    thing the file does)."""
    failing = {check.name: check.message for check in report.checks if check.status != "pass"}
    assert set(failing) == {"no-grader-access", "no-environment-switch"}, failing


PEEK = '''
import ctypes, glob, os
_read = []
for _path in glob.glob(os.path.join({folder!r}, "*.py")):
    try:
        _read.append(open(_path).read(10))
    except OSError:
        pass
    if ctypes.CDLL(None).open(_path.encode(), os.O_RDONLY) >= 0:  # past any audit hook: the kernel decides
        _read.append(_path)
assert not _read, f"read {{len(_read)}} reference files"
'''


def test_the_checked_code_cannot_read_the_reference_solutions(tmp_path):
    """The references the grader compares with are files its user can read; the checked process cannot
    (Landlock handles reading files, allowed everywhere but beneath the solutions), through Python or libc."""
    from checker.grading.confine import landlock_abi
    from checker.grading.strict import check_file

    if not landlock_abi():
        pytest.skip("needs Landlock (Linux 5.13 or later, switched on)")
    exercise = find_exercise("cond-on-input")
    attempt = tmp_path / exercise.file
    attempt.write_text(PEEK.format(folder=str(exercise.solution_path.parent)) + exercise.solution_path.read_text())
    report = check_file(exercise, attempt)
    _only_the_text_check_fails(report)


PEEK_AT = '''
import ctypes, glob, os
_read, _tried = [], []
for _pattern in {patterns!r}:
    for _path in filter(os.path.isfile, glob.glob(_pattern)):
        _tried.append(_path)
        try:
            _read.append(open(_path, "rb").read(10))
        except OSError:
            pass
        if ctypes.CDLL(None).open(_path.encode(), os.O_RDONLY) >= 0:  # past any audit hook: the kernel decides
            _read.append(_path)
assert _tried and not _read, f"read {{len(_read)}} of {{len(_tried)}} files"
'''


def test_a_clones_other_copies_of_the_references_are_unreadable_too(tmp_path):
    """A clone holds the references again: the book's solution cells, the tests' alternative fixes, the git
    history (and a build folder's copy of the package, when there is one). A check run in a clone reads none."""
    from checker.grading.confine import landlock_abi
    from checker.grading.strict import check_file

    exercise = find_exercise("cond-on-input")
    root = exercise.solution_path.parent.parent
    if not landlock_abi() or not (root / "tests" / "alternatives").is_dir():
        pytest.skip("needs Landlock and a clone of the course")
    patterns = [str(root / "tests" / "alternatives" / "*.py"), str(root / "book" / "*.ipynb"),
                str(root / ".git" / "*"), str(root / "build" / "lib" / "checker" / "solutions" / "*.py")]
    attempt = tmp_path / exercise.file
    attempt.write_text(PEEK_AT.format(patterns=patterns) + exercise.solution_path.read_text())
    report = check_file(exercise, attempt)
    _only_the_text_check_fails(report)


def test_a_check_finds_none_of_the_descriptors_its_grader_had_open():
    """A warm grader's connection to the CLI, the notebook service's answer stream, a class worker's report
    pipe: each was open in the grader when it forked the check, and a forged verdict written there was taken
    for the grader's own. A check now starts with its output, its result pipe and nothing else."""
    import os

    from checker.grading import sandbox

    read_end, write_end = os.pipe()
    try:
        def forge():
            try:
                os.write(write_end, b'{"status": "pass"}\n')
                return "written"
            except OSError as err:
                return f"refused: {err.strerror}"

        outcome = sandbox.run_job(sandbox.Job(forge, confine=False))
        os.set_blocking(read_end, False)
        try:
            leaked = os.read(read_end, 100)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(read_end)
        os.close(write_end)
    assert outcome.payload == "refused: Bad file descriptor" and leaked == b""


def test_a_record_holding_objects_of_the_checked_process_still_makes_a_report_every_face_can_write():
    """A graph-break record with a tensor in it (the child's own choice) used to reach the report as it was,
    and the class worker's JSON died on it, leaving the grader only what the child had forged."""
    import json

    from checker.grading.report import plain_data

    record = {"gb_id": "GB0170", "gb_type": "x", "line": 3, "hints": [torch.ones(2)], "extra": {"t": torch.zeros(1)}}
    plain = plain_data(record)
    assert json.loads(json.dumps(plain)) == plain
    assert plain["hints"] == ["<Tensor>"] and plain["line"] == 3


def test_a_mask_behind_an_operation_fake_tensors_cannot_run_is_no_longer_looked_past():
    """The fake run used to be skipped whenever it raised and nothing data-dependent was certain: an unused
    `geqrf` before a boolean mask hid the mask. Now the geqrf takes its real value and the mask is met."""
    def hidden_mask(x):
        hide = torch.geqrf(x)[0]  # no fake-tensor implementation: the fake run raises here, before the mask
        return x[x > 0].sum() + 0 * hide.sum()

    graph = torch.fx.symbolic_trace(hidden_mask)
    problem = audit._default_mode_problem(find_exercise("mask-where"), graph, [torch.randn(4, 4)], surely=set())
    assert problem and "output shape depends on the data" in problem  # the mask, found behind the geqrf


def test_int_of_a_tensor_counts_as_reading_its_value():
    """`int(t)`, `float(t)`, `bool(t)` are `.item()` by other names: a graph holding one is run as default
    mode would, where it breaks (GB0124's read, renamed, used to pass unseen)."""
    from checker.grading import replay

    record = {"nodes": [{"name": "x", "op": "placeholder"}, {"name": "n", "op": "call_method", "target": "__int__",
                                                             "args": {"tuple": [{"node": "x"}]}, "kwargs": {"dict": []}}]}
    assert "scalar" in replay.data_dependence(record, surely=True)


def test_the_grader_reads_the_file_as_python_does_under_a_coding_declaration(tmp_path):
    """Under `# -*- coding: utf-7 -*-`, `+AAo-` is a newline to Python: code that UTF-8 shows inside a comment.
    The structure contracts read what Python runs."""
    from checker.grading.trial import read_source

    path = tmp_path / "cookie.py"
    path.write_bytes(b"# -*- coding: utf-7 -*-\n# looks like a comment +AAo-edited = True\n")
    text = read_source(path)
    assert "\nedited = True" in text
    namespace: dict = {}
    exec(compile(path.read_bytes(), str(path), "exec"), namespace)  # noqa: S102 - what Python makes of it
    assert namespace["edited"] is True


def test_vendored_code_redefined_after_its_shipped_definition_is_not_unchanged():
    from checker.grading.contracts import _structure_problem

    exercise = find_exercise("bisect-polyfill")
    contract = next(c for c in exercise.contracts if c.file_has == "unchanged pad_to_bucket")
    shipped = exercise.exercise_path.read_text()
    assert _structure_problem(contract, exercise.entry, None, shipped, shipped) is None
    again = shipped + "\n\ndef pad_to_bucket(x, buckets=BUCKETS):\n    return x\n"
    assert "changes it afterwards" in _structure_problem(contract, exercise.entry, None, again, shipped)
    patched = shipped + "\npad_to_bucket.__defaults__ = ((4, 8),)\n"
    assert "pad_to_bucket.__defaults__" in _structure_problem(contract, exercise.entry, None, patched, shipped)


REACHING_IN = [
    "from checker.grading import trial",
    "import checker.notebook",
    "import sys\nframe = sys._getframe(1)",
    "import sys\nsys.modules['checker.grading.trial'].run_trial = None",
    "import torch\ntorch.sys.modules.get('checker')",
    "import torch\nx = getattr(torch, 'sy' + 's')",
    "m = __import__('checker')",
    "exec('x = 1')",
    "out = open(3, 'wb')",
    "import os\nos.write(3, b'frame')",
    "import io\nio.FileIO(3, 'w')",
    "import io\npipe = io.open(4, 'wb', closefd=False)",  # the result pipe, by number: found by trying them
    "from codecs import open as reopen",
    "import sys\npipe = type(sys.stdout.buffer.raw)(4, 'wb', closefd=False)",
    "def f(): pass\ncode = f.__code__",
    "import gc\ngc.get_objects()",
    "import ctypes",
    "import torch\nv = vars(torch)",
    "import operator, torch\noperator.attrgetter('sys')(torch)",
    "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    up = e.__traceback__.tb_frame.f_back",
    # a name a `from` import brings in is the attribute it is; a class pattern's keyword reads one too
    "from sys import modules",
    "from sys import _getframe as frame",
    "from torch.hub import sys",
    "from torch import *",
    "import torch\nmatch torch:\n    case object(sys=s):\n        pass",
    "def f():\n    pass\nmatch f:\n    case object(__globals__=g):\n        pass",
    # an import outside the allow-list, or a submodule of an allowed one that imports or runs by a string
    "import operator",
    "import string\nstring.Formatter().get_field('0.x', [1], {})",
    "import sysconfig_helper_of_my_own",
    "import logging.config",
    "import typing\ntyping.get_type_hints(lambda: 0)",
    "import timeit\ntimeit.Timer('import checker')",
    "from torch.utils import benchmark\nbenchmark.Timer(stmt='x', setup='import os')",
    "import timeit\ncode = 'import ' + 'os'\ntimeit.timeit(code)",
    # torch's own helpers that look an object up by a string, or read a function's globals
    "import torch\nlookup = torch._jit_internal.createResolutionCallbackFromEnv(torch)",
    "from torch._jit_internal import createResolutionCallbackFromClosure",
    "import torch\nmod = torch._dynamo.utils.import_submodule",
    "import torch\nx = torch.fx.graph_module._get_attr",
    # an object's own namespace, or one read by a name given at run time (the ninth ring's doors)
    "import torch\nnamespace = object.__getstate__(torch)",
    "import functools, torch\nprobe = functools.cached_property(len)\nprobe.__set_name__(None, 's' + 'ys')\n"
    "found = probe.__get__(torch)",
    "import torch\nclass Lying(type(torch)):\n    pass\ntorch.__class__ = Lying",
    "import copy\ncopy._reconstruct(None, None, list, ())",
    "from warnings import _getcategory",
    "import torch.utils.collect_env",
    "import torch\ntorch.utils.collect_env.run('id')",
    "import contextlib\ncontextlib.chdir('/')",
    # a text stream's bytes, whose raw file takes any descriptor
    "import logging\nraw = logging.FileHandler('/dev/null').stream.buffer",
]


@pytest.mark.parametrize("snippet", REACHING_IN)
def test_a_file_that_reaches_into_the_checker_is_refused_from_its_text(snippet):
    """The forged reports of the hidden ring all reached the checker's own trial code in the checked process
    (its modules by import or sys.modules, its frames, its result pipe). The grader reads the file's text
    before any trial and fails a file that does, whatever the checked process later reports."""
    from checker.grading import gate

    assert gate.problems(snippet), snippet


def test_what_fixes_use_is_not_taken_for_reaching_in():
    """Every solution, alternative fix and shipped exercise file, and the book's graded cells, pass the gate:
    it takes away nothing a fix needs (`module.modules()`, `from checker.notebook import check` included)."""
    import glob
    import json

    from checker.grading import gate

    root = Path(__file__).resolve().parent.parent
    files = [*root.glob("solutions/*.py"), *root.glob("exercises/*.py"), *root.glob("tests/alternatives/*.py"),
             *root.glob("tests/wrong/*.py")]
    assert len(files) > 100
    shipped = {ex.id: ex.exercise_path.read_text() for ex in load_exercises()}
    by_number = {ex.file[:3]: ex.id for ex in load_exercises()}  # a variant solution shares its number

    def shipped_of(path: Path) -> str:
        return shipped[by_number.get(path.name[:3]) or path.name.split("__")[0]]

    flagged = {f.name: gate.problems(f.read_text(), shipped_of(f)) for f in files
               if f.name != "__init__.py" and gate.problems(f.read_text(), shipped_of(f))}
    assert not flagged
    fused_norm = (root / "exercises" / "29_fused_norm_allow_in_graph.py").read_text()
    assert gate.problems("import fused_norm_kernels") and not gate.problems("import fused_norm_kernels", fused_norm)
    assert not gate.problems("from checker.notebook import check\nimport torch\n"
                             "def f(m: torch.nn.Module):\n    return list(m.modules())\n")
    for notebook in glob.glob(str(root / "book" / "*.ipynb")):
        for cell in json.load(open(notebook))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and "check(" not in source and "TODO" in source:  # an exercise cell
                named = re.search(r"gbcheck check ([\w-]+)", source)
                assert not gate.problems(source, shipped[named.group(1)] if named else None), (notebook, source[:80])


def test_a_forged_report_from_a_file_that_reaches_in_fails(tmp_path):
    """End to end: the unfixed file with a forge that writes frames of its own to the result pipe, found
    through the checker's frames; whatever it sends, the text decides."""
    forge = ("import sys\n_frame = sys._getframe()\nwhile _frame is not None and 'result_fd' not in _frame.f_locals:\n"
             "    _frame = _frame.f_back\n")
    report, gate_result = _unfixed_with(tmp_path, "cond-on-input", forge, "no-grader-access")
    assert report.status == "fail" and gate_result.status == "fail" and "_getframe" in gate_result.message


def _unfixed_with(tmp_path, exercise_id: str, prefix: str, check_name: str):
    """A real check of the exercise's unfixed file with `prefix` before it: the report, and its check named so."""
    from checker.grading.strict import check_file

    exercise = find_exercise(exercise_id)
    attempt = tmp_path / exercise.file
    attempt.write_text(prefix + exercise.exercise_path.read_text())
    report = check_file(exercise, attempt)
    return report, next(check for check in report.checks if check.name == check_name)


def test_an_operation_left_unused_in_the_graph_does_not_hold_a_structure_contract():
    """`item-in-graph` asks for the count to be read inside the graph. A record with a dead `.item()` node and
    the count folded into a constant held it by presence alone; the contract now reads the operations the
    graph's output depends on."""
    from checker.grading import replay

    def counted(x):
        return x * x.sum().item()

    def folded(x):
        x.sum().item()  # left in the graph, used by nothing
        return x * 3.0

    live = replay.live_targets(replay.graph_record(torch.fx.symbolic_trace(counted), (torch.ones(3),)))
    record = replay.graph_record(torch.fx.symbolic_trace(folded), (torch.ones(3),))
    assert "item" in [node.get("target") for node in record["nodes"]]  # the node is there
    dead = replay.live_targets(record)
    assert "item" in {replay.op_name(name) for name in live}
    assert "item" not in {replay.op_name(name) for name in dead}


def test_a_polyfill_of_the_breaks_cause_is_a_switch_not_a_fix(tmp_path):
    """substitute_in_graph on `print` makes Dynamo trace a twin that prints nothing: the break's cause is switched
    off for every compiled call, as a config key would, and the print stays in the code. Where the exercise does
    not teach the hatch, the tamper check names it (the polyfill table, compared with its state before the
    import); where it does (bisect-polyfill), the reference fix passes."""
    from checker.grading.strict import check_file

    polyfill = ("import torch\n\n\n@torch.compiler.substitute_in_graph(print, skip_signature_check=True)\n"
                "def _quiet(*args, **kwargs):\n    return None\n\n\n")
    report, switched = _unfixed_with(tmp_path, "eager-only-print", polyfill, "nothing-switched-off")
    assert report.status == "fail" and switched.status == "fail" and "substituted builtins.print" in switched.message
    bisect = find_exercise("bisect-polyfill")
    assert check_file(bisect, bisect.solution_path).status == "pass"


def test_a_graph_that_pads_every_input_to_a_bound_of_its_own_is_replayed_past_it(tmp_path):
    """The unfixed loop over frames, run over a fixed 300 after padding: one graph serves every size up to 300,
    including twice the largest the check draws (140 frames). The grader replays the graph at a size one past the largest
    integer the graph holds, which that graph cannot serve."""
    from checker.grading.strict import check_file

    exercise = find_exercise("online-normalize")
    padded = ("import torch\n\n\ndef normalize_online(features):\n    frames = features.shape[1]\n"
              "    padded = torch.nn.functional.pad(features, (0, 0, 0, 300 - frames))\n"
              "    total = torch.zeros_like(padded[:, 0])\n    means = []\n    for t in range(300):\n"
              "        total = total + padded[:, t]\n        means.append(total / (t + 1))\n"
              "    return features - torch.stack(means, dim=1)[:, :frames]\n")
    attempt = tmp_path / exercise.file
    attempt.write_text(padded)
    report = check_file(exercise, attempt)
    replayed = next(check for check in report.checks if check.name == "replay-matches")
    assert report.status == "fail" and replayed.status == "fail" and "a size no call of the check had" in replayed.message


def test_compiled_gradients_are_excused_only_by_a_report_that_fails_on_its_own():
    """Default mode's gradients are not asked of a file that still breaks or recompiles (it fails those checks
    first, and each break or length would cost a trace), nor of outputs with no floating-point tensor (no gradient
    flows from them); a report that leaves them out and claims none of these fails."""
    from checker.grading.matches import compiled_matches
    from checker.grading.trial import compiled_gradients_asked

    exercise = find_exercise("cond-on-input")
    x = torch.ones(2)
    ref = {"orders": {"default": [0], "fullgraph": [0]}, "outputs": [x], "inputs_after": [[x]], "cases": [0],
           "gradients": [{"of": ["argument 1"], "grads": [x]}]}

    def default(breaks: list, graphs: list[int]) -> dict:
        return {"mode": "default", "stage": "done", "outputs": [x], "inputs_after": [[x]],
                "diagnosis": {"error": None, "graph_breaks": breaks, "calls": [{"graphs": graphs}]}}

    fullgraph = {"mode": "fullgraph", "stage": "done", "outputs": [x], "inputs_after": [[x]],
                 "diagnosis": {"error": None, "graph_breaks": [], "calls": [{"graphs": [0]}]}}
    claimed_clean = default([], [0])
    assert compiled_gradients_asked(exercise, claimed_clean["diagnosis"], [x])
    result = compiled_matches(exercise, [claimed_clean, fullgraph], ref)
    assert result.status == "fail" and "gradients" in result.message, result
    breaking = default([{"gb_id": "GB0170", "gb_type": "Data-dependent branching"}], [0, 1])
    assert not compiled_gradients_asked(exercise, breaking["diagnosis"], [x])
    assert compiled_matches(exercise, [breaking, fullgraph], ref).status == "pass"  # no-graph-breaks fails it
    malformed = {"graph_breaks": [], "calls": "not a list of calls"}
    assert compiled_gradients_asked(exercise, malformed, [x])  # a report of no such shape is asked for everything
    recompiling = find_exercise("online-normalize")
    assert not compiled_gradients_asked(recompiling, default([], [0, 1, 2])["diagnosis"], [x])
    assert compiled_gradients_asked(recompiling, default([], [0, 1])["diagnosis"], [x])
    # indices alone: every gradient would be none, so none is asked; a float output claimed as indices fails first
    indices = torch.tensor([2, 0])
    assert not compiled_gradients_asked(exercise, claimed_clean["diagnosis"], [indices])
    on_indices = {**ref, "outputs": [indices], "gradients": [{"of": ["argument 1"], "grads": [None]}]}
    assert compiled_matches(exercise, [{**claimed_clean, "outputs": [indices]}, {**fullgraph, "outputs": [indices]}],
                            on_indices).status == "pass"
    claimed_indices = compiled_matches(exercise, [{**claimed_clean, "outputs": [indices]}, fullgraph], ref)
    assert claimed_indices.status == "fail" and "output differs" in claimed_indices.message, claimed_indices


# What tells the checked process from a program's own. A file that branches on one runs its fix only where it is
# checked, and keeps its break everywhere else: the replay computes the graphs that process captured.
TELLS = [
    "import torch\nCHECKED = torch.get_num_threads() == 1\n",
    "from torch import get_num_interop_threads\nCHECKED = get_num_interop_threads() == 1\n",
    "import torch\nCHECKED = 'get_num_threads() : 1' in torch.__config__.parallel_info()\n",
    "import torch._dynamo.utils\nCHECKED = bool(torch._dynamo.utils.counters['stats'])\n",
    "CHECKED = 'gbcheck' in __file__\n",
]


@pytest.mark.parametrize("tell", TELLS)
def test_a_sign_of_the_check_is_refused_from_the_text(tell):
    from checker.grading import gate

    assert gate.problems(tell), tell


def test_a_fix_made_only_on_the_grader_s_one_thread_fails(tmp_path):
    """cond-on-input fixed only where torch runs one intra-op thread, as the checked process does: a program of
    the learner's own (a thread per core) still branches in Python. The file's text fails it."""
    from checker.grading.strict import check_file

    exercise = find_exercise("cond-on-input")
    attempt = tmp_path / exercise.file
    attempt.write_text(
        "import torch\n\n_CHECKED = torch.get_num_threads() == 1\n\n\n"
        "def gated_residual(x, weight):\n    h = x @ weight\n    if not _CHECKED:\n        if h.mean() > 0:\n"
        "            return x + torch.relu(h)\n        return x - torch.tanh(h)\n"
        "    return torch.cond(h.mean() > 0, lambda x, h: x + torch.relu(h), lambda x, h: x - torch.tanh(h), (x, h))\n")
    report = check_file(exercise, attempt)
    gate_result = next(check for check in report.checks if check.name == "no-grader-access")
    assert report.status == "fail" and "get_num_threads" in gate_result.message, report.to_dict()


@pytest.mark.parametrize("condition", ["if __name__ != '__main__':\n    ", "try:\n    pass\nexcept ValueError:\n    ",
                                       "for _ in range(__name__ != '__main__'):\n    "])
def test_a_config_set_only_where_a_condition_holds_is_not_counted(tmp_path, condition):
    """reorder-print's left-out set, filled only in a branch (a loop, a handler) that a sign of the check decides:
    where the branch is not taken, `print` breaks the graph. The reading counts a config only where it always
    runs, and so fails the print still in the traced code."""
    from checker.grading.strict import check_file

    exercise = find_exercise("reorder-print")
    solution = exercise.solution_path.read_text()
    setting = "torch._dynamo.config.reorderable_logging_functions.add(print)"
    assert setting in solution
    attempt = tmp_path / exercise.file
    attempt.write_text(solution.replace(setting, condition + setting))
    report = check_file(exercise, attempt)
    traced = next(check for check in report.checks if check.name == "print-out-of-trace")
    assert report.status == "fail" and traced.status == "fail", report.to_dict()


def test_a_capture_flag_patched_in_a_branch_is_not_counted():
    from checker.grading.contracts import _sets_config
    from checker.grading.file_text import parse_live

    always = "import torch\n\n@torch._dynamo.config.patch(capture_scalar_outputs=True)\ndef f(x):\n    return x\n"
    branch = ("import torch\n\ndef f(x):\n    return x\n\nif __name__ != '__main__':\n"
              "    f = torch._dynamo.config.patch(capture_scalar_outputs=True)(f)\n")
    assert _sets_config(parse_live(always), "capture_scalar_outputs")
    assert not _sets_config(parse_live(branch), "capture_scalar_outputs")
    assert not _sets_config(parse_live(always.replace("@", "@__name__ == 'x' or ")), "capture_scalar_outputs")


@pytest.mark.parametrize("undone", ["torch._dynamo.config.capture_scalar_outputs, _ = False, 0",
                                    "for torch._dynamo.config.capture_scalar_outputs in (False,):\n    pass",
                                    "with torch._dynamo.config.patch(capture_scalar_outputs=False):\n    pass"])
def test_a_capture_flag_turned_off_again_in_any_form_is_not_counted(undone):
    """Set to True, then to False by a tuple's target, a loop's or a patch: the reading of the config counts it
    as set only where nothing else stores to it."""
    from checker.grading.contracts import _sets_config
    from checker.grading.file_text import parse_live

    on = "import torch\n\ntorch._dynamo.config.capture_scalar_outputs = True\n"
    assert _sets_config(parse_live(on), "capture_scalar_outputs")
    assert not _sets_config(parse_live(on + undone + "\n"), "capture_scalar_outputs")


@pytest.mark.parametrize("emptied", ["SET.clear()", "SET.remove(print)", "SET -= {print}", "SET, _ = set(), 0",
                                     "for SET in [set()]:\n    pass"])
def test_a_left_out_set_emptied_again_counts_nothing(emptied):
    """print added to reorder-print's set, then taken out again: the reading does not follow what is taken out,
    so nothing counts as left out of the trace (print in the traced code fails, as it breaks the graph)."""
    from checker.grading.file_text import parse_live, read_file

    filled = "import torch\n\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n"
    assert read_file(parse_live(filled)).left_out == {"print"}
    emptied = emptied.replace("SET", "torch._dynamo.config.reorderable_logging_functions")
    assert read_file(parse_live(filled + emptied + "\n")).left_out == set()


@pytest.mark.parametrize("exercise_id, check_name", [("cond-on-input", "branch-out-of-trace"),
                                                      ("loop-early-exit", "exit-out-of-trace"),
                                                      ("online-normalize", "frame-loop-out-of-trace"),
                                                      ("stack-frames", "window-loop-out-of-trace")])
def test_a_break_kept_on_a_path_the_check_never_takes_fails_from_the_text(tmp_path, exercise_id, check_name):
    """The reference fix where the file runs as a module, the unfixed code where it runs as a script (a sign the
    gate does not refuse): the checked process captures the fixed graph only, and the replay cannot tell. The
    reading of the text finds the Python branch on a tensor's values, or the loop over a size, still in the
    traced code."""
    from checker.grading.strict import check_file

    exercise = find_exercise(exercise_id)
    attempt = tmp_path / exercise.file
    attempt.write_text(fixed_only_where_imported(exercise))
    report = check_file(exercise, attempt)
    failing = [check.name for check in report.checks if check.status == "fail"]
    # and the test that picks the path reads the module's own name (test_environment_reads.py)
    assert report.status == "fail" and failing == [check_name, "no-environment-switch"], report.to_dict()
