#!/usr/bin/env bash
# Packs what a lent GPU machine needs to run scripts/gpu_check.sh and scripts/gpu_python_check.sh into one
# archive, so that its minutes go to the checks and not to building: the device's image has CUDA, torch and a
# compiler but none of Debian's fmt, nlohmann_json, oneDNN or OpenMP OpenBLAS, and nothing can be fetched there.
# Usage: scripts/gpu_bundle.sh BUILD_DIR OUT_DIR
#   BUILD_DIR: a CUDA build for the device (-DTOPO_CUDA=ON -DTOPO_NATIVE=OFF -DTOPO_MPI=OFF and
#   -DCMAKE_CUDA_ARCHITECTURES naming its GPU, 90 for an H100 or H200) with topo_test_gpu, topo-bench and
#   topo-train built. Writes OUT_DIR/gpu-bundle.tar.xz holding bin/ (those three), prefix/ (`cmake --install`
#   of the build) and sysroot/ (the shared libraries, headers and CMake packages of the Debian packages below).
# On the device: tar -xJf gpu-bundle.tar.xz -C DIR; cp -rn DIR/sysroot/. / (never over the image's own files);
# ldconfig; then gpu_check.sh DIR/bin ... and gpu_python_check.sh DIR/prefix NANOBIND ... DIR/sysroot.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "$1")
out=$(realpath -m "$2")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out" "$stage/bin"
for exe in topo_test_gpu topo-bench topo-train; do
  [ -x "$build/bin/$exe" ] || { echo "gpu_bundle: $build/bin/$exe is not built" >&2; exit 1; }
  cp "$build/bin/$exe" "$stage/bin/"
done
grep -q '^TOPO_CUDA:STRING=ON' "$build/CMakeCache.txt" || { echo "gpu_bundle: $build is not a -DTOPO_CUDA=ON build" >&2; exit 1; }
cmake --install "$build" --prefix "$stage/prefix" > /dev/null
# Files (and their symlinks) of the packages the binaries and the installed CMake package need, without docs and
# static archives (libopenblas.a alone is 58 MB).
packages="libfmt9 libfmt-dev nlohmann-json3-dev libdnnl2 libdnnl-dev libopenblas0-openmp libopenblas-openmp-dev
  libgfortran5 libquadmath0 ocl-icd-libopencl1"
# shellcheck disable=SC2086
dpkg -L $packages | while read -r f; do
  if [ -f "$f" ] || [ -L "$f" ]; then
    case "$f" in /usr/share/doc/*|/usr/share/lintian/*|*.a) ;; *) echo "${f#/}" ;; esac
  fi
done > "$stage/files.txt"
mkdir -p "$stage/sysroot"
tar -C / -cf - -T "$stage/files.txt" | tar -C "$stage/sysroot" -xf -
tar -C "$stage" -cf - bin prefix sysroot | xz -T0 -6 > "$out/gpu-bundle.tar.xz"
echo "gpu_bundle: $out/gpu-bundle.tar.xz ($(du -h "$out/gpu-bundle.tar.xz" | cut -f1))"
