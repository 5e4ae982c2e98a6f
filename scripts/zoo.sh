#!/usr/bin/env bash
# The main job: set-up, then the example model-zoo snapshot suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY="${PYTHON:-python3}"
"$PY" -m pytest examples "$@"
