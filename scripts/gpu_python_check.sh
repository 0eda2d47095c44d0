#!/usr/bin/env bash
# The Python package on a CUDA device: builds the binding there against that machine's Python and torch (any
# torch from 2.1 on: tensors cross by DLPack, so nothing is tied to the builder's torch), links the core's
# CUDA build, then runs python/tests/test_cuda.py (every op, the encoders and an Adam step on CUDA against
# the CPU) and the whole pytest suite.
# Usage: scripts/gpu_python_check.sh PREFIX NANOBIND_CMAKE_DIR OUT_DIR [SYSROOT]
#   PREFIX: `cmake --install` of a -DTOPO_CUDA=ON build (for a machine other than the builder:
#   -DTOPO_NATIVE=OFF, -DCMAKE_CUDA_ARCHITECTURES naming its GPU, -DTOPO_MPI=OFF);
#   NANOBIND_CMAKE_DIR: nanobind's cmake/ (from a pip-installed nanobind);
#   SYSROOT (optional): a tree mirrored into / first (files the device already has are kept), for a device
#   that lacks the headers and libraries the build used (fmt, nlohmann_json, the OpenMP OpenBLAS at the paths
#   TopographConfig.cmake names; scripts/gpu_bundle.sh packs one). The headers there also go first on the
#   include path: the binding must see the versions the core was built with.
# PYTHON_ALL=1 also runs the whole pytest suite there (the device's torch against ours); its data-set tests
# fail unless ../shared/data travelled beside the checkout.
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=$(realpath "$1")
nanobind=$(realpath "$2")
out=$(realpath "$3")
sysroot=${4:+$(realpath "$4")}
mkdir -p "$out"
flags=""
if [ -n "$sysroot" ]; then
  cp -rn "$sysroot"/. /
  flags="-isystem $sysroot/usr/include"
fi
py=$(command -v python3)
build=$(mktemp -d)
pkg=$(mktemp -d)
start=$(date +%s)
cmake -S python -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$py" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_PREFIX_PATH="$prefix" -Dnanobind_DIR="$nanobind" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "extension built in $(( $(date +%s) - start )) s"
cp -r python/topograph "$pkg/" && cp "$build"/_C*.so "$pkg/topograph/"
PYTHONPATH="$pkg" "$py" -c "import topograph, torch; print('topograph CUDA', topograph.built_with_cuda, '| torch', \
torch.__version__, '| GPU', torch.cuda.get_device_name() if torch.cuda.is_available() else None)"
failed=0
cd python/tests
PYTHONPATH="$pkg" timeout 300 "$py" -m pytest -q -p no:cacheprovider test_cuda.py > "$out/pytest_cuda.log" 2>&1 || failed=$((failed + 1))
tail -5 "$out/pytest_cuda.log"
if [ "${PYTHON_ALL:-0}" = 1 ]; then
  PYTHONPATH="$pkg" timeout 300 "$py" -m pytest -q -p no:cacheprovider . --ignore=test_cuda.py > "$out/pytest_all.log" 2>&1 || failed=$((failed + 1))
  tail -3 "$out/pytest_all.log"
fi
exit "$failed"
