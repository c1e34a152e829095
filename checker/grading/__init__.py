"""Deciding a verdict: a learner's file run in sandboxed children, and the grader's own replay of its graphs.

`sandbox` forks isolated, limited children; `trial` is what runs inside one; `tamper` finds what a file
switched off; `replay` rebuilds recorded graphs as data; `audit` computes the reference and replays in the
grader; `strict` turns all of it into named checks; `coverage` proves for `gbcheck verify` that draws reach
every branch; `report` is the verdict's record and its text. It may import `checker.course` and
`checker.dynamo`, nothing above it.
"""
