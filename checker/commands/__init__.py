"""The verbs of `gbcheck`, one module per audience; `checker.cli` parses and calls them."""
