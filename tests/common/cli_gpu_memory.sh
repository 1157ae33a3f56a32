#!/usr/bin/env bash
# `run --gpu-memory-limit` on a GPU (issue 12; ctest label gpu): every CUDA method on the
# cantilever at 1 cm (10,000 hexahedra, 60,000 tetrahedra for bcsr-pcg; a few MB and more in
# either precision) over a 1M limit exits 1 naming the estimate and the limit, and leaves no
# summary.json in --out; with a limit of 1T (above the device's free memory, which then bounds
# the run) the same run completes. Exit 77 (skipped) without a usable CUDA device.
set -u
eb="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3; [ -x "$py" ] || py=python3
"$eb" list --json >"$tmp/list.json" || { echo "FAIL list --json"; exit 1; }
if ! $py -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['cuda']['usable'] else 1)" "$tmp/list.json"; then
  echo "skipped: no usable CUDA device"
  exit 77
fi
fails=0
for m in tled hexmg bcsr-pcg; do
  grep -q "\"method\": \"$m\"" "$tmp/list.json" || continue
  for p in fp32 fp64; do
    args=(run -m "$m" -b cuda -p "$p" -s cantilever --set mesh.element_size=0.01 --steps 2 --quiet)
    out=$("$eb" "${args[@]}" --gpu-memory-limit 1M --out "$tmp/$m-$p" 2>&1); rc=$?
    if [ "$rc" != 1 ]; then
      echo "FAIL $m $p over 1M: exit $rc, expected 1"; echo "$out" | head -5; fails=$((fails + 1))
    elif ! grep -qE "$m cuda $p .*needs an estimated [0-9.e+-]+ GB of GPU memory; the limit is 0.001 GB \(--gpu-memory-limit" <<<"$out"; then
      echo "FAIL $m $p over 1M: message lacks the estimate and the limit"; echo "$out" | head -5; fails=$((fails + 1))
    elif [ -e "$tmp/$m-$p/summary.json" ]; then
      echo "FAIL $m $p over 1M: summary.json written"; fails=$((fails + 1))
    else
      echo "ok   $m $p refused over 1M: $out"
    fi
    out=$("$eb" "${args[@]}" --gpu-memory-limit 1T --out "$tmp/$m-$p-ok" 2>&1); rc=$?
    if [ "$rc" != 0 ] || [ ! -e "$tmp/$m-$p-ok/summary.json" ]; then
      echo "FAIL $m $p under 1T: exit $rc"; echo "$out" | head -5; fails=$((fails + 1))
    else
      echo "ok   $m $p runs under 1T"
    fi
  done
done
if [ "$fails" -eq 0 ]; then echo "gpu memory limit: all checks passed"; else echo "gpu memory limit: $fails failed"; fi
[ "$fails" -eq 0 ]
