"""The version adapters: the supported range, feature detection both ways, the manifest's per-release variants.

Detection is tested against stand-in objects shaped like each release's torch (a config module with the old
name, a symbolic_convert with a module-level log_graph_break, ...), never by patching the real torch; the
real torch installed is checked too, whatever release it is.
"""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
import textwrap
import tomllib
import traceback
import types
from pathlib import Path

import pytest
import torch

from checker.course.manifest import ManifestError, load_exercises
from checker.course.resolver import find_course
from checker.dynamo import engine, registry, torch_support

REPO = Path(__file__).resolve().parent.parent  # the clone these tests run in

logger = logging.getLogger("gbcourse.test.support")


# --- the supported range -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["2.8.0", "2.9.1", "2.10.0+cu128", "2.13.0+cpu", "2.15.0", "2.15.1"])
def test_releases_in_the_range_are_accepted(version):
    assert torch_support.check_supported(version) is None


@pytest.mark.parametrize("version", ["2.7.1", "2.6.0+cu124", "1.13.1", "2.16.0", "2.16.0.dev20261201", "3.0.0", "nightly", None])
def test_releases_outside_the_range_get_one_sentence(version):
    sentence = torch_support.check_supported(version)
    assert sentence and "\n" not in sentence and sentence.endswith(".")
    assert "torch 2.8 to 2.15" in sentence and torch_support.REQUIREMENT in sentence
    assert (version or "not installed") in sentence


def test_the_installed_torch_is_supported():
    assert torch_support.check_supported() is None, torch.__version__


def test_pyproject_declares_the_same_range():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert torch_support.REQUIREMENT in project["dependencies"]


def _fake_torch(tmp_path: Path, version: str) -> dict[str, str]:
    """An environment whose first `torch` is a fake one of `version`: pip's metadata, and a package that
    fails when imported (the range is checked before anything imports torch)."""
    (tmp_path / f"torch-{version}.dist-info").mkdir()
    (tmp_path / f"torch-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n", encoding="utf-8")
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('the fake torch was imported')\n")
    return {"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize("argv", [["list", "--json"], ["check", "cond-on-input"], ["verify"], []])
def test_a_command_under_an_unsupported_torch_prints_one_sentence_and_fails(tmp_path, argv):
    done = subprocess.run([sys.executable, "-m", "checker", *argv], env=_fake_torch(tmp_path, "2.7.1"),
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "torch 2.7.1" in done.stderr and "torch 2.8 to 2.15" in done.stderr


def test_notebook_check_under_an_unsupported_torch_reports_the_sentence(tmp_path):
    probe = ("from checker.notebook import check\n"
             "report = check('cond-on-input', 'def gated_residual(x, w):\\n    return x\\n')\n"
             "print(report.report.status, '|', report.report.message)\n")
    done = subprocess.run([sys.executable, "-c", probe], env=_fake_torch(tmp_path, "2.16.0"), cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    status, message = done.stdout.strip().split(" | ")
    assert status == "error" and "torch 2.16.0" in message and "Traceback" not in done.stderr


# --- names that differ between releases ---------------------------------------------------------------

def test_config_name_finds_the_name_a_release_uses():
    newest = types.SimpleNamespace(ignore_logging_functions=set(), ignore_logger_methods=set())
    older = types.SimpleNamespace(ignore_logger_methods=set())
    names = ("ignore_logging_functions", "ignore_logger_methods")
    assert torch_support.config_name(*names, config=newest) == "ignore_logging_functions"
    assert torch_support.config_name(*names, config=older) == "ignore_logger_methods"
    with pytest.raises(AttributeError, match="none of"):
        torch_support.config_name(*names, config=types.SimpleNamespace())


def test_the_logging_config_name_of_the_installed_torch_makes_dynamo_skip_a_logger_call():
    def logs(x):
        y = x * 2
        logger.info("y %s", y)
        return y + 1

    name = torch_support.config_name("ignore_logging_functions", "ignore_logger_methods")
    assert engine.diagnose(logs, (torch.ones(3),), "default").graph_breaks  # a break without it...
    with torch._dynamo.config.patch(**{name: {logger.info}}):
        diagnosis = engine.diagnose(logs, (torch.ones(3),), "default")
    assert diagnosis.graph_breaks == [] and diagnosis.op_count >= 2  # ...none with it


@pytest.mark.parametrize("dotted, present", [
    ("torch._dynamo.config.capture_scalar_outputs", True),
    ("torch._higher_order_ops.cond", True),  # a submodule, imported on demand
    ("torch._dynamo.config.no_such_option", False),
    ("torch.no_such_module.anything", False),
])
def test_has_feature(dotted, present):
    assert torch_support.has_feature(dotted) is present


def test_has_feature_only_speaks_of_torch():
    with pytest.raises(ValueError):
        torch_support.has_feature("numpy.interp")


def test_has_gb_id_reads_the_installed_registry():
    assert registry.has_gb_id("GB0170") and not registry.has_gb_id("GB9999")


def test_a_placeholder_type_in_the_registry_is_replaced_by_the_real_one():
    placeholder = {"GB0170": [{"Gb_type": "_gb_type", "Hints": []}], "GB0007": [{"Gb_type": "Skipped"}]}
    repaired = torch_support.repaired_registry(placeholder)
    assert repaired["GB0170"] == [{"Gb_type": "Data-dependent branching", "Hints": []}]
    assert repaired["GB0007"] == [{"Gb_type": "Skipped"}]
    both = {"GB0170": [{"Gb_type": "Data-dependent branching"}, {"Gb_type": "_gb_type"}]}
    assert torch_support.repaired_registry(both)["GB0170"][1] == {"Gb_type": "_gb_type"}  # already known: left


# --- where Dynamo reports graph breaks ---------------------------------------------------------------

def test_hook_point_is_the_translator_method_or_the_module_function():
    class Translator:
        def log_graph_break(self, code_options, reason, exc):
            pass

    class Subclass(Translator):
        pass

    def log_graph_break(code_options, reason="", exc_info=False, user_stack=None):
        pass

    newer = types.SimpleNamespace(InstructionTranslatorBase=Translator, log_graph_break=None)
    older = types.SimpleNamespace(InstructionTranslatorBase=Subclass, log_graph_break=log_graph_break)
    assert torch_support.hook_point(newer) is Translator
    assert torch_support.hook_point(older) is older
    with pytest.raises(RuntimeError):
        torch_support.hook_point(types.SimpleNamespace(InstructionTranslatorBase=Subclass))
    from torch._dynamo import symbolic_convert
    owner = torch_support.hook_point(symbolic_convert)
    assert owner in (symbolic_convert, symbolic_convert.InstructionTranslatorBase)


def _unsupported(text, **attributes):
    """An exception shaped like torch 2.11's Unsupported: its message and the attributes it carries."""
    error = RuntimeError(text)
    error.msg = text
    vars(error).update(attributes)
    return error


def _translator(filename="model.py", line=7, name="forward"):
    return types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename=filename, co_name=name), lineno=line)


def test_a_break_reported_with_its_exception_torch_2_11_on():
    text = torch._dynamo.exc.format_graph_break_message("Some break", "ctx", "Why it breaks.", ["Do this."])
    stack = traceback.StackSummary.from_list([("user.py", 3, "f", "x.item()")])
    exc = _unsupported(text, gb_type="Some break", real_stack=stack, logged=False)
    event = torch_support._event({"self": _translator(), "code_options": {}, "reason": text, "exc": exc})
    assert (event.gb_type, event.explanation, event.hints) == ("Some break", "Why it breaks.", ("Do this.",))
    assert event.stack is stack and event.frame == ("model.py", 7, "forward")
    exc.logged = True  # torch reports an exception once
    assert torch_support._event({"self": _translator(), "code_options": {}, "reason": text, "exc": exc}) is None


def test_a_break_reported_by_its_text_and_stack_before_torch_2_11():
    text = torch._dynamo.exc.format_graph_break_message("Older break", "ctx", "Because.", ["Try that."])
    stack = traceback.StackSummary.from_list([("user.py", 5, "g", "print(x)")])
    # torch 2.10: the translator's method, given the message with a prefix and a documentation link
    event = torch_support._event({"self": _translator(), "code_options": {},
                                  "reason": f"Encountered graph break:\n\n{text}\n For more details: https://x",
                                  "user_stack": stack})
    assert (event.gb_type, event.explanation, event.hints) == ("Older break", "Because.", ("Try that.",))
    assert event.stack is stack and event.frame == ("model.py", 7, "forward")
    # torch 2.8 and 2.9: a module-level function, only the code's options to say where it was
    options = {"co_filename": "old.py", "co_firstlineno": 12, "co_name": "step"}
    event = torch_support._event({"code_options": options, "reason": "Can't find numpy function interp\nmore",
                                  "exc_info": True, "user_stack": stack})
    assert (event.gb_type, event.explanation) == ("Unsupported", "Can't find numpy function interp")
    assert event.frame == ("old.py", 12, "step")


def test_message_parts_of_an_exception_and_of_text():
    text = torch._dynamo.exc.format_graph_break_message("Kind", "ctx", "Explained.", ["One.", "Two."])
    assert torch_support.message_parts(text) == ("Kind", "Explained.", ("One.", "Two."))
    error = _unsupported(text, gb_type="Own kind")  # torch 2.11 on: the exception carries its type
    assert torch_support.message_parts(error) == ("Own kind", "Explained.", ("One.", "Two."))
    assert torch_support.message_parts(RuntimeError(text)) == ("Kind", "Explained.", ("One.", "Two."))
    assert torch_support.message_parts("nothing torch formatted") == (None, "", ())


# --- the manifest's variants ------------------------------------------------------------------------

def _manifest(tmp_path: Path, variants: str):
    original = (REPO / "exercises" / "exercises.toml").read_text(encoding="utf-8")
    first = original.index("\n[[exercise]]\n")
    second = original.index("\n[[exercise]]\n", first + 1)
    block = original[first:second].split("\n[[exercise.variant]]")[0]  # the first exercise, as declared
    path = tmp_path / "exercises.toml"
    path.write_text(block.rstrip() + "\n" + textwrap.dedent(variants), encoding="utf-8")
    return dataclasses.replace(find_course(REPO), manifest_path=path)  # the course, with this manifest


def test_variants_apply_where_their_condition_holds(tmp_path):
    course = _manifest(tmp_path, """
        [[exercise.variant]]
        missing = "torch._dynamo.config.capture_scalar_outputs"
        expected_break = "GB0001"

        [[exercise.variant]]
        missing = "GB9999"
        allowed_config = ["capture_scalar_outputs"]
        solution = "other.py"

        [[exercise.variant]]
        torch_before = "2.0"
        skip = "never on these releases"

        [[exercise.variant]]
        torch_before = "99.0"
        hints = ["A hint for every release before 99."]
        """)
    declared, = load_exercises(course, apply_variants=False)
    exercise, = load_exercises(course)
    assert exercise.expected_break == declared.expected_break  # the feature exists: not applied
    assert exercise.allowed_config == ("capture_scalar_outputs",) and exercise.solution_path.name == "other.py"
    assert exercise.skip == "" and exercise.hints == ("A hint for every release before 99.",)
    assert exercise.applied == ("torch without GB9999", "torch before 99.0")


def test_a_declared_skip_is_reported_as_skip_by_every_face(tmp_path, capsys, monkeypatch):
    from checker import cli
    from checker.commands import instructor, learner
    from checker.grading.report import render_text
    from checker.grading.strict import check_file

    exercise, = load_exercises(_manifest(tmp_path, """
        [[exercise.variant]]
        missing = "torch._dynamo.config.no_such_option"
        skip = "the lesson needs no_such_option"
        """))
    assert exercise.skip == "the lesson needs no_such_option (on torch without torch._dynamo.config.no_such_option)"
    report = check_file(exercise, exercise.exercise_path)
    assert report.status == "skip" and exercise.skip in report.message and report.max_points == 0
    assert render_text(report).startswith("SKIPPED")
    assert learner.exercise_record(exercise, find_course(REPO))["skip"] == exercise.skip
    monkeypatch.setattr(instructor, "load_exercises", lambda *course: [exercise])
    monkeypatch.setattr(learner, "load_exercises", lambda *course: [exercise])
    assert cli.main(["verify"]) == 0  # a declared skip holds
    assert f"skip: {exercise.skip}" in capsys.readouterr().out
    from checker.course.progress import Progress
    monkeypatch.setattr(learner, "Progress", lambda: Progress(tmp_path / "progress.json"))  # not the learner's
    cli.main([])
    assert f"(skipped: {exercise.skip})" in capsys.readouterr().out


@pytest.mark.parametrize("variant, problem", [
    ('missing = "GB9999"', "must change something"),
    ('expected_break = "GB0001"', "exactly one condition"),
    ('missing = "GB9999"\ntorch_before = "2.9"\nskip = "x"', "exactly one condition"),
    ('missing = "numpy.interp"\nskip = "x"', "a torch name or a GB id"),
    ('missing = "GB9999"\nskip = "x"\ncolour = "red"', "unknown fields"),
])
def test_a_malformed_variant_is_a_manifest_error(tmp_path, variant, problem):
    with pytest.raises(ManifestError, match=problem):
        load_exercises(_manifest(tmp_path, "[[exercise.variant]]\n" + variant + "\n"))


# --- a clean exit -------------------------------------------------------------------------------------

def test_objects_frozen_for_forking_are_freed_when_the_grader_exits():
    """What run_jobs hides from the collector comes back at exit: native extensions that count live objects at
    exit (triton's on CUDA builds) stay quiet, and finalizers run."""
    probe = textwrap.dedent("""
        from checker.grading import sandbox
        class Noisy:
            def __del__(self):
                print("freed", flush=True)
        cycle = Noisy()
        cycle.self = cycle
        del cycle
        sandbox.run_jobs([lambda: 1])
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "freed" and done.stderr == ""


def test_a_config_alias_names_the_same_setting_and_nothing_else():
    import torch._dynamo.config as config

    names = torch_support.config_names_of("ignore_logging_functions")
    if hasattr(config, "ignore_logging_functions") and hasattr(config, "ignore_logger_methods"):
        assert set(names) == {"ignore_logging_functions", "ignore_logger_methods"}  # 2.11 and later: an alias
    else:
        assert names == ("ignore_logging_functions",)
    assert torch_support.config_names_of("capture_scalar_outputs") == ("capture_scalar_outputs",)
    fake = types.SimpleNamespace(ignore_logging_functions=set(), ignore_logger_methods=set())  # two sets, no alias
    assert torch_support.config_names_of("ignore_logging_functions", config=fake) == ("ignore_logging_functions",)
