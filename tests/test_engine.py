"""The diagnosis engine on the breaks the course teaches: ids, types, lines, graphs (torch 2.13 facts)."""

import logging
import os
import subprocess
import sys
import warnings

import pytest
import torch

from checker.dynamo import engine, registry, torch_support

logger = logging.getLogger("gbcourse.test")


def branch(x):
    if x.sum() > 0:  # line: branch
        return x + 1
    return x - 1


def item(x):
    return x * x.sum().item()  # line: item


def printing(x):
    y = x * 2
    print("y", y)  # line: printing
    return y + 1


def logs(x):
    y = x * 2
    logger.info("y %s", y)  # line: logs
    return y + 1


def warns(x):
    y = x * 2
    warnings.warn("careful")  # line: warns
    return y + 1


def nonzero(x):
    return x.nonzero().float() * 2  # line: nonzero


def wrong_call(x):
    return torch.sin(x, x)  # line: wrong_call


def line_of(name):
    import inspect
    source, start = inspect.getsourcelines(globals()[name])
    return start + next(i for i, text in enumerate(source) if f"# line: {name}" in text)


@pytest.mark.parametrize("name, gb_id", [
    ("branch", "GB0170"), ("item", "GB0124"), ("printing", "GB0059"), ("logs", "GB0291"),
    ("warns", "GB0007"), ("nonzero", "GB0036"), ("wrong_call", "GB0112"),
])
def test_default_mode_names_the_break_and_its_line(name, gb_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diagnosis = engine.diagnose(globals()[name], (torch.ones(3),), "default", focus_file=__file__)
    if not registry.has_gb_id(gb_id):  # an older registry: the break is there, untyped
        gb_id = None
        assert [gb.gb_type for gb in diagnosis.graph_breaks] == ["Unsupported"]
    assert [gb.gb_id for gb in diagnosis.graph_breaks] == [gb_id]
    found = diagnosis.graph_breaks[0]
    assert found.line == line_of(name)
    assert found.filename == __file__
    assert found.gb_type and found.source_line.endswith(f"# line: {name}")


@pytest.mark.parametrize("name, captured", [("item", "scalars"), ("nonzero", "dynamic_shapes"), ("branch", False),
                                            ("printing", False)])
def test_fullgraph_true_quietly_captures_item_and_nonzero_from_torch_2_10(name, captured):
    """From torch 2.10 (2.13 included), fullgraph=True allows scalar outputs and data-dependent shapes on its own."""
    if captured:
        captured = getattr(torch_support.fullgraph_captures(), captured)
    diagnosis = engine.diagnose(globals()[name], (torch.ones(3),), "fullgraph")
    assert (diagnosis.error is None) == captured
    if not captured:
        assert diagnosis.error.gb_id and diagnosis.error.line == line_of(name)


def test_logger_break_echoed_from_library_code_counts_once_at_the_user_line():
    diagnosis = engine.diagnose(logs, (torch.ones(3),), "default", focus_file=__file__)
    assert len(diagnosis.graph_breaks) == 1
    assert diagnosis.graph_breaks[0].count == 2  # once in our frame, once inside Logger.info


def test_eager_mode_runs_without_compiling_even_a_compiled_function():
    compiled = torch.compile(branch, backend="eager")
    diagnosis = engine.diagnose(compiled, (torch.ones(3),), "eager")
    assert diagnosis.graphs == [] and diagnosis.error is None
    torch.testing.assert_close(diagnosis.outputs[0], torch.full((3,), 2.0))


def test_graphs_and_ops_are_counted():
    diagnosis = engine.diagnose(branch, [((torch.ones(3),), {}), ((-torch.ones(3),), {})], "default")
    assert len(diagnosis.graphs) >= 2 and diagnosis.op_count >= 2
    assert "GB0170" in diagnosis.summary()


def test_config_changes_made_while_compiling_are_seen():
    baseline = engine.config_snapshot()
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        diagnosis = engine.diagnose(item, (torch.ones(3),), "default", config_baseline=baseline)
    assert diagnosis.graph_breaks == []
    assert diagnosis.config_changed == ["capture_scalar_outputs"]


def test_course_notes_name_real_registry_ids_and_chapters():
    from pathlib import Path

    book = Path(__file__).resolve().parent.parent / "book"
    for gb_id, note in registry.course_notes().items():
        # An id the installed registry lacks must be one the note declares newer than this torch.
        newer = note.since and torch_support.torch_before(note.since)
        assert registry.gb_type_for(gb_id) or newer, f"{gb_id} is not in torch's graph-break registry"
        assert not registry.gb_type_for(gb_id) or not newer, f"{gb_id} is here before its `since`"
        assert note.meaning and note.fix
        # A note without a chapter must send the reader to a section of PyTorch's programming-model docs.
        assert note.chapter or note.docs in registry.DOCS_SECTIONS, f"{gb_id} points nowhere to read"
        if note.chapter:
            assert (book / f"{note.chapter}.ipynb").exists(), f"{gb_id} points at a missing chapter {note.chapter}"


@pytest.mark.parametrize("trace, kept", [("", False), ("torch_trace", True)])
def test_metrics_bookkeeping_is_skipped_unless_a_structured_trace_is_asked_for(tmp_path, trace, kept):
    probe = ("import torch._dynamo.utils as u, torch._dynamo.guards as g\n"
             "real = (u.record_compilation_metrics, g.profile_guard_manager)\n"
             "import checker.dynamo.engine\n"
             "print((u.record_compilation_metrics, g.profile_guard_manager) == real)\n")
    env = {**os.environ, "TORCH_TRACE": str(tmp_path / trace) if trace else ""}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == str(kept), done.stderr
