#!/usr/bin/env python3
"""Scenario sensor faults reach range scans, end to end: `hilsim run tests/sensors/range.yaml
--clock lockstep --scenario tests/sensors/range-faults.yaml` with this script as the shm owner
that releases every tick, reading every tick's scans through the generic readings section
(python/hilsim_client.py). The scene is static (range_mast.wrl over range_scene.wrl), so each
beam's true distance is the geometry's (test_range_sensor.c: floor 1 m under DOWN, box top
0.6 m under ONBOX, 1.5 / cos(a) per SCAN beam; +inf beyond maxDistance under SHORT, -inf
under minDistance under NEAR), and every faulted value is checked tick by tick against it:

  before a fault  the geometry, within 1e-9 m (ODE's closed-form ray tests)
  offset          the unfaulted value + 0.25 m, to the bit (the same double sum)
  stuck           the reading of its first tick to the bit, sample count and time stamp too,
                  while the offset under it ends (so a pass-through would show)
  off             +inf on every beam: the kind's "no return"
  ±inf + offset   stays ±inf
  noise           off the truth on every tick, within 10 sigma
  after           the unfaulted values to the bit, sample counts moving again

Scenario tick k is the k-th tick after the warm-up (scenarios/README.md, Time): the first
tick the owner sees in lockstep is scenario tick 0, and the result JSON's onsets agree. No
timing is asserted: lockstep runs at whatever speed the machine has."""
import json, math, os, subprocess, sys

hilsim, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "python"))
import hilsim_client  # noqa: E402
import range_bench  # noqa: E402

TOL = 1e-9
name, cfg, tmp = range_bench.write_config(src, "range-fault")
result = os.path.join(tmp, "result.json")
proc = subprocess.Popen([hilsim, "run", cfg, "--no-rt", "--clock", "lockstep", "--scenario",
                         os.path.join(src, "tests/sensors/range-faults.yaml"), "--result-json",
                         result], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

truth = {"DOWN": [1.0], "ONBOX": [0.6], "SHORT": [math.inf], "NEAR": [-math.inf],
         "SCAN": [1.5 / math.cos(-0.5 + 0.25 * k) for k in range(5)]}
seen = []  # (tick, {name: (samples, time_ns, values)}) for every tick, in order
try:
    c = range_bench.attach(hilsim_client, name, proc)
    with c:
        assert c.lockstep, "the bench is not in lockstep"
        c.claim()
        while True:
            try:
                tick, _ = c.wait_tick(timeout_s=30)
            except (TimeoutError, hilsim_client.HilsimError):
                break  # the run ended with the scenario
            _, rd = c.read_readings()
            seen.append((tick, {n: (r.samples, r.time_ns, list(r.values))
                                for n, r in rd.items()}))
            try:
                c.step()
            except hilsim_client.HilsimError:
                break
    out, _ = proc.communicate(timeout=120)
finally:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=60)

print(out[-1200:])
assert proc.returncode == 0, "hilsim run exited %d" % proc.returncode
with open(result) as f:
    res = json.load(f)
onset = {s["name"]: s["onset_tick"] for s in res["steps"]}
want_onsets = {"scan_offset": 20, "scan_stuck": 25, "down_off": 30, "short_offset": 20,
               "near_offset": 20, "onbox_noise": 30}
assert onset == want_onsets, onset

ticks = [t for t, _ in seen]
assert ticks == list(range(ticks[0], ticks[0] + len(ticks))), "lockstep skipped a tick"
assert len(seen) >= 60, "only %d ticks seen" % len(seen)
# scenario tick k is the k-th tick the owner saw
rd = [r for _, r in seen]


def near(got, want):
    return all((g == w) if math.isinf(w) else abs(g - w) < TOL for g, w in zip(got, want))


bad = []
for k, r in enumerate(rd[:60]):
    scan_s, scan_t, scan = r["SCAN"]
    if k < 20:
        for n, want in truth.items():
            if not near(r[n][2], want):
                bad.append("tick %d %s %s != geometry %s" % (k, n, r[n][2], want))
    # the unfaulted scan to the bit, from the ticks before the faults
    clean = rd[19]["SCAN"][2]
    if 20 <= k < 25 and scan != [v + 0.25 for v in clean]:
        bad.append("tick %d SCAN %s != clean + 0.25" % (k, scan))
    if 25 <= k < 45 and (scan_s, scan_t, scan) != rd[25]["SCAN"]:
        bad.append("tick %d SCAN %s not stuck at tick 25's %s" % (k, r["SCAN"], rd[25]["SCAN"]))
    if k >= 45 and scan != clean:
        bad.append("tick %d SCAN %s != clean %s after the faults" % (k, scan, clean))
    down = r["DOWN"][2]
    if 30 <= k < 40 and down != [math.inf]:
        bad.append("tick %d DOWN %s != [inf] (off)" % (k, down))
    if not 30 <= k < 40 and down != rd[19]["DOWN"][2]:
        bad.append("tick %d DOWN %s != clean" % (k, down))
    if r["SHORT"][2] != [math.inf] or r["NEAR"][2] != [-math.inf]:
        bad.append("tick %d markers SHORT %s NEAR %s" % (k, r["SHORT"][2], r["NEAR"][2]))
    box = r["ONBOX"][2][0]
    if 30 <= k < 40 and not (box != rd[19]["ONBOX"][2][0] and abs(box - 0.6) < 0.1):
        bad.append("tick %d ONBOX %r: no noise within 10 sigma" % (k, box))
    if not 30 <= k < 40 and box != rd[19]["ONBOX"][2][0]:
        bad.append("tick %d ONBOX %r != clean" % (k, box))
# the scan keeps sampling outside the stuck window (SCAN: one scan per 10 ticks)
if not rd[24]["SCAN"][0] < rd[55]["SCAN"][0]:
    bad.append("SCAN samples did not move: %d, %d" % (rd[24]["SCAN"][0], rd[55]["SCAN"][0]))
if not rd[25]["SCAN"][0] == rd[44]["SCAN"][0] < rd[45]["SCAN"][0]:
    bad.append("SCAN samples while stuck: %d %d %d" % (rd[25]["SCAN"][0], rd[44]["SCAN"][0],
                                                       rd[45]["SCAN"][0]))
if bad:
    sys.exit("range faults:\n  " + "\n  ".join(bad[:20]))
print("range faults ok: %d lockstep ticks from tick %d, scan %s, offset/stuck/off/noise exact"
      % (len(rd), ticks[0], ["%.6f" % v for v in rd[0]["SCAN"][2]]))
