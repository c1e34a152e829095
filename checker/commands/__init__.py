"""The verbs of `gbcheck`, one module per audience; `checker.cli` parses and calls them.

A face: it may import every layer below (diagnose, classroom, grading, course, dynamo).
"""
