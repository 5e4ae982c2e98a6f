#!/usr/bin/env bash
# Installs everything the project needs, from the project's own files.
# torch is pinned here (and only here) to the CPU build 2.13.0 so pip never pulls a
# multi-gigabyte CUDA build; pyproject keeps the wide range torch>=2.1.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
# The test extra through the pinned constraints: the same pytest, syrupy, transformers,
# hypothesis ... on every machine (pyproject keeps the user-facing ranges wide).
"$PY" -m pip install --quiet --disable-pip-version-check -c constraints/test.txt -e ".[test]"
# The system renderer (--tlgraph-renderer=system) needs Graphviz's dot.
if ! command -v dot >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq graphviz >/dev/null) \
      || echo "warning: could not install Graphviz; system-renderer tests will fail" >&2
  fi
fi
# The report test opens report.html in headless Chromium (Debian's package).
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
      || echo "warning: could not install Chromium; the browser test of report.html will fail" >&2
  fi
fi
