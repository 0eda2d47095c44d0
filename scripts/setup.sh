#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for Topograph and builds it into build/.
#   scripts/setup.sh            install missing packages (as root), configure, build
#   TOPO_CUDA=OFF scripts/setup.sh    build without the CUDA backend
#   TOPO_PYTHON=OFF scripts/setup.sh  skip the Python package (scripts/setup_python.sh: a venv in
#                                     build/python-venv with torch from PyPI, ~2.5 GB, and python/ built into it)
# Idempotent: packages already present are not reinstalled; apt-get update runs at most once.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config doctest-dev libfmt-dev nlohmann-json3-dev libcli11-dev libopenblas-dev libopenblas-openmp-dev
          libdnnl-dev ocl-icd-opencl-dev  # oneDNN GEMMs (TOPO_ONEDNN); its CMake package requires OpenCL (a recommend)
          zlib1g-dev  # gzipped word vectors (apps/text/word_vectors.cpp)
          libopenmpi-dev openmpi-bin  # data-parallel training: mpirun -np N topo-train (dist/, TOPO_MPI)
          # the reliability builds (scripts/sanitize.sh, fuzz/run.sh): clang's sanitizers, libFuzzer, libomp + Archer
          clang-14 libclang-rt-14-dev libomp-14-dev ninja-build
          # vectors pre-trained by the project: People's Daily characters (scripts/zh_vectors.sh), MTL-16's reviews
          # (scripts/mtl16_vectors.sh)
          fasttext
          python3-venv python3-dev)  # the Python package (python/): its venv and the extension's headers
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: packages missing (${missing[*]}) and not running as root; run: sudo $0" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# nvcc lives outside PATH in non-login shells on these machines.
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DTOPO_CUDA="${TOPO_CUDA:-AUTO}" ${CMAKE_ARGS:-}
cmake --build build -j "$jobs"

if [ "${TOPO_PYTHON:-ON}" != "OFF" ]; then
  scripts/setup_python.sh build
fi
