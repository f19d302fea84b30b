#!/usr/bin/env bash
# Release check: build the sdist and the wheel, `twine check` them, install the wheel alone in a
# fresh venv (what a pre-commit `language: python` hook does once the package is published)
# and run `lint-h2d check examples/` from it: it must find the examples' problems (exit 1).
# Usage: scripts/package_check.sh [WORKDIR]   (default: a new temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
python -m pip install -q build twine
python -m build --sdist --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
python -m twine check --strict "$work"/dist/*
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$work"/dist/*.whl
rc=0
"$work/venv/bin/lint-h2d" check --no-cache --output-format concise examples/ >"$work/check.out" 2>&1 || rc=$?
cat "$work/check.out"
if [ "$rc" -ne 1 ] || ! grep -q "H2D001" "$work/check.out"; then
  echo "package-check: the installed wheel did not report the examples' findings (exit $rc)" >&2
  exit 1
fi
# The installed wheel needs only libcst: torch and pygls are extras.
if "$work/venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "package-check: torch was installed by the bare wheel" >&2
  exit 1
fi
echo "package-check: sdist and wheel built, twine check passed, the wheel's lint-h2d found the examples' problems"
