#!/usr/bin/env bash
# The Python package (python/, topograph for PyTorch) over a built core, for the tests and for trying it:
#   scripts/setup_python.sh [BUILD_DIR]      (default build/, configured and built by scripts/setup.sh)
# 1. a venv at BUILD_DIR/python-venv (Debian's python3 with python3-venv / python3-dev) with
#    python/requirements-dev.txt from PyPI: torch (a CUDA build, ~2.5 GB of wheels, ~5 GB installed),
#    numpy, pytest, scikit-build-core, nanobind; skipped while the requirements are unchanged;
# 2. the core installed into BUILD_DIR/python-prefix (cmake --install: only changed files are copied);
# 3. pip install ./python against that prefix, without build isolation (the venv has the build tools) and
#    with its CMake build kept in BUILD_DIR/python-ext, so a rerun only relinks what changed.
# The extension compiles the binding alone (python/src); the kernels come from the core's build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=$(command -v python3)
venv="$build/python-venv"
prefix="$(pwd)/$build/python-prefix"

if [ ! -x "$venv/bin/python" ]; then
  echo "setup_python: creating $venv ($("$python" --version))"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements-installed"
if ! cmp -s python/requirements-dev.txt "$stamp"; then
  echo "setup_python: installing python/requirements-dev.txt into $venv (torch is ~2.5 GB to download)"
  start=$(date +%s)
  "$venv/bin/pip" install --disable-pip-version-check -q -r python/requirements-dev.txt
  cp python/requirements-dev.txt "$stamp"
  echo "setup_python: requirements installed in $(( $(date +%s) - start )) s"
fi

cmake --install "$build" --prefix "$prefix" > "$build/python-prefix.log"
start=$(date +%s)
CMAKE_PREFIX_PATH="$prefix" "$venv/bin/pip" install --disable-pip-version-check -q --no-build-isolation --no-deps \
  --config-settings=build-dir="$(pwd)/$build/python-ext" ./python
echo "setup_python: topograph built and installed into $venv in $(( $(date +%s) - start )) s"
