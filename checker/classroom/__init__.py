"""Grading a class: every student's files through the strict check, and the Gradescope autograder.

`grade` grades a folder of submissions in parallel, resumably, into `grades.csv`, `results.json` and
`feedback.md` per student; `gradescope` builds the autograder zip and grades one submission inside it.
It may import `checker.grading`, `checker.course` and `checker.dynamo`; not `checker.diagnose`, nor the
faces.
"""
