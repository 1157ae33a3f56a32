#!/usr/bin/env bash
# The CLI's documented contract: exit codes 0/1/2, messages that name the bad choice or key,
# valid JSON from `list --json`, scenario files that round-trip through `scenario show`.
set -u
eb="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
py=/usr/bin/python3; [ -x "$py" ] || py=python3

check() {  # check NAME EXPECTED_RC PATTERN -- command...
  local name=$1 want=$2 pattern=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want"; echo "$out" | head -20; fails=$((fails+1)); return
  fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: output lacks /$pattern/"; echo "$out" | head -20; fails=$((fails+1)); return
  fi
  echo "ok   $name"
}

check help 0 "Subcommands|SUBCOMMANDS" -- "$eb" --help
for sub in list run scenario reproduce report; do
  check "help-$sub" 0 "Usage|USAGE|Options|OPTIONS" -- "$eb" "$sub" --help
done
check help-run-gpu-memory-limit 0 "--gpu-memory-limit.*shared GPU" -- "$eb" run --help
check no-subcommand 2 "" -- "$eb"
check list 0 "Methods" -- "$eb" list
"$eb" list --json >"$tmp/list.json" && $py -m json.tool "$tmp/list.json" >/dev/null \
  && $py -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'methods' in d and 'cuda' in d and 'usable' in d['cuda']" "$tmp/list.json" \
  && echo "ok   list-json" || { echo "FAIL list-json"; fails=$((fails+1)); }
# method x variant x backend x precision, and per method its variants, options and modes.
$py - "$tmp/list.json" <<'PY' && echo "ok   list-json-variants" || { echo "FAIL list-json-variants"; fails=$((fails+1)); }
import json, sys
d = json.load(open(sys.argv[1]))
info = d["method_info"]
for e in d["methods"]:
    m = info[e["method"]]
    names = [v["name"] for v in m["variants"]]
    assert e["variant"] in names and e["default_variant"] == (e["variant"] == names[0]), e
    assert "%s %s" % (e["backend"], e["precision"]) in m["variants"][names.index(e["variant"])]["implementations"], e
for name, m in info.items():
    assert m["summary"] and m["modes"] and m["variants"] and isinstance(m["options"], dict), name
if "tled" in info:
    assert [v["name"] for v in info["tled"]["variants"]] == ["gather", "atomic", "hourglass"], info["tled"]
    assert info["tled"]["options"] == {"texture": False, "convergence_rate": 0.0, "hourglass_kappa": 0.05}, info["tled"]
    # hourglass_kappa is the hourglass variant's own key: the paper's variants do not list it.
    keys = {v["name"]: v["keys"] for v in info["tled"]["variants"]}
    assert "hourglass_kappa" not in keys["gather"] and "hourglass_kappa" not in keys["atomic"], keys
if "hexmg" in info:
    assert info["hexmg"]["options"]["cycles"] == 2 and "jacobi-pcg" in [v["name"] for v in info["hexmg"]["variants"]]
PY
check unknown-method 2 "unknown method 'nosuch'.*available" -- "$eb" run --method nosuch --scenario cantilever --out "$tmp/r"
first_method=$($py -c "import json,sys; m=json.load(open(sys.argv[1]))['methods']; print(m[0]['method'] if m else '')" "$tmp/list.json")
if [ -n "$first_method" ]; then
  check unknown-scenario 2 "unknown scenario 'nosuch'.*cantilever" -- "$eb" run --method "$first_method" --scenario nosuch --out "$tmp/r"
  check misspelt-set 2 "unknown key 'mesh.elemnt_size'" -- "$eb" run --method "$first_method" --scenario cantilever --set mesh.elemnt_size=1 --out "$tmp/r"
fi
if grep -q '"method": "tled"' "$tmp/list.json"; then
  check run-end-to-end 0 "" -- "$eb" run --method tled --scenario cube-compression --set mesh.elements_per_edge=3 \
    --steps 60 --vtk-every 25 --quiet --out "$tmp/ok"
  $py - "$tmp/ok" <<'PY' && echo "ok   run-outputs" || { echo "FAIL run-outputs"; fails=$((fails+1)); }
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
assert s["schema"] == "elastobench.summary/1" and s["method"] == "tled" and s["time"]["steps"] == 60
assert len(s["probes"]["corner"]) == 3 and s["timing"]["steps_per_second"] > 0
assert s["build"]["git_commit"] and s["machine"]["cpu_model"]
frames = sorted(f for f in os.listdir(os.path.join(d, "vtk")) if f.endswith(".vtu"))
assert frames == ["step_0000000.vtu", "step_0000025.vtu", "step_0000050.vtu", "step_0000060.vtu"], frames
pvd = open(os.path.join(d, "vtk", "series.pvd")).read()
assert all(f in pvd for f in frames)
rows = open(os.path.join(d, "timeseries.csv")).read().splitlines()
assert rows[0].startswith("step,time,") and "corner_uz" in rows[0] and len(rows) >= 3
PY
  $py - "$tmp/ok" <<'PY' && echo "ok   valid-run-validity" || { echo "FAIL valid-run-validity"; fails=$((fails+1)); }
import json, os, sys
v = json.load(open(os.path.join(sys.argv[1], "summary.json")))["validity"]
assert v["valid"] is True and v["reasons"] == [] and v["first_invalid_step"] is None, v
assert v["det_f_checked"] is True and v["inverted_element_steps"] == 0 and 0 < v["min_det_f"] <= 1, v
PY
  # Ten times the stable step: elements invert, then the state overflows. The run stops at the
  # non-finite state, exits 1 naming the first inverted element and its step, and keeps
  # summary.json (valid: false) to document it; --allow-invalid does not accept a divergence.
  div_args=(run --method tled --scenario cube-compression --set time.dt=0.01 --steps 200 --quiet)
  check divergence-exit-1 1 "element [0-9]+ inverted .* at step [0-9]+" -- "$eb" "${div_args[@]}" --out "$tmp/div"
  check divergence-not-allowed 1 "diverged at step [0-9]+" -- "$eb" "${div_args[@]}" --allow-invalid --out "$tmp/div2"
  first=$($py - "$tmp/div" <<'PY'
import json, os, sys
s = json.load(open(os.path.join(sys.argv[1], "summary.json")))
v = s["validity"]
assert v["valid"] is False and s["time"]["stopped_by"] == "non-finite state", v
assert v["nonfinite"]["first_step"] is not None and v["first_invalid_step"] <= v["nonfinite"]["first_step"], v
f = v["first_inverted"]
assert v["inverted_element_steps"] > 0 and f["element"] >= 0 and f["step"] >= 0, v
assert any(("element %d" % f["element"]) in r and ("step %d" % f["step"]) in r for r in v["reasons"]), v
print(f["element"], f["step"])
PY
  ) && echo "ok   divergence-keeps-summary" || { echo "FAIL divergence-keeps-summary"; fails=$((fails+1)); }
  # The same run stopped one step after the first inverted state was checked (the element
  # loop checks state n during step n + 1): invalid but finite. Exit 1 naming the element and
  # the step; with --allow-invalid exit 0 and summary.json says valid: false.
  if [ -n "$first" ]; then
    read -r el st <<<"$first"
    inv_args=(run --method tled --scenario cube-compression --set time.dt=0.01 --steps $((st + 1)) --quiet)
    check invalid-exit-1 1 "warning: .*invalid run: element $el inverted .* at step $st" -- "$eb" "${inv_args[@]}" --out "$tmp/inv"
    check invalid-allowed 0 "warning: .*element $el inverted .* at step $st" -- "$eb" "${inv_args[@]}" --allow-invalid --out "$tmp/inv2"
    $py - "$tmp/inv" "$tmp/inv2" "$el" "$st" <<'PY' && echo "ok   invalid-summaries" || { echo "FAIL invalid-summaries"; fails=$((fails+1)); }
import json, os, sys
for d in sys.argv[1:3]:
    s = json.load(open(os.path.join(d, "summary.json")))
    v = s["validity"]
    assert v["valid"] is False and s["time"]["stopped_by"] != "non-finite state", (d, v)
    assert v["first_inverted"] == {"element": int(sys.argv[3]), "step": int(sys.argv[4])}, v
    assert v["first_invalid_step"] == int(sys.argv[4]) and v["nonfinite"]["first_step"] is None, v
PY
  fi
  for flag in --steps --vtk-every --threads --warmup; do
    check "negative-count$flag" 2 "$flag must be >= " -- "$eb" run --method tled --scenario cube-compression $flag -3 --out "$tmp/neg"
  done
  check zero-steps 2 "--steps must be >= 1" -- "$eb" run --method tled --scenario cube-compression --steps 0 --out "$tmp/neg"
  # --gpu-memory-limit (issue 12): a malformed size is a usage error naming the option; the
  # refusal itself needs a GPU (cli_gpu_memory.sh, label gpu).
  for bad in 2X 1.2.3G G -5M 0 1e9; do
    check "gpu-limit-malformed-'$bad'" 2 "--gpu-memory-limit must be a size in bytes" -- "$eb" run --method tled \
      --scenario cube-compression "--gpu-memory-limit=$bad" --out "$tmp/neg"
  done
  check set-negative-steps 2 "time.steps' must be >= 0" -- "$eb" run --method tled --scenario cube-compression --set time.steps=-3 --out "$tmp/neg"
  check set-zero-max-steps 2 "time.max_steps" -- "$eb" run --method tled --scenario cube-compression --set time.max_steps=0 --out "$tmp/neg"
  check set-negative-vtk 2 "output.vtk_every' must be >= 0" -- "$eb" run --method tled --scenario cube-compression --set output.vtk_every=-1 --out "$tmp/neg"
  [ ! -e "$tmp/neg" ] && echo "ok   bad-counts-leave-nothing" || { echo "FAIL bad-counts-leave-nothing"; fails=$((fails+1)); }
  # Method sections, variants and modes (issue 10): a key the method does not have, another
  # method's key, a key's old place, an unknown variant, a static scenario or a scenario feature
  # the method lacks: exit 2 naming it, nothing written.
  mk=(run -m tled -s cube-compression --quiet --out "$tmp/mk")
  check method-key-unknown 2 "unknown key 'tled.txture'" -- "$eb" "${mk[@]}" --set tled.txture=true
  check method-key-old-place 2 "unknown key 'solver.texture'.*METHOD.texture" -- "$eb" "${mk[@]}" --set solver.texture=true
  check method-key-foreign 2 "'hexmg.cycles' belongs to method 'hexmg'" -- "$eb" "${mk[@]}" --set hexmg.cycles=1
  check method-key-bad-value 2 "'tled.convergence_rate' must lie in" -- "$eb" "${mk[@]}" --set tled.convergence_rate=1.5
  check unknown-variant 2 "no variant 'colouring'.*gather, atomic" -- "$eb" "${mk[@]}" --variant colouring
  check static-unsupported 2 "'tled' has no static solve" -- "$eb" "${mk[@]}" --set time.mode=static
  check feature-unsupported 2 "does not implement scenario key 'boundary.ground'" -- "$eb" "${mk[@]}" --set boundary.ground.enabled=true
  [ ! -e "$tmp/mk" ] && echo "ok   method-keys-leave-nothing" || { echo "FAIL method-keys-leave-nothing"; fails=$((fails+1)); }
  # A well-formed limit is accepted (and does not concern the CPU backend).
  check gpu-limit-cpu-run 0 "" -- "$eb" run -m tled -s cube-compression --set mesh.elements_per_edge=3 --steps 5 \
    --gpu-memory-limit 1.5GiB --quiet --out "$tmp/gpu_limit_cpu"
  check variant-run 0 "" -- "$eb" run -m tled --variant atomic -s cube-compression --set mesh.elements_per_edge=3 \
    --set tled.texture=true --steps 20 --quiet --out "$tmp/atomic"
  $py - "$tmp/atomic" <<'PY' && echo "ok   variant-summary" || { echo "FAIL variant-summary"; fails=$((fails+1)); }
import json, os, sys
s = json.load(open(os.path.join(sys.argv[1], "summary.json")))
assert s["variant"] == "atomic" and s["scenario"]["definition"]["solver"]["variant"] == "atomic", s["variant"]
assert s["method_options"] == {"texture": True, "convergence_rate": 0.0, "hourglass_kappa": 0.05}, s["method_options"]
assert s["scenario"]["definition"]["tled"] == {"texture": True}, s["scenario"]["definition"]
assert s["time"]["mode"] == "dynamic" and s["solver"]["levels"] == 0 and s["solver"]["outer"] is None, s["solver"]
header = open(os.path.join(sys.argv[1], "timeseries.csv")).readline().strip().split(",")
assert header[:12] == ["step", "time", "max_displacement", "max_velocity", "iterations", "residual", "initial_residual",
                       "reduction", "outer_iterations", "outer_initial_residual", "outer_residual", "inner_per_outer"], header
PY
fi
# issue 9: a load that inverts hexmg's elements (a 1 m beam sagging kilometres under 1e9 g)
# exits 1 naming the first inverted element and its step. The elements invert in step 1: 3 steps
# suffice, and every further step of the diverged solve cost about 1 s under the sanitizers.
if grep -q '"method": "hexmg"' "$tmp/list.json"; then
  check hexmg-inverting-load-exit-1 1 "element [0-9]+ inverted .* at step [0-9]+" -- "$eb" run -m hexmg -b cpu -s cantilever \
    --set 'boundary.gravity=[0,0,-1e9]' --set time.steps=3 --quiet --out "$tmp/hexmg_inv"
  # Keys hexmg used to ignore silently, and its own section.
  check hexmg-ground 2 "'hexmg' does not implement scenario key 'boundary.ground'" -- "$eb" run -m hexmg -s cantilever \
    --set boundary.ground.enabled=true --quiet --out "$tmp/hexmg_bad"
  check hexmg-foreign-key 2 "'tled.texture' belongs to method 'tled'" -- "$eb" run -m hexmg -s cantilever \
    --set tled.texture=true --quiet --out "$tmp/hexmg_bad"
  check hexmg-assembly 2 "unknown key 'hexmg.assembly'" -- "$eb" run -m hexmg -s cantilever \
    --set hexmg.assembly=sharednz --quiet --out "$tmp/hexmg_bad"
  check hexmg-cuda-jacobi 2 "'jacobi-pcg' has no cuda/fp64 implementation" -- "$eb" run -m hexmg -b cuda --variant jacobi-pcg \
    -s cantilever --quiet --out "$tmp/hexmg_bad"
  check hexmg-section-run 0 "" -- "$eb" run -m hexmg -s cantilever --set mesh.element_size=0.05 --set hexmg.cycles=1 \
    --variant vcycle --steps 3 --quiet --out "$tmp/hexmg_ok"
  $py - "$tmp/hexmg_ok" <<'PY' && echo "ok   hexmg-section-summary" || { echo "FAIL hexmg-section-summary"; fails=$((fails+1)); }
import json, os, sys
s = json.load(open(os.path.join(sys.argv[1], "summary.json")))
assert s["variant"] == "vcycle" and s["method_options"]["cycles"] == 1 and s["method_details"]["cycles"] == 1, s["method_options"]
assert s["solver"]["levels"] == 1 and s["solver"]["inner"]["iterations"] == {"min": 1, "mean": 1, "max": 1}, s["solver"]
PY
fi
check unknown-backend 2 "unknown backend 'opencl'.*cpu, cuda" -- "$eb" run --method nosuch --backend opencl --scenario cantilever --out "$tmp/r"
check unknown-precision 2 "unknown precision 'fp16'" -- "$eb" run --method nosuch --precision fp16 --scenario cantilever --out "$tmp/r"
[ ! -e "$tmp/r/summary.json" ] && echo "ok   no-partial-output" || { echo "FAIL no-partial-output"; fails=$((fails+1)); }
check unknown-experiment 2 "unknown experiment 'nosuch'" -- "$eb" reproduce nosuch --out "$tmp/x"
check scenario-list 0 "cube-compression" -- "$eb" scenario list
"$eb" scenario show cube-compression >"$tmp/cube.toml"
check scenario-roundtrip 0 "ok" -- "$eb" scenario check "$tmp/cube.toml"
sed 's/^elements_per_edge/elements_per_egde/' "$tmp/cube.toml" >"$tmp/bad.toml"
check misspelt-key 2 "unknown key 'mesh.elements_per_egde'" -- "$eb" scenario check "$tmp/bad.toml"
printf '\n[nosuchmethod]\ncycles = 1\n' >>"$tmp/cube.toml"
check misspelt-section 2 "unknown scenario key 'nosuchmethod'" -- "$eb" scenario check "$tmp/cube.toml"
check scenario-json 0 '"elements_per_edge": 10' -- "$eb" scenario show cube-compression --format json
check missing-file 2 "unknown scenario '$tmp/none.toml'" -- "$eb" scenario check "$tmp/none.toml"
check report-missing 2 "results directory not found" -- "$eb" report --results "$tmp/none"

if [ "$fails" -eq 0 ]; then echo "cli contract: all checks passed"; else echo "cli contract: $fails failed"; fi
[ "$fails" -eq 0 ]
