"""`gbcheck diagnose` on breaks inside installed libraries, chained breaks, --repro and --compare.

The library is a real package on sys.path: `fakelib` in a folder named site-packages with its
dist-info, as pip lays it out, imported by a user's script in a subprocess. Its breaks are checked
against torch's own graph-break log, the harness of benchmarks/real_models.py. A tiny transformers
model (random weights from a config, no download) guards the same agreement on a real library.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
import torch

from checker.dynamo import engine, registry, torch_support

REPO = Path(__file__).resolve().parent.parent  # the clone these tests run in


def needs_ids(*gb_ids):
    """Expectations written against torch 2.11+ ids: skipped on a release whose registry lacks them."""
    missing = [gb_id for gb_id in gb_ids if not registry.has_gb_id(gb_id)]
    return pytest.mark.skipif(bool(missing), reason=f"this torch's registry has no {', '.join(missing)}")

FAKELIB = '''
import copy

from torch import nn


class Block(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        for step in range(2):
            x = self.proj(x)
            if step == 1:
                print("fakelib step")  # a print inside a loop: GB7000 with GB0059 behind it
        return x


class Model(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.block = Block(width)

    def forward(self, x):
        spare = copy.deepcopy(self.block.proj)  # deepcopy in forward: GB4198
        return self.block(x) + spare(x)
'''

TRAIN = '''
import torch

import fakelib

model = fakelib.Model()
compiled = torch.compile({compiled})
out = compiled(torch.randn(4, 8))  # entry
print("done", tuple(out.shape))
'''

WAV2VEC2 = '''
import torch
import transformers

torch.manual_seed(0)
config = transformers.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                                     conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                                     num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
model = transformers.Wav2Vec2Model(config).train()
out = torch.compile(model, backend="eager")(torch.randn(2, 1600))  # entry
out.last_hidden_state.sum().backward()
'''


def _benchmark():
    spec = importlib.util.spec_from_file_location("real_models", REPO / "benchmarks" / "real_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def line_of(source, marker):
    return next(number for number, text in enumerate(source.splitlines(), start=1) if marker in text)


@pytest.fixture
def project(tmp_path):
    site = tmp_path / "lib" / "site-packages"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text(FAKELIB)
    info = site / "fakelib-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakelib\nVersion: 1.2.3\n")
    (info / "top_level.txt").write_text("fakelib\n")
    user = tmp_path / "project"
    user.mkdir()
    (user / "before.py").write_text(TRAIN.format(compiled="model"))
    (user / "after.py").write_text(TRAIN.format(compiled="model.block"))  # the user's change: compile less
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    return tmp_path, user, env


def gbcheck(env, *args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "checker", "diagnose", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def torch_log(script, env):
    """What torch itself logs: one graph-break id per record, and the graphs Dynamo compiled."""
    done = subprocess.run([sys.executable, "-c", _benchmark().TORCH_LOG, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    line = next(row for row in done.stdout.splitlines() if row.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def id_counts(report):
    counts = Counter()
    for group in report["groups"]:
        counts[group["gb_id"]] += group["count"]
    return counts


@needs_ids("GB7000", "GB4198")
def test_library_breaks_grouped_by_package_with_entry_frame_and_inner_cause(project):
    root, user, env = project
    done = gbcheck(env, user / "before.py", "--json", "--repro", root / "repro")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    truth = torch_log(user / "before.py", env)
    assert id_counts(report) == Counter(truth["ids"]) and report["graphs"] == truth["graphs"]
    library = {lib["gb_id"]: lib for lib in report["library"]}
    assert set(library) == {"GB7000", "GB0059", "GB4198"}
    for lib in library.values():
        assert (lib["package"], lib["version"]) == ("fakelib", "1.2.3")
        assert lib["entries"][0]["line"] == line_of(TRAIN, "# entry") and lib["entries"][0]["file"].endswith("before.py")
        assert lib["workarounds"] and "fakelib" in lib["upstream"]
        assert os.path.isfile(lib["repro"]) and lib["repro_command"].split() == ["python", lib["repro"]]
    assert library["GB7000"]["places"] == [f"fakelib/__init__.py:{line_of(FAKELIB, 'a print inside a loop')}"]
    assert [cause["gb_id"] for cause in library["GB7000"]["causes"]] == ["GB0059"]
    loop = next(group for group in report["groups"] if group["gb_id"] == "GB7000")
    assert loop["causes"][0]["gb_type"] == "Failed to trace builtin operator" and loop["causes"][0]["chapter"]


@needs_ids("GB7000", "GB4198")
def test_repro_script_reproduces_from_the_library_alone(project, tmp_path):
    root, user, env = project
    assert gbcheck(env, user / "before.py", "--repro", root / "repro").returncode == 0
    script = root / "repro" / "repro_fakelib_gb7000.py"
    text = script.read_text()
    assert "before.py" not in text and "from fakelib import Model" in text
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run([sys.executable, str(script)], cwd=elsewhere, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "gb7000.html" in run.stderr and "gb4198.html" in run.stderr  # torch's own log of the breaks


@needs_ids("GB7000", "GB4198")
def test_text_report_is_one_line_per_library_group_unless_verbose(project):
    root, user, env = project
    short = gbcheck(env, user / "before.py")
    assert short.returncode == 0, short.stderr
    library_lines = [line for line in short.stdout.splitlines() if line.startswith("  - fakelib 1.2.3: ")]
    assert len(library_lines) == 3
    assert "reached from" not in short.stdout and "What it means" not in short.stdout  # all breaks are fakelib's
    assert any("behind it GB0059" in line for line in library_lines)
    assert all(line.endswith(f"Repro: gbcheck diagnose {user / 'before.py'} --repro gb-repro") for line in library_lines)
    verbose = gbcheck(env, user / "before.py", "--verbose", "--html", root / "report.html")
    assert "reached from" in verbose.stdout and "upstream:" in verbose.stdout
    assert "Behind it: GB0059" in verbose.stdout
    page = (root / "report.html").read_text()
    assert "fakelib 1.2.3" in page and "Your calls that led there" in page and "Behind it" in page
    assert "<script" not in page and "src=" not in page


@needs_ids("GB7000", "GB4198")
def test_compare_before_and_after_a_change(project):
    root, user, env = project
    done = gbcheck(env, "--compare", user / "before.py", user / "after.py", "--json")
    assert done.returncode == 0, done.stderr
    comparison = json.loads(done.stdout)
    # Compiling the block alone leaves the deepcopy out; torch then logs the loop's break once, as GB7000.
    assert torch_log(user / "after.py", env)["ids"] == ["GB7000"]
    assert {c["gb_id"] for c in comparison["removed"]} == {"GB4198", "GB0059"}
    assert {c["gb_id"] for c in comparison["remaining"]} == {"GB7000"}
    assert comparison["new"] == [] and comparison["totals"] == [3, 1]
    saved = root / "before.json"
    saved.write_text(gbcheck(env, user / "before.py", "--json").stdout)
    text = gbcheck(env, "--compare", saved, user / "after.py")
    assert "Removed (2):" in text.stdout and "GB4198" in text.stdout and "New (0):" in text.stdout
    (root / "broken.json").write_text("[1, 2]")
    bad = gbcheck(env, "--compare", root / "broken.json", user / "after.py")
    assert bad.returncode == 2 and "not the JSON" in bad.stderr and "Traceback" not in bad.stderr


LOOP = '''
import torch


def step(x):
    for i in range(3):
        x = x + 1
        print("step", i)  # planted: a print inside a loop
    return x
'''


@needs_ids("GB7000", "GB4198")
def test_chained_break_in_user_code_carries_its_inner_cause(tmp_path):
    from checker.diagnose.render import render_html, render_text
    from checker.diagnose.run import diagnose_target

    (tmp_path / "loop.py").write_text(LOOP)
    result = diagnose_target(f"{tmp_path / 'loop.py'}:step", args="torch.ones(3)")
    assert [group.gb_id for group in result.groups] == ["GB7000"] and result.library == []
    group = result.groups[0]
    assert group.locations[0]["line"] == line_of(LOOP, "planted")
    assert [(cause["gb_id"], cause["chapter"]) for cause in group.causes] == [("GB0059", "printing-logging")]
    assert "Behind it: GB0059 Failed to trace builtin operator" in render_text(result)
    assert "Behind it:</b> GB0059" in render_html(result)
    assert result.to_dict()["groups"][0]["causes"][0]["gb_type"] == "Failed to trace builtin operator"


# Breaks the real models of benchmarks/real_models.py hit, reproduced in a few lines each (torch 2.13).
def _observed_exception(x):
    return x + {}["missing"]


def _requires_grad_leaked(x):
    y = x * 2
    y.requires_grad_()
    return y


def _setattr_requires_grad(x):
    y = x * 2
    y.requires_grad = True
    return y


_lstm = torch.nn.LSTM(4, 4)


def _lstm_call(x):
    return _lstm(x)[0]


@pytest.mark.parametrize("fn,gb_id", [(_observed_exception, "GB0088"), (_requires_grad_leaked, "GB8985"),
                                      (_setattr_requires_grad, "GB0206"), (_lstm_call, "GB0014")])
def test_ids_real_models_hit_have_a_note_that_points_somewhere(fn, gb_id):
    found = engine.diagnose(fn, (torch.randn(2, 3, 4),))
    if not registry.has_gb_id("GB8985"):  # ids as torch 2.11+ reports these breaks; older ones differ
        pytest.skip("this torch reports these breaks under other ids")
    ids = [gb.gb_id for gb in found.graph_breaks]
    assert len(ids) == 1 and ids[0]
    # torch 2.11 to 2.14 report `gb_id`; a later release may file the same break under another id, which
    # then needs its note as much.
    gb_id = gb_id if ids == [gb_id] else ids[0]
    note = registry.course_note(gb_id)
    assert note and note.meaning and note.fix and (note.chapter or note.docs)


def test_every_note_names_a_registry_id_and_a_known_docs_section():
    for gb_id, note in registry.course_notes().items():
        newer = note.since and torch_support.torch_before(note.since)  # declared newer than this torch
        assert registry.gb_type_for(gb_id) or newer, f"{gb_id} is not in torch's registry"
        assert note.chapter or note.docs, f"{gb_id} has neither a chapter nor a docs section"
        assert not note.docs or note.docs in registry.DOCS_SECTIONS, f"{gb_id}: unknown docs section {note.docs}"
        assert not note.owner or note.owner in registry.OWNERS
    assert registry.course_note("GB0007").chapter == "untraceable-calls"


@needs_ids("GB7000", "GB0206", "GB4347")
def test_a_real_transformers_model_agrees_with_torch_log(tmp_path):
    pytest.importorskip("transformers")
    script = tmp_path / "wav2vec2_train.py"
    script.write_text(textwrap.dedent(WAV2VEC2))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    truth = torch_log(script, env)
    done = gbcheck(env, script, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert id_counts(report) == Counter(truth["ids"]) and report["graphs"] == truth["graphs"]
    assert report["total_breaks"] > 0 and report["explained_breaks"] == report["total_breaks"]
    by_id = {lib["gb_id"]: lib for lib in report["library"] if lib["package"] == "transformers"}
    # The feature encoder's `hidden_states.requires_grad = True`: GB0206 until 2.14, GB8985 on 2.15 (measured).
    requires_grad = by_id["GB0206" if torch_support.torch_before("2.15") else "GB8985"]
    assert "freeze_feature_encoder" in requires_grad["workarounds"][0]
    assert requires_grad["entries"][0]["line"] == line_of(WAV2VEC2, "# entry")
