#!/usr/bin/env bash
# Set up (scripts/setup.sh), build the book into _build/html, and verify every exercise and solution.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/jupyter-book build book/ -W -n --keep-going
.venv/bin/gbcheck verify
echo "Book: _build/html/index.html    Start the exercises with: .venv/bin/gbcheck"
