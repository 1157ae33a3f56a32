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
# Only what runs on the device; stripped and packed (below), since the transfer is limited to 64 MiB
# (tree included). A call that runs only some parts may still name its binaries in EB_STAGE_BINS
# (e.g. `EB_STAGE_BINS=elastobench` for the tled part) or set EB_DEVICE_CCX=0 when CalculiX is not
# needed.
for b in ${EB_STAGE_BINS:-elastobench test_common_cuda test_contract bench_ceilings 'test_*_gpu' bench_tled bench_hexmg bench_sparse 'bench_*_gpu'}; do
  for f in "$B"/bin/$b; do [ -f "$f" ] && cp "$f" .devcarry/build/bin/; done
done
strip --strip-unneeded .devcarry/build/bin/* 2>/dev/null || true
# The GPU machine's image has neither hypre (with its MPI) nor SuiteSparse: a binary linked to them
# would stop there with exit 127 at load time, after the call's start-up was paid.
for bin in .devcarry/build/bin/*; do
  if ldd "$bin" 2>/dev/null | grep -qE 'libHYPRE|libcholmod|libmpi'; then
    echo "stage_device.sh: $(basename "$bin") links hypre/CHOLMOD/MPI, which the GPU machine lacks;" \
      "configure $B with -DELASTOBENCH_HYPRE=OFF -DELASTOBENCH_CHOLMOD=OFF" >&2
    exit 1
  fi
done
for bin in .devcarry/build/bin/*; do
  ldd "$bin" 2>/dev/null | awk '/=> \//{print $3}' | grep -E 'libbenchmark|libgomp|libtomlplusplus|libz\.so' || true
done | sort -u | xargs -r -I{} cp -L {} .devcarry/lib/
# bunny: hexmg, tled and verschoor2012 (with the dragon); armadillo, hand and raptor: linalg tests
# and bench_sparse; the raptors and raptor8k1.obj: campo2015; camile_hand and hand_olivier: cecka2011.
for m in ${EB_DEVICE_MESHES:-bunny.off Dragon_50k.obj Armadillo13K.msh raptorTetra_8418.vtu raptorTetra_12580.vtu raptorTetra_19409.vtu raptor8k1.obj hand_olivier.mesh camile_hand.mesh}; do
  cp "$DATA/$m" .devcarry/meshes/
done
# CalculiX for the TLED comparison: the GPU machine is offline, so the binary and the shared
# libraries it loads travel too (put on PATH/LD_LIBRARY_PATH by the session script).
if [ "${EB_DEVICE_CCX:-1}" = "1" ] && command -v ccx >/dev/null; then
  mkdir -p .devcarry/ccx/bin .devcarry/ccx/lib
  cp -L "$(command -v ccx)" .devcarry/ccx/bin/
  ldd "$(command -v ccx)" | awk '/=> \//{print $3}' | grep -vE 'libc\.so|libm\.so|libpthread|libmvec|libgcc_s' |
    xargs -r -I{} cp -L {} .devcarry/ccx/lib/
  strip --strip-unneeded .devcarry/ccx/bin/* .devcarry/ccx/lib/* 2>/dev/null || true
fi
# The ctest files sit beside the binaries' build tree.
(cd "$B" && find . \( -name CTestTestfile.cmake -o -name '*_tests.cmake' -o -name '*_include.cmake' \) -print0 |
  xargs -0 -I{} cp --parents {} ../.devcarry/build/)
echo "$(cd "$B" && pwd)" > .devcarry/build_dir_here
# The binaries travel xz-compressed (~5x smaller: all of them then fit the 64 MiB transfer beside the
# tree and the meshes); device_session.sh unpacks them. EB_STAGE_PACK=0 leaves them plain.
if [ "${EB_STAGE_PACK:-1}" = "1" ]; then
  tar -C .devcarry/build -cJf .devcarry/bin.tar.xz bin
  rm -rf .devcarry/build/bin
fi
du -sh .devcarry
