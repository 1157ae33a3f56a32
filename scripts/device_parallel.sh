#!/usr/bin/env bash
# Runs several scripts/device_session.sh jobs at once on a multi-GPU machine: job i on GPU i (at
# most one job per GPU), pinned to its own equal share of the cores (taskset) with OMP_NUM_THREADS set to
# that share, so that the jobs' timings do not mix: each process owns one GPU and its cores (host
# memory bandwidth is still shared; results made this way say so in their notes).
#
#   bash scripts/device_parallel.sh JOBS_FILE
#
# JOBS_FILE: one job per line, `ENV assignments -- parts` (shell syntax on the left, e.g.
# `EB_H2H_PARTS=nonlinear EB_H2H_SECONDS=540 -- h2h`); blank lines and # comments are skipped.
# Each job writes into its own scratch folder (EB_TMP) and output folder; at the end every job's
# output is packed into $OUT/job<i>.tgz (the transfer brings back at most 8 files), also when a job
# was stopped by EB_PAR_SECONDS (default 570), the wall-clock limit of all jobs together.
set -uo pipefail
: "${OUT:?OUT must name the output folder}"
jobs_file=${1:?usage: device_parallel.sh JOBS_FILE}
[ -f "$jobs_file" ] || { echo "device_parallel.sh: no jobs file '$jobs_file'" >&2; exit 2; }
ROOT=$(pwd)
# The unpacking and links that every device_session.sh call makes, once, before the jobs race for them.
OUT=$(mktemp -d) bash scripts/device_session.sh setup > /dev/null || exit 1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); [ "$ngpu" -ge 1 ] || ngpu=1
ncpu=$(nproc); share=$(( ncpu / ngpu > 0 ? ncpu / ngpu : 1 ))
deadline=$(( $(date +%s) + ${EB_PAR_SECONDS:-570} ))
i=0; pids=()
while IFS= read -r line || [ -n "$line" ]; do
  case $line in ''|'#'*) continue ;; esac
  case $line in *' -- '*) ;; *) echo "device_parallel.sh: job '$line' has no ' -- PARTS'" >&2; exit 2 ;; esac
  env_part=${line%% -- *} parts=${line#* -- }
  # Two jobs on one GPU would time each other's kernels.
  [ $i -lt "$ngpu" ] || { echo "device_parallel.sh: more jobs than the $ngpu GPU(s); job '$line' not run" >&2; break; }
  g=$i; first=$(( i * share )); last=$(( first + share - 1 ))
  job_out=/tmp/eb_par/job$i; rm -rf "$job_out"; mkdir -p "$job_out"
  echo "job$i on GPU $g, cores $first-$last: $line" | tee "$job_out/job.txt"
  (
    eval "export $env_part"
    export OUT=$job_out EB_TMP=/tmp/eb_par/tmp$i CUDA_VISIBLE_DEVICES=$g OMP_NUM_THREADS=$share
    timeout $(( deadline - $(date +%s) )) taskset -c "$first-$last" bash "$ROOT/scripts/device_session.sh" $parts \
      > "$job_out/session.log" 2>&1
    echo "job$i exit $?" >> "$job_out/session.log"
  ) &
  pids+=($!); i=$((i + 1))
done < "$jobs_file"
wait "${pids[@]}"
for ((k = 0; k < i; k++)); do
  tail -n 40 /tmp/eb_par/job$k/session.log | sed "s/^/job$k: /"
  tar czf "$OUT/job$k.tgz" -C /tmp/eb_par job$k
done
