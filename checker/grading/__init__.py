"""Deciding a verdict: a learner's file run in sandboxed children, and the grader's own replay of its graphs.

`sandbox` forks isolated, limited children (`limits` says how far, `confine` keeps their writes in a
scratch folder, `strays` kills what a check leaves behind); `trial` is what runs inside one, and `observe` watches there
what the file does besides returning values; `tamper` finds what a file switched off; `replay` rebuilds
recorded graphs as data, calling only what `allowed` resolves; `audit` computes the reference and replays
in the grader; `strict` turns all of it into named checks, with `contracts` for what a task asks the code
to keep doing, and `advice` for the hint that fits the failure; `plain` is the data that crosses from
child to grader; `warmup` warms a grader that forks many checks; `coverage` and `mutation` serve
`gbcheck verify` (fresh draws reach every branch; no statement of a solution goes ungraded); `report` is
the verdict's record and its text. It may import `checker.course` and `checker.dynamo`, nothing above it.
"""
