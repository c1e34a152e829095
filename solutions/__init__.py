"""The reference solutions, installed with the checker as the data package `checker.solutions`.

Not imported as code: checker/course/resolver.py finds this folder, and each file is graded by path.
"""
