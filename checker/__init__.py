"""The course's checker: `gbcheck`, the notebook `check(...)`, class grading and `gbcheck diagnose`.

Layers, each importing only from the layers below it (tests/test_layout.py holds this):

  faces         cli, commands/, notebook, service, display: parse, call, show; decide nothing
  diagnose/     the learner's own code        classroom/  a class's submissions, Gradescope
  grading/      deciding a verdict: sandbox, trials, tamper check, replay, audit, strict check, report
  course/       the course as data: where it lives, the manifest, inputs and draws, workspace, progress
  dynamo/       what torch does: the break recorder, per-release differences, the GB notes

`diagnose/` and `classroom/` sit side by side and do not import each other. The book and readers use one
module, `checker.notebook` (`check`, `diagnose`, `course_display`).
"""
