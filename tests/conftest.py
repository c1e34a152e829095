"""Shared set-up: this process forks graders, so torch must stay single-threaded before any op runs."""

import pytest

from checker.grading import sandbox

sandbox.prepare()


@pytest.fixture(scope="session")
def exercises():
    from checker.course.manifest import load_exercises

    return load_exercises()
