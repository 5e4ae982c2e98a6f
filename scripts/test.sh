#!/usr/bin/env bash
# The test command: set-up, lint, types, then the test suite on both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY="${PYTHON:-python3}"
"$PY" -m ruff check pytest_tlgraph tests benchmarks scripts examples
"$PY" -m mypy
"$PY" -m pytest -n 2 -p no:randomly tests
