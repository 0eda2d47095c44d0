#!/usr/bin/env bash
# The whole test suite from a fresh machine: set up and build (scripts/setup.sh), then every ctest test,
# then the Python package's pytest suite (python/tests, in build/python-venv; skipped with TOPO_PYTHON=OFF).
# Tests labelled `gpu` are reported as skipped where no CUDA device exists.
# The test `install` (label `install`) installs the build into build/test_install/prefix and builds and runs
# examples/custom_topology against it (scripts/test_install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
if [ "${TOPO_PYTHON:-ON}" != "OFF" ]; then
  build/python-venv/bin/pytest python/tests -q -p no:cacheprovider
fi
