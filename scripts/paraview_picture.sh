#!/usr/bin/env bash
# The README's ParaView picture, made the way a user would: a real `elastobench run --vtk-every`,
# then ParaView (pvbatch under xvfb-run) renders its last frame (analysis/paraview_picture.py).
#   scripts/paraview_picture.sh BUILD_DIR OUT.png [TITLE [RUN ARGS...]]
# Default run: hexmg on the bunny (dick2011-bunny, ~30K hexahedra) for 40 steps on the CPU.
# Needs Debian's paraview, xvfb and ParaView's Python modules (scripts/install_deps.sh).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR OUT.png [TITLE [RUN ARGS...]]" >&2; exit 2; }
build=$(cd "$1" && pwd); out=$2; title=${3:-"hexmg, bunny (dick2011-bunny), CPU"}; shift $(( $# >= 3 ? 3 : 2 ))
run_args=("$@")
[ ${#run_args[@]} -gt 0 ] || run_args=(-m hexmg -s dick2011-bunny --set mesh.target_elements=30000 --steps 40)
root=$(cd "$(dirname "$0")/.." && pwd)
for tool in pvbatch xvfb-run; do
  command -v $tool > /dev/null || { echo "paraview_picture: $tool is missing (scripts/install_deps.sh installs it)" >&2; exit 1; }
done
shim=$build/lib/libeb_expat_no_reparse_deferral.so  # see tests/meshes/CMakeLists.txt
[ -f "$shim" ] || { echo "paraview_picture: $shim is missing: build the project first" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# One frame at the end is all the picture needs; --vtk-every also writes step 0.
steps=40
for ((i = 0; i < ${#run_args[@]}; ++i)); do [ "${run_args[$i]}" = --steps ] && steps=${run_args[$((i + 1))]}; done
"$build/bin/elastobench" run "${run_args[@]}" --vtk-every "$steps" -q -o "$work/run"
# pvbatch embeds Debian's Python: none of a caller's Python settings may reach it.
pv_site=${EB_PARAVIEW_PYTHON_PREFIX:-/opt/elastobench/python3-paraview}/usr/lib/python3/dist-packages
env -u PYTHONHOME -u VIRTUAL_ENV PYTHONNOUSERSITE=1 PATH=/usr/bin:/bin:$PATH PYTHONPATH=$pv_site \
  xvfb-run -a env LD_PRELOAD="$shim" pvbatch "$root/analysis/paraview_picture.py" "$work/run/vtk/series.pvd" \
  "$work/picture.png" "$title"
mkdir -p "$(dirname "$out")"
mv "$work/picture.png" "$out.tmp" && mv "$out.tmp" "$out"
