#!/usr/bin/env bash
# Run the whole GPU level of `lint-h2d verify` in one go (CUDA or ROCm machine):
#   1. the matrix (+ any paths given) with profiler counts, sync-debug mode, CUDA-graph capture
#      and host submission timing -> bench/gpu_verify_<date>.md
#   2. the gpu/rocm-marked tests.
# Usage: scripts/gpu_verify.sh [PATHS...]      (OUT=file.md to choose the table's file)
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-python}"

"$PY" - <<'PY'
import torch, sys
print(f"torch {torch.__version__}, cuda {torch.version.cuda}, hip {torch.version.hip}, "
      f"available {torch.cuda.is_available()}")
sys.exit(0 if torch.cuda.is_available() else 2)
PY

status=0
"$PY" scripts/gpu_verify.py ${OUT:+--out "$OUT"} "$@" || status=$?
"$PY" -m pytest -q -m "gpu or rocm" tests/test_verify_gpu.py -rs || status=$?
exit "$status"
