#!/usr/bin/env bash
# Files a GPU-machine run's results as committed data: unpacks the experiment tarballs and copies
# logs/benchmark JSON into experiments/results/<device>/, dropping what does not belong in git
# (VTK frames, CalculiX scratch files), then rebuilds paper/ from every committed results folder.
#   scripts/import_device_results.sh DEVICE FILE...   (FILE: *.tgz|*.tar.gz experiment data, or logs/JSON)
set -euo pipefail
cd "$(dirname "$0")/.."
device=${1:?usage: import_device_results.sh DEVICE FILE...}
shift
dest=experiments/results/$device
mkdir -p "$dest"
for f in "$@"; do
  case "$f" in
    *.tgz|*.tar.gz)
      tmp=$(mktemp -d)
      tar xzf "$f" -C "$tmp"
      # Experiment folders may sit at the top or one level down (OUT/<experiment>/...).
      find "$tmp" \( -name vtk -o -name vtk_run \) -type d -prune -exec rm -rf {} +
      find "$tmp" -path '*calculix*' -size +300k -delete  # large decks/results: the experiment regenerates them
      find "$tmp" \( -name '*.frd' -o -name '*.12d' -o -name '*.sta' -o -name '*.cvg' -o -name 'spooles.out' \) -delete
      # The run's manifest (machine, build, git commit) goes into each experiment folder it lists
      # that lacks one (runs before the per-experiment manifests), so that provenance stays with
      # the data when later runs refresh other experiments of the same device.
      run_manifest=$(find "$tmp" -maxdepth 2 -name manifest.json | head -1)
      for d in "$tmp"/* "$tmp"/*/*; do
        [ -d "$d" ] || continue
        name=$(basename "$d")
        if [ -n "$run_manifest" ] && [ ! -f "$d/manifest.json" ] &&
           /usr/bin/python3 -c "import json,sys; sys.exit(0 if sys.argv[2] in [e['name'] for e in json.load(open(sys.argv[1])).get('experiments', [])] else 1)" "$run_manifest" "$name" 2>/dev/null; then
          cp "$run_manifest" "$d/manifest.json"
        fi
        if [ -f "$d/meta.json" ] || ls "$d"/*.csv >/dev/null 2>&1; then
          rm -rf "${dest:?}/$name"
          cp -r "$d" "$dest/$name"
          echo "imported $name"
        elif ls "$d"/*.json >/dev/null 2>&1; then
          # A folder of benchmark JSON (bench_sparse.tgz: linalg/): one file per matrix, and a call
          # may run only some matrices, so its files are merged into what is there.
          mkdir -p "$dest/$name"
          cp -r "$d"/. "$dest/$name/"
          echo "merged $name"
        fi
      done
      rm -rf "$tmp"
      ;;
    *) cp "$f" "$dest/"; echo "copied $(basename "$f")" ;;
  esac
done
# A GPU machine's files name its own folders (/tmp/eb_hexmg/..., its checkout): no absolute path
# of any machine is committed (the report's rule, analysis/portable_paths.py).
/usr/bin/python3 scripts/make_paths_portable.py "$dest"
du -sh "$dest"
