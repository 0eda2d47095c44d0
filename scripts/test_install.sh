#!/usr/bin/env bash
# Installs a built Topograph into a fresh prefix, then configures, builds and runs examples/custom_topology
# against that prefix alone: what a project of its own does with find_package(Topograph).
#   scripts/test_install.sh [BUILD_DIR [WORK_DIR [CMAKE_ARGS...]]]
# BUILD_DIR defaults to build/ (built already), WORK_DIR to BUILD_DIR/test_install (emptied first); CMAKE_ARGS
# go to the example's configure (ctest passes the build's compiler). ctest runs this as the test `install`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${2:-$build/test_install}
shift $(( $# < 2 ? $# : 2 ))

rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix"
cmake -S "$root/examples/custom_topology" -B "$work/example" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "$@"
# find_package must have taken the package just installed, not one from elsewhere on the machine.
found=$(sed -n 's/^Topograph_DIR:PATH=//p' "$work/example/CMakeCache.txt")
if [ "$found" != "$prefix/lib/cmake/Topograph" ]; then
  echo "test_install: find_package(Topograph) found '$found', not the package installed in $prefix" >&2
  exit 1
fi
cmake --build "$work/example" -j "$(nproc)"
"$work/example/custom_topology"
