"""The verbs of `gbcheck`, one module per audience; `checker.cli` parses and calls them.

`warm` keeps a grader up for a workspace between checks (it talks to `checker.service`).

A face: it may import every layer below (diagnose, classroom, grading, course, dynamo).
"""
