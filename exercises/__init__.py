"""The exercise files and their manifest, installed with the checker as the data package `checker.exercises`.

Not imported as code: checker/course/resolver.py finds this folder, and each file is graded by path.
"""
