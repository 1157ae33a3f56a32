#!/usr/bin/env bash
# Installs ElastoBench's Debian 12 build and run-time dependencies. Idempotent: packages
# already present are skipped by apt. Needs root (or sudo) and a reachable Debian mirror.
#
# ParaView's Python modules are the exception. Debian 12's python3-paraview Conflicts with
# python3-vtk9 (both ship vtkmodules/ and vtk.py in /usr/lib/python3/dist-packages), and
# libvtk9-dev depends on python3-vtk9: apt cannot have both, and installing one silently removes
# the other. So apt installs paraview (pvbatch) beside libvtk9-dev/python3-vtk9, and the files of
# python3-paraview, at exactly the installed paraview's version, are unpacked into a private prefix
# ($EB_PARAVIEW_PYTHON_PREFIX, default /opt/elastobench/python3-paraview) that the ParaView test
# (tests/meshes/paraview_series_test.py) puts on pvbatch's PYTHONPATH.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libeigen3-dev            # dense/sparse linear algebra, the fp64 reference solves
  libomp-dev               # OpenMP for the CPU backends
  libgtest-dev libgmock-dev  # unit tests
  libbenchmark-dev         # Google Benchmark
  libcli11-dev             # command-line parsing
  nlohmann-json3-dev       # summary.json, --json outputs, JSON scenarios
  libtomlplusplus-dev      # human-edited TOML scenario files
  libfmt-dev               # formatting
  libmetis-dev             # graph partitioning / reordering (optional component)
  libvtk9-dev              # VTK readers/writers (optional component)
  libgmsh-dev              # unstructured tetrahedralization (optional component)
  zlib1g-dev
  ccache                   # compiler cache: rebuilds and CI reuse earlier compilations
  calculix-ccx             # reference solver for the TLED validation
  python3 python3-numpy python3-matplotlib python3-pandas python3-vtk9
  paraview xvfb xauth      # pvbatch under xvfb-run opens our .pvd series in a test (see above)
  libhypre-dev libsuitesparse-dev  # head-to-head solver comparison: hypre BoomerAMG-PCG (brings OpenMPI), CHOLMOD
  # paper/report.pdf from report.md (analysis/make_report.py; ~550 MB, ~30 s to install):
  pandoc                     # Markdown -> LaTeX, runs the engine
  texlive-luatex             # lualatex: Unicode text with system fonts (xelatex would bring texlive-latex-extra too)
  texlive-latex-recommended  # LaTeX styles pandoc's template and analysis/report_pdf.lua load (longtable, float, pdflscape)
  lmodern                    # pandoc's template loads it whatever the main font
  fonts-dejavu-core fonts-dejavu-extra  # the PDF's fonts: ×, ≤, ≈, µ; the condensed face for wide tables
  poppler-utils              # pdftotext and pdfimages for the test of the PDF (tests/common/check_report_pdf.py)
)
PV_PREFIX=${EB_PARAVIEW_PYTHON_PREFIX:-/opt/elastobench/python3-paraview}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
  if [ "$updated" = 0 ]; then $SUDO apt-get update -q; updated=1; fi
}
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} Debian packages already installed"
else
  echo "install_deps: installing ${missing[*]}"
  apt_update
  # A python3-paraview installed system-wide (as earlier versions of this script did) conflicts
  # with python3-vtk9 and is removed here; its private copy below takes its place.
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

pv_version=$(dpkg-query -W -f='${Version}' paraview)
if [ "$(cat "$PV_PREFIX/VERSION" 2>/dev/null)" = "$pv_version" ]; then
  echo "install_deps: ParaView's Python modules $pv_version already in $PV_PREFIX"
  exit 0
fi
echo "install_deps: unpacking python3-paraview $pv_version into $PV_PREFIX (not apt-installed: it conflicts with python3-vtk9)"
apt_update
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "python3-paraview=$pv_version")
$SUDO rm -rf "$PV_PREFIX.new"
$SUDO mkdir -p "$PV_PREFIX.new"
$SUDO dpkg-deb -x "$tmp"/python3-paraview_*.deb "$PV_PREFIX.new"
echo "$pv_version" | $SUDO tee "$PV_PREFIX.new/VERSION" > /dev/null
$SUDO rm -rf "$PV_PREFIX"
$SUDO mv "$PV_PREFIX.new" "$PV_PREFIX"
