"""Shared set-up: this process forks graders, so torch must stay single-threaded before any op runs."""

import pytest

import os

from checker.grading import code_guard, sandbox

sandbox.prepare()
# No warm grader left behind by the many workspaces the tests make: the one test of it turns it on.
os.environ["GBCHECK_WARM_GRADER"] = "0"


@pytest.fixture(scope="session")
def exercises():
    from checker.course.manifest import load_exercises

    return load_exercises()


@pytest.fixture
def without_code_guard(monkeypatch):
    """The checked process's hook (code_guard.py) refuses a hostile file before it acts: out of the way for the
    tests of the layers behind it (the tamper check, the replay, the recompilation check), which must hold alone."""
    monkeypatch.setattr(code_guard, "install", lambda shipped: None)
