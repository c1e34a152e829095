"""`gbcheck diagnose`: every graph break in the learner's own code, grouped, with what to read and do.

`run` runs a script or a callable in a sandboxed child and collects its breaks; `groups` groups them by
id and, inside installed packages, by library (with `libraries.toml`'s advice); `repro` writes a script
that rebuilds a library's break; `render` shows a run as text or HTML; `compare` matches two runs. It may
import `checker.grading`, `checker.course` and `checker.dynamo`; not `checker.classroom`, nor the faces.
"""
