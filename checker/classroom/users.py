"""Whether a student's own user can run a check: asked before a grader running as root grades anyone.

As root (a workshop's container, Gradescope's), each student's checks run as a uid of that student's own, which
can read nothing of the grades, the grader or the other students. That uid must still read Python, torch and the
course: a Python installed under /root (pyenv's default for root) is closed to every other user, and a check run as
a student's uid then fails the first import Python has not made yet (`torch.utils.benchmark` imports `timeit`,
which imports `getopt`: "No module named 'getopt'"), whatever the student wrote. So the grader asks a process of
such a uid to read them first, and refuses to grade when it cannot, rather than fail correct files.
"""

from __future__ import annotations

import os
import sys
import sysconfig

import torch

from checker.course.manifest import load_exercises


class StudentUsersUnavailable(RuntimeError):
    """A student's uid cannot read what a check needs: grading as root would fail correct files."""


def needed_paths() -> list[str]:
    """What a check reads: Python's standard library (a folder and a module in it), its compiled extensions,
    torch's package, the checker's, and the shipped exercise files (whose imports the gate allows)."""
    stdlib = sysconfig.get_paths()["stdlib"]
    shipped = str(load_exercises()[0].original_path)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checker's own folder
    return [stdlib, os.__file__, os.path.join(stdlib, "lib-dynload"), os.path.dirname(torch.__file__),
            torch.__file__, package, os.path.join(package, "__init__.py"), os.path.dirname(shipped), shipped]


def first_unreadable(uid: int, paths: list[str] | None = None) -> str:
    """The first of `paths` (default `needed_paths()`) that a process of `uid` cannot read; "" when it reads them
    all. Asked of a real process of that uid (forked, its groups dropped as the sandbox drops them), not worked out
    from permission bits: ACLs, mounts and Landlock answer for themselves. Only root can ask it."""
    paths = [p for p in (paths or needed_paths()) if os.path.exists(p)]
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the asking process: never returns
        status = 0
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for path in paths:
                try:
                    if os.path.isdir(path):
                        os.listdir(path)
                    else:
                        with open(path, "rb") as file:
                            file.read(1)
                except OSError:
                    os.write(write_fd, path.encode())
                    break
        except BaseException:  # noqa: BLE001 - a process that could not even become `uid` says so
            os.write(write_fd, b"(a process of that user could not start)")
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as stream:
        answer = stream.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return answer


def require_student_users(uid: int, option: str) -> None:
    """Raise StudentUsersUnavailable, with what to do, when a process of `uid` cannot read what a check needs.
    `option`: the command-line option that grades as the grader's own user instead."""
    blocked = first_unreadable(uid)
    if blocked:
        raise StudentUsersUnavailable(
            f"as root, each student's checks run as a user of their own, and such a user cannot read {blocked} "
            f"(Python here is {sys.base_prefix}): every check would fail on its first new import. Install Python "
            f"and the course where every user can read them (/usr, /opt, a virtual environment outside /root), "
            f"or run the grader as a regular user. {option} grades as the grader's own user instead: a student's "
            "checks can then read the other students' files and the grades, so keep it for a trial run.")
