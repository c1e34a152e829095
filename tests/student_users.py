"""Whether the grader here can run checks as the students' own users (checker/classroom/users.py). As root with a
Python no other user can read (pyenv under /root), it cannot: the class tests then grade as the grader's own user
(`same_user`), and the tests of the per-student users are skipped with this reason."""

import os

from checker.classroom.grade import FIRST_STUDENT_UID
from checker.classroom.users import first_unreadable

SAME_USER = os.geteuid() == 0 and bool(first_unreadable(FIRST_STUDENT_UID))
NO_STUDENT_USERS = "as root here, a student's user cannot read Python: checks cannot run as students' own users"
SAME_USER_OPTION = ["--same-user"] if SAME_USER else []
