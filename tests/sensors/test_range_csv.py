#!/usr/bin/env python3
"""RangeSensor readings reach the sim CSV: `hilsim sim range.yaml` names one column per ray
(<sensor>.r<k>, from the kind's ops) and logs the distances the geometry gives: the floor 1 m
under DOWN, the box top 0.6 m under ONBOX, 1.5 / cos(a) per SCAN ray, inf out of range.
Tolerance 1e-8 m (the CSV prints 9 significant digits)."""
import csv, math, os, subprocess, sys, tempfile

hilsim, src = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "range.csv")
    subprocess.run([hilsim, "sim", os.path.join(src, "tests/sensors/range.yaml"),
                    "--duration", "0.05", "--out", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = list(csv.DictReader(f))
last = rows[-1]
want = {"DOWN.r0": 1.0, "ONBOX.r0": 0.6}
for k in range(5):
    want[f"SCAN.r{k}"] = 1.5 / math.cos(-0.5 + 0.25 * k)
bad = [f"{c}: {last.get(c)} != {v}" for c, v in want.items()
       if c not in last or abs(float(last[c]) - v) > 1e-8]
if "SCAN.r5" in last:
    bad.append("SCAN has a sixth column")
if float(last["SHORT.r0"]) != math.inf or float(last["NEAR.r0"]) != -math.inf:
    bad.append(f"out of range: SHORT {last['SHORT.r0']} NEAR {last['NEAR.r0']}")
if bad:
    sys.exit("range CSV: " + "; ".join(bad))
print(f"range CSV ok: {len(rows)} rows, {len(last)} columns")
