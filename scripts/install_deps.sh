#!/usr/bin/env bash
# Installs ElastoBench's Debian 12 build and run-time dependencies. Idempotent: packages
# already present are skipped by apt. Needs root (or sudo) and a reachable Debian mirror.
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
  calculix-ccx             # reference solver for the TLED validation
  python3 python3-numpy python3-matplotlib python3-pandas python3-vtk9
  paraview python3-paraview xvfb xauth  # pvbatch under xvfb-run opens our .pvd series in a test
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} Debian packages already installed"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
