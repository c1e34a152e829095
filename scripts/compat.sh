#!/usr/bin/env bash
# Check the course on other torch releases:  scripts/compat.sh VERSION...   (e.g. 2.8.0 2.10.0 2.15.0)
#
# For each release: a throwaway venv outside the project ($COMPAT_VENVS/VERSION, default /tmp/compat-venvs),
# torch from the package registry (PIP_CONFIG_FILE=/dev/null: this machine's pip configuration caps torch),
# the course installed editable, then `gbcheck verify` and the checker's tests. The book's tests are left
# out: its stored outputs are torch 2.13.0's; so is the installed-wheel test, which builds its own venv
# with the pinned torch. Prints one line per release at the end, and writes the logs
# to $COMPAT_LOGS (default /tmp/compat-logs). A venv is deleted after its run (each is about 5 GB) unless
# KEEP_VENVS=1; one that already holds that torch is reused.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venvs="${COMPAT_VENVS:-/tmp/compat-venvs}"
logs="${COMPAT_LOGS:-/tmp/compat-logs}"
if [ $# -eq 0 ]; then
  echo "usage: scripts/compat.sh VERSION...   (torch releases, e.g. 2.10.0 2.15.0)" >&2
  exit 2
fi
mkdir -p "$venvs" "$logs"
summary=()

for version in "$@"; do
  venv="$venvs/$version"
  log="$logs/$version"
  started=$SECONDS
  if [ -x "$venv/bin/python" ] && [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null | cut -d+ -f1)" = "$version" ]; then
    install="reused"
  else
    rm -rf "$venv"
    if ! { python3 -m venv "$venv" &&
           PIP_CONFIG_FILE=/dev/null "$venv/bin/python" -m pip install -q --no-cache-dir "torch==$version" numpy pytest \
             "transformers>=5.18,<5.19"; } \
         > "$log-install.log" 2>&1; then
      summary+=("torch $version  install failed (see $log-install.log)")
      rm -rf "$venv"
      continue
    fi
    install="$((SECONDS - started)) s"
  fi
  # --no-deps: the course's own torch range must not make pip replace the torch under test.
  "$venv/bin/python" -m pip install -q --no-deps -e "$root" >> "$log-install.log" 2>&1

  started=$SECONDS
  (cd "$root" && "$venv/bin/gbcheck" verify) > "$log-verify.log" 2> "$log-verify.err"
  verify_status=$?
  verify_seconds=$((SECONDS - started))
  verify="$(grep -Eo '[0-9]+/[0-9]+ exercises hold the invariant' "$log-verify.log" | sed 's/ exercises hold the invariant/ hold/')"
  skipped="$(grep -c ' skip: ' "$log-verify.log")"
  [ "$skipped" -gt 0 ] && verify="$verify ($skipped skipped as declared)"
  [ -z "$verify" ] && verify="refused: $(head -c 300 "$log-verify.err" | head -1)"
  [ "$verify_status" -ne 0 ] && verify="$verify, exit $verify_status"
  noise="$(wc -l < "$log-verify.err")"
  stderr=$([ "$noise" -eq 0 ] && echo "clean" || echo "$noise lines")

  started=$SECONDS
  (cd "$root" && "$venv/bin/python" -m pytest tests -q -p no:nbval -o addopts= -o cache_dir="$log-pytest-cache" \
     --ignore-glob='tests/test_book_*' --ignore=tests/test_installed.py) > "$log-tests.log" 2>&1
  tests_seconds=$((SECONDS - started))
  tests="$(tail -1 "$log-tests.log" | sed -E 's/^=+ //; s/ in [0-9.]+s.*//')"

  summary+=("torch $version | verify: $verify | stderr: $stderr | tests: $tests | install $install, verify ${verify_seconds} s, tests ${tests_seconds} s")
  echo "${summary[-1]}" >&2
  [ "${KEEP_VENVS:-0}" = 1 ] || rm -rf "$venv"
done

printf '%s\n' "${summary[@]}"
