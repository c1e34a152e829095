#!/usr/bin/env bash
# Create .venv (if missing) and install the course with the pinned CPU torch the tests expect.
# Safe to run again: pip skips what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch is pinned to the CPU wheel the book's outputs were recorded with; an unpinned torch pulls a
# multi-gigabyte CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[test,book]"
if ! command -v chromium >/dev/null 2>&1; then
  # The browser test drives Debian's chromium; playwright cannot download its own browser offline.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    echo "note: install Debian's chromium (apt-get install chromium) for the browser test" >&2
  fi
fi
