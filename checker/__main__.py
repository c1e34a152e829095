"""`python -m checker` is `gbcheck`."""

from checker.cli import console

console()
