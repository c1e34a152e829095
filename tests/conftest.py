"""Shared set-up: this process forks graders, so torch must stay single-threaded before any op runs."""

import pytest

import os

from checker.grading import sandbox

sandbox.prepare()
# No warm grader left behind by the many workspaces the tests make: the one test of it turns it on.
os.environ["GBCHECK_WARM_GRADER"] = "0"


@pytest.fixture(scope="session")
def exercises():
    from checker.course.manifest import load_exercises

    return load_exercises()
