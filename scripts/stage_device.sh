#!/usr/bin/env bash
# Stages what a GPU-machine run needs into .devcarry/ (ignored by git; pass it as `carry`):
# the binaries and ctest files of a build made here (default build-device, configured without
# VTK/Gmsh/METIS, which the GPU machine lacks), the non-system shared libraries they load, and
# the third-party meshes the experiments read.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-device}
DATA=${ELASTOBENCH_DATA:-../shared/data/meshes}
rm -rf .devcarry
mkdir -p .devcarry/lib .devcarry/meshes
mkdir -p .devcarry/build/bin
cp "$B"/bin/* .devcarry/build/bin/
for bin in .devcarry/build/bin/*; do
  ldd "$bin" 2>/dev/null | awk '/=> \//{print $3}' | grep -E 'libbenchmark|libgomp|libtomlplusplus|libz\.so' || true
done | sort -u | xargs -r -I{} cp -L {} .devcarry/lib/
for m in ${EB_DEVICE_MESHES:-bunny.off}; do cp "$DATA/$m" .devcarry/meshes/; done
# The ctest files sit beside the binaries' build tree.
(cd "$B" && find . \( -name CTestTestfile.cmake -o -name '*_tests.cmake' -o -name '*_include.cmake' \) -print0 |
  xargs -0 -I{} cp --parents {} ../.devcarry/build/)
echo "$(cd "$B" && pwd)" > .devcarry/build_dir_here
du -sh .devcarry
