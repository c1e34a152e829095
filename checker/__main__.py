"""`python -m checker` is `gbcheck`."""

from checker.cli import main

raise SystemExit(main())
