"""The course as data: which course is in use, its exercises, the inputs they are graded on, the learner's state.

`resolver` finds the course (a workspace, a clone, or the installed package) and where its chapters are
read; `manifest` loads `exercises.toml` into typed records; `values` turns tensor specs into tensors;
`draws` makes the fresh inputs and call orders of a check; `workspace` makes and resets a learner's
workspace; `progress` remembers what passed, `history` every version that was checked. It may import `checker.dynamo` (to tell which variant of an
exercise the installed torch needs), nothing above it.
"""
