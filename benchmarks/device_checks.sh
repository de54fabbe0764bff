#!/usr/bin/env bash
# The GPU checks (issue 33, after issues 10 and 11) in as few device calls as possible (a
# task's device time is 15 minutes in all, starts included, one call at most 10: run
# "tests" and "tree" first). Run from the repository root on the lent machine, through
# the device tool; logs and result tables land in $OUT. All parts run on a CPU-only
# machine too (the GPU rows then read "owed"), which checks the script against the code.
#
#   bash benchmarks/device_checks.sh tests     # gpu-marked and parity tests (~2 min)
#   bash benchmarks/device_checks.sh tree      # bench_tree_gpu.py, small and med variants
#   bash benchmarks/device_checks.sh large     # bench_tree_gpu.py, large variants, 1 repeat
#   bash benchmarks/device_checks.sh gpu       # bench_gpu.py (Philox, sketch, explainer)
#   bash benchmarks/device_checks.sh stage     # keep .device_stage/* in /tmp/stage
#
# The device image has numba, numba-cuda, CuPy, scikit-learn and pytest, not XGBoost.
# XGBoost's CUDA build (its pred_contribs on the GPU is GPUTreeShap, the peer of
# bench_tree_gpu.py) is a 132 MB wheel, over the 64 MiB one call carries. Here:
#   pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --platform manylinux_2_28_x86_64 -d /tmp/whl xgboost==3.2.0
#   split -b 45M /tmp/whl/xgboost-*.whl /tmp/xgb.part.
# then, with each part alone in .device_stage/ (listed in .gitignore), one call each,
# back to back (a machine idle for 30 s is given back and its /tmp with it):
#   run(command="bash benchmarks/device_checks.sh stage", carry=[".device_stage"])
# A later command of this script installs /tmp/stage/xgb.part.* when all parts are there.
# Without the CUDA build, carry the 6 MB CPU-only wheel (xgboost-cpu==3.2.0, downloaded the
# same way) in .device_stage/: any *.whl there or in /tmp/stage is installed first.
set -uo pipefail
OUT=${OUT:-/tmp/device_out}
mkdir -p "$OUT" /tmp/stage
export PYTHONUNBUFFERED=1

if [ "${1:-}" = "stage" ]; then
  cp .device_stage/* /tmp/stage/ && ls -la /tmp/stage
  exit 0
fi

# numba-cuda releases of 2026-11 overload np.row_stack, which NumPy 2.5 removed; the
# registry reports that as "unavailable". Shim it for these runs only (not in skshapley).
mkdir -p /tmp/shim
python3 -c "import numpy; raise SystemExit(hasattr(numpy, 'row_stack'))" && \
  echo "import numpy; numpy.row_stack = numpy.vstack" > /tmp/shim/sitecustomize.py
export PYTHONPATH=/tmp/shim:$(pwd)${PYTHONPATH:+:$PYTHONPATH}

parts=(/tmp/stage/xgb.part.*)
if [ -e "${parts[0]}" ]; then
  cat "${parts[@]}" > /tmp/stage/xgboost-3.2.0-py3-none-manylinux_2_28_x86_64.whl
  rm -f "${parts[@]}"
fi
wheels=$(ls .device_stage/*.whl /tmp/stage/*.whl 2>/dev/null)
if [ -n "$wheels" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site \
    $wheels || exit 1
fi
[ -d /tmp/site ] && export PYTHONPATH=$PYTHONPATH:/tmp/site

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/machine.txt"
python3 -c "from skshapley.backends import available_backends as a; print(a(verbose=True))" \
  | tee -a "$OUT/machine.txt"

case "${1:-tests}" in
  tests)
    python3 -m pytest -p no:cacheprovider -q -m "gpu or not gpu" --no-header -rs \
      tests/kernels tests/tree tests/explain/test_device_path.py 2>&1 | tee "$OUT/tests.log" ;;
  tree)
    python3 benchmarks/bench_tree_gpu.py --variants small,med --output "$OUT/tree_gpu.md" \
      --datasets cal_housing,adult,covtype,categorical 2>&1 | tee "$OUT/tree.log" ;;
  large)
    python3 benchmarks/bench_tree_gpu.py --variants large --repeats 1 \
      --output "$OUT/tree_gpu_large.md" 2>&1 | tee "$OUT/large.log" ;;
  gpu)
    python3 benchmarks/bench_gpu.py --output "$OUT/gpu.md" 2>&1 | tee "$OUT/gpu.log" ;;
  *)
    echo "unknown part ${1}; use tests, tree, large, gpu or stage" >&2; exit 2 ;;
esac
