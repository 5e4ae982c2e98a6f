#!/usr/bin/env bash
# The developer loop: lint, then the unit tests and the plugin's lifecycle through
# pytester on both cores. No set-up (run scripts/test.sh once first) and no wheel
# build, Hugging Face corpus or browser: those run in the full suite, scripts/test.sh,
# which is the CI command.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -m ruff check pytest_tlgraph tests benchmarks scripts examples
"$PY" -m pytest -n 2 -p no:randomly -q tests/unit \
    tests/integration/test_lifecycle.py tests/integration/test_failure_report.py "$@"
