"""`gbcheck diagnose` on what real timm and torchvision models showed (issue 20): where a library's break is
placed, which of the user's lines led there, which repro can be written, whose advice is shown.

Each library is a real package in a folder named site-packages, as pip lays it out, imported by a user's
script that diagnose runs in a subprocess. The timm here is a small stand-in with timm's own entry point
(`timm.models._factory.create_model`), which libraries.toml names; a test with the real timm and
torchvision runs where they are installed.
"""

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from checker.diagnose import groups
from checker.dynamo import engine, registry

REPO = Path(__file__).resolve().parent.parent


def install(site: Path, name: str, files: dict[str, str], version: str = "1.0") -> None:
    """A package as pip lays it out: its files and a dist-info naming it."""
    for relative, text in files.items():
        path = site / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(f"{name}\n")


def diagnose(site: Path | None, script: Path, *options: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)] if site else [str(REPO)])}
    return subprocess.run([sys.executable, "-m", "checker", "diagnose", str(script), *options], cwd=script.parent,
                          env=env, capture_output=True, text=True, timeout=300)


def line_of(source: str, marker: str) -> int:
    return next(number for number, text in enumerate(textwrap.dedent(source).splitlines(), 1) if marker in text)


def script(folder: Path, source: str) -> Path:
    path = folder / "user.py"
    path.write_text(textwrap.dedent(source))
    return path


BESIDE_TORCH = '''
import torch

import torchfake


def step(x):
    return torchfake.doubled(x) + 1  # entry


out = torch.compile(step)(torch.randn(4, 8))
'''


def test_a_package_beside_torch_whose_name_starts_like_torchs_is_a_library(tmp_path):
    """torchvision lies beside torch in site-packages: a break inside it (NMS) is the library's, at its line."""
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "torch").symlink_to(Path(torch.__file__).parent)  # so that torchfake lies beside torch's own folder
    install(site, "torchfake", {"__init__.py": '''
        import torch


        def doubled(x):
            torch._dynamo.graph_break()  # inside the package
            return x * 2
        '''})
    done = diagnose(site, script(tmp_path, BESIDE_TORCH), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (group,) = report["groups"]
    assert {Path(loc["file"]).parent.name for loc in group["locations"]} == {"torchfake"}
    (library,) = report["library"]
    assert library["package"] == "torchfake" and library["places"] == ["torchfake/__init__.py:6"]
    assert [entry["line"] for entry in library["entries"]] == [line_of(BESIDE_TORCH, "# entry")]


def test_a_path_beside_torchs_folder_is_outside_torch():
    beside = os.path.dirname(torch.__file__) + "vision" + os.sep + "ops" + os.sep + "boxes.py"
    assert engine.is_user_file(beside)
    assert not engine.is_user_file(os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "rnn.py"))


RESUMED = '''
import torch

import fakelib


class Net(torch.nn.Module):
    def forward(self, x):
        return fakelib.scaled(x) - 1  # entry


out = torch.compile(Net())(torch.randn(4, 8))  # the compiled call
'''

FAKELIB_SCALED = '''
import torch


def scaled(x):
    x = x * 2
    torch._dynamo.graph_break()  # first break
    x = x + 1
    torch._dynamo.graph_break()  # second break, after Dynamo resumed in this function
    return x
'''


def test_entry_after_dynamo_resumes_inside_a_library_is_the_users_forward(tmp_path):
    site = tmp_path / "site-packages"
    install(site, "fakelib", {"__init__.py": FAKELIB_SCALED})
    done = diagnose(site, script(tmp_path, RESUMED), "--json")
    assert done.returncode == 0, done.stderr
    (library,) = json.loads(done.stdout)["library"]
    assert library["places"] == ["fakelib/__init__.py:7", "fakelib/__init__.py:9"]
    assert [entry["line"] for entry in library["entries"]] == [line_of(RESUMED, "# entry")]


def test_no_repro_command_is_offered_where_no_script_can_be_written(tmp_path):
    site = tmp_path / "site-packages"
    install(site, "fakelib", {"__init__.py": FAKELIB_SCALED})
    user = script(tmp_path, RESUMED)  # the compiled object is the user's own Net
    text = diagnose(site, user)
    assert text.returncode == 0, text.stderr
    assert "fakelib 1.0: GB0025" in text.stdout and "Repro:" not in text.stdout
    verbose = diagnose(site, user, "--verbose").stdout
    assert "no repro script: the compiled object is your Net" in verbose and "repro: gbcheck" not in verbose


FAKE_TIMM = {
    "__init__.py": "from timm.models import create_model\n",
    "models/__init__.py": "from timm.models._factory import create_model\n",
    "models/_factory.py": '''
        import torch
        from torch import nn


        class Tower(nn.Module):
            def __init__(self, width=256, depth=12):
                super().__init__()
                self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                torch._dynamo.graph_break()  # the library's break
                return x


        def create_model(model_name, pretrained=False, **kwargs):
            return Tower(**kwargs)  # pretrained=True would download weights
        ''',
}

TIMM_USER = '''
import torch

import timm

model = timm.create_model("tower", pretrained=True, width=8, depth=2)
out = torch.compile(model)(torch.randn(3, 8))
'''


def test_repro_rebuilds_a_timm_model_with_the_arguments_it_was_built_with(tmp_path):
    site = tmp_path / "site-packages"
    install(site, "timm", FAKE_TIMM, version="1.0.31")
    user = script(tmp_path, TIMM_USER)
    done = diagnose(site, user, "--repro", str(tmp_path / "repro"))
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "repro" / "repro_timm_gb0025.py").read_text()
    # timm's builder with the user's options; pretrained=False: random weights, no download
    assert "model = create_model(model_name='tower', pretrained=False, width=8, depth=2)" in written
    env = {**os.environ, "PYTHONPATH": str(site)}
    ran = subprocess.run([sys.executable, "-c", written.replace('compiled(*args, **kwargs)',
                          'compiled(*args, **kwargs)\nprint("layers", len(model.layers), model.layers[0])')],
                         env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert "layers 2 Linear(in_features=8, out_features=8, bias=True)" in ran.stdout
    # The repro shows the break in torch's own log (torch 2.8's line names no GB id).
    assert "graph break in user code" in ran.stderr.lower()


LIBRARY_CLASS = '''
import torch

import fakelib

model = fakelib.Tower({arguments})
out = torch.compile(model)(torch.randn(3, {width}))
'''


@pytest.mark.parametrize("arguments, width, rebuilt", [("", 16, True), ("width=4", 4, False)])
def test_a_class_is_rebuilt_with_its_defaults_only_where_they_make_the_same_model(tmp_path, arguments, width, rebuilt):
    site = tmp_path / "site-packages"
    install(site, "fakelib", {"__init__.py": FAKE_TIMM["models/_factory.py"].replace("width=256", "width=16")})
    user = script(tmp_path, LIBRARY_CLASS.format(arguments=arguments, width=width))
    done = diagnose(site, user, "--verbose", "--repro", str(tmp_path / "repro"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "repro" / "repro_fakelib_gb0025.py").exists() == rebuilt
    assert ("built with arguments diagnose did not see" in done.stdout) != rebuilt


def test_a_library_specific_workaround_is_shown_for_its_library_only():
    known = [package for package in groups.library_advice() if package != "any"]
    for gb_id, note in registry.course_notes().items():
        named = [package for package in known if package in note.in_library.lower()]
        assert not named, f"{gb_id}: the note's in_library names {named}; such advice belongs in libraries.toml"
    _, torchvision = groups._advice("torchvision", "GB4347")
    _, transformers = groups._advice("transformers", "GB4347")
    assert not any("output_capturing" in way or "transformers" in way for way in torchvision)
    assert any("output_capturing" in way for way in transformers)


def test_real_timm_and_torchvision_models_rebuild_from_their_builders(tmp_path):
    pytest.importorskip("timm")
    pytest.importorskip("torchvision")
    user = script(tmp_path, '''
        import torch
        import timm
        import torchvision

        lstm = timm.create_model("sequencer2d_s", layers=(1, 1, 1), patch_sizes=(7, 2, 1), embed_dims=(32, 32, 32),
                                 hidden_sizes=(16, 16, 16), mlp_ratios=(2, 2, 2)).eval()
        torch.compile(lstm)(torch.randn(1, 3, 64, 64))
        detector = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, min_size=64, max_size=64).eval()
        torch.compile(detector)([torch.rand(3, 64, 64)])
        ''')
    done = diagnose(None, user, "--repro", str(tmp_path / "repro"))
    assert done.returncode == 0, done.stderr
    written = {path.name: path.read_text() for path in (tmp_path / "repro").glob("*.py")}
    sequencer = written["repro_timm_gb0014.py"]  # the builder's call, one argument a line
    assert "model = create_model(\n    model_name='sequencer2d_s',\n    layers=(1, 1, 1),\n" in sequencer
    detection = [text for name, text in written.items() if name.startswith("repro_torchvision_")]
    assert detection and all("model = fasterrcnn_mobilenet_v3_large_320_fpn(\n    weights=None,\n    weights_backbone=None,"
                             in text and "    min_size=64,\n" in text for text in detection)


# Breaks that timm and torchvision models hit (benchmarks/real_models.py), each in a few lines (torch 2.13).
def _random_area(x):
    return x * (random.uniform(0.02, 0.33) * 1024)  # timm's RandomErasing: GB0213


def _comprehension_in_a_skipped_function(x, sizes):
    for size in sizes:
        print("size", size)  # a break in a loop: Dynamo skips the function (GB7000) ...
    return x, [torch.full((size,), level) for level, size in enumerate(sizes)]  # ... and meets the listcomp: GB4347


_lstm = torch.nn.LSTM(4, 4)


def _recurrent(x):
    return _lstm(x)[0]  # timm's sequencer: GB0014


@pytest.mark.parametrize("fn, args, gb_id", [
    (_random_area, (torch.ones(2, 3),), "GB0213"),
    (_comprehension_in_a_skipped_function, (torch.ones(3), [2, 3]), "GB4347"),
    (_recurrent, (torch.randn(2, 3, 4),), "GB0014"),
])
def test_ids_timm_and_torchvision_models_hit_have_a_note_with_a_chapter(fn, args, gb_id):
    if not registry.has_gb_id(gb_id):
        pytest.skip(f"this torch's registry has no {gb_id}")
    found = {gb.gb_id for gb in engine.diagnose(fn, args).graph_breaks}
    # torch 2.13 reports `gb_id`; another release may file the same break under another id, which then
    # needs such a note as much.
    for seen in sorted(found - {"GB7000"}) if gb_id not in found else [gb_id]:
        note = registry.course_note(seen)
        assert note and note.meaning and note.fix and note.chapter, f"{seen} has no note with a chapter"
