#!/usr/bin/env bash
# The test suite under clang 14's sanitizers (CPU backend; the packages come from scripts/setup.sh).
#   scripts/sanitize.sh                   ASan + UBSan: every test executable, built into build-asan/ (the
#                                         fuzzers share that build: fuzz/run.sh), run by ctest. Any report
#                                         aborts the test that triggered it; leaks are reports too.
#   scripts/sanitize.sh thread            TSan over the OpenMP kernels: tests/kernels built into build-tsan/
#                                         with LLVM's libomp, run on 4 threads with Archer (libomp's TSan
#                                         annotations for OpenMP's barriers and tasks, so the runtime's own
#                                         uninstrumented synchronisation is not reported as races).
#   scripts/sanitize.sh --configure-only  configure build-asan/ and stop (fuzz/run.sh).
# Extra arguments after the mode go to ctest (e.g. -R apps).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-address}
[ $# -gt 0 ] && shift

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
configure() {  # configure DIR SANITIZERS [more cmake args]
  local dir=$1 sanitizers=$2
  shift 2
  mkdir -p "$dir"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPO_CUDA=OFF \
    -DTOPO_SANITIZE="$sanitizers" "${launcher[@]}" "$@" > "$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; exit 1; }
}

case "$mode" in
  --configure-only)
    configure build-asan address,undefined -DTOPO_FUZZ=ON
    ;;
  address)
    configure build-asan address,undefined -DTOPO_FUZZ=ON
    tests=(topo_test_kernels topo_test_graph topo_test_nn topo_test_models topo_test_apps topo_test_bench topo_train topo_eval)
    cmake --build build-asan -j "$(nproc)" --target "${tests[@]}"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ctest --test-dir build-asan --output-on-failure -LE gpu "$@"
    ;;
  thread)
    configure build-tsan thread
    cmake --build build-tsan -j "$(nproc)" --target topo_test_kernels
    # libomp's threads and barriers are not instrumented: Archer tells TSan what they order.
    export OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so ARCHER_OPTIONS=verbose=1
    export TSAN_OPTIONS=halt_on_error=1:ignore_noninstrumented_modules=1:second_deadlock_stack=1
    export OMP_NUM_THREADS=4 OPENBLAS_NUM_THREADS=1
    # clang 14's TSan cannot map its shadow under the wide mmap randomisation of newer kernels.
    setarch "$(uname -m)" -R build-tsan/bin/topo_test_kernels "$@"
    ;;
  *)
    echo "usage: scripts/sanitize.sh [address|thread|--configure-only] [ctest or doctest arguments]" >&2
    exit 2
    ;;
esac
