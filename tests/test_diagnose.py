"""`gbcheck diagnose` on code nobody wrote for the course: a ResNet block and a training loop."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checker.diagnose.run import diagnose_target
from checker.dynamo import registry

REPO = Path(__file__).resolve().parent.parent  # the clone these tests run in

# A logger call is GB0291 from torch 2.10 on; before, an untyped break with no registry id.
LOGGER_BREAK = "GB0291" if registry.has_gb_id("GB0291") else None

RESNET = '''
import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        if out.mean() > 0.5:  # planted: data-dependent branch
            out = out * 0.5
        out = self.bn2(self.conv2(out))
        print("block output norm", out.norm())  # planted: print
        return torch.relu(out + x)
'''

TRAIN = '''
import argparse
import logging

import torch
from torch import nn

log = logging.getLogger("train")
steps = argparse.ArgumentParser()
steps.add_argument("--steps", type=int, default=5)
steps = steps.parse_args().steps

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(x, y):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    accuracy = (logits.argmax(-1) == y).float().mean().item()  # planted: .item() metric
    log.info("loss %.3f accuracy %.2f", loss, accuracy)  # planted: logging
    return loss


compiled_step = torch.compile(train_step)
for step in range(steps):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = compiled_step(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("trained", steps, "steps")
'''


def line_of(source, marker):
    return next(number for number, text in enumerate(source.splitlines(), start=1) if marker in text)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "resnet.py").write_text(RESNET)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def test_resnet_block_breaks_are_found_at_their_lines(project):
    result = diagnose_target(f"{project / 'resnet.py'}:BasicBlock", init="8", args="torch.randn(2, 8, 16, 16)")
    assert result.error == ""
    found = {group.gb_id: group for group in result.groups}
    assert set(found) == {"GB0170", "GB0059"}
    assert found["GB0170"].locations[0]["line"] == line_of(RESNET, "data-dependent branch")
    assert found["GB0059"].locations[0]["line"] == line_of(RESNET, "planted: print")
    assert found["GB0170"].chapter == "data-dependent" and found["GB0059"].chapter == "printing-logging"
    assert result.graphs >= 2 and result.ops > 0


def test_training_loop_script_with_arguments(project):
    result = diagnose_target(str(project / "train.py"), ["--steps", "2"])
    assert result.error == ""
    assert "trained 2 steps" in result.output
    user_groups = [group for group in result.groups if not group.in_library]
    assert [group.gb_id for group in user_groups] == [LOGGER_BREAK, "GB0124"]  # most frequent first
    logging_group, item_group = user_groups
    assert logging_group.locations[0]["line"] == line_of(TRAIN, "planted: logging")
    assert item_group.locations[0]["line"] == line_of(TRAIN, "planted: .item()")
    assert logging_group.count > item_group.count
    assert all(group.in_library for group in result.groups[2:])  # echoes inside logging come last
    assert "capture_scalar_outputs" in item_group.fixes[0]


def test_cli_json_and_html_report(project):
    html_path = project / "report.html"
    done = subprocess.run([sys.executable, "-m", "checker", "diagnose", str(project / "train.py"), "--json",
                           "--html", str(html_path), "--", "--steps", "1"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["groups"][0]["gb_id"] == LOGGER_BREAK and data["total_breaks"] >= 2
    page = html_path.read_text()
    assert "<script" not in page and "stylesheet" not in page and "src=" not in page  # self-contained
    assert (LOGGER_BREAK or "Unsupported") in page and "GB0124" in page


def test_text_report_and_clear_errors(project):
    done = subprocess.run([sys.executable, "-m", "checker", "diagnose", f"{project / 'resnet.py'}:BasicBlock",
                           "--init", "8", "--args", "torch.randn(2, 8, 16, 16)"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0
    assert "GB0170" in done.stdout and "Read: book/data-dependent.ipynb" in done.stdout
    missing = diagnose_target(str(project / "nowhere.py"))
    assert "no file" in missing.error
    crash = project / "crash.py"
    crash.write_text("import torch\nraise ValueError('broken script')\n")
    assert "broken script" in diagnose_target(str(crash)).error
