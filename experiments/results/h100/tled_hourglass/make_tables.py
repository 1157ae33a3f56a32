# Tables of the tled hourglass device run (issue 24) from runs/: sag.csv (cantilever sag per
# variant, precision and element size; also the sag at t ~ 0.5 s, where the fp64 hourglass runs
# come to rest) and throughput.csv (steps/s median and range of 5 runs, work counts per element).
import csv, glob, json, os, statistics as st

rows = []
for d in sorted(glob.glob('runs/sag_*')):
    if d.endswith('.log'):
        continue
    s = json.load(open(d + '/summary.json'))
    _, v, p, h = os.path.basename(d).split('_')
    with open(d + '/timeseries.csv') as f:
        series = list(csv.DictReader(f))
    near = min(series, key=lambda r: abs(float(r['time']) - 0.5))
    rows.append(dict(variant=v, precision=p, element_size=h[1:], elements=s['mesh']['elements'],
                     sag_mm=round(-1e3 * s['probes']['tip'][2], 4),
                     t_near_0_5s=round(float(near['time']), 4), sag_near_0_5s_mm=round(-1e3 * float(near['tip_uz']), 4),
                     steps=s['time']['steps'], simulated_s=round(s['time']['simulated_time'], 4),
                     stopped_by=s['time']['stopped_by'], valid=s['validity']['valid'],
                     steps_per_s=round(s['timing']['steps_per_second'])))
    # No number from an invalid run: the row stays (it says the run collapsed), its values go.
    if not s['validity']['valid']:
        r = rows[-1]
        for k in ('sag_mm', 'sag_near_0_5s_mm', 'steps_per_s'):
            r[k] = ''
        r['valid'] = 'False: ' + '; '.join(s['validity'].get('reasons', [])) if s['validity'].get('reasons') else False
with open('sag.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

groups = {}
for d in sorted(glob.glob('runs/perf_*')):
    if d.endswith('.log'):
        continue
    _, v, p, h, r = os.path.basename(d).split('_')
    groups.setdefault((v, p, h[1:]), []).append(json.load(open(d + '/summary.json')))
out = []
for (v, p, h), ss in sorted(groups.items(), key=lambda k: (-float(k[0][2]), k[0][1], k[0][0])):
    sp = [x['timing']['steps_per_second'] for x in ss]
    s, med = ss[0], st.median(sp)
    E = s['mesh']['elements']
    out.append(dict(variant=v, precision=p, element_size=h, elements=E, runs=len(sp),
                    steps_per_s_median=round(med, 1), steps_per_s_min=round(min(sp), 1), steps_per_s_max=round(max(sp), 1),
                    us_per_step=round(1e6 / med, 2), bytes_per_step=s['performance']['bytes_per_step'],
                    bytes_per_element=round(s['performance']['bytes_per_step'] / E, 1),
                    flops_per_element=round(s['performance']['flops_per_step'] / E, 1),
                    effective_gbps=round(s['performance']['bytes_per_step'] * med / 1e9, 1),
                    all_valid=all(x['validity']['valid'] for x in ss), peak_device_bytes=s['memory']['peak_device_bytes']))
with open('throughput.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
    w.writeheader()
    w.writerows(out)
