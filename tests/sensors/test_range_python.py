#!/usr/bin/env python3
"""RangeSensor readings reach a Python client (python/hilsim_client.py) from a running
`hilsim run` over shared memory, through the generic readings section: the client finds the
sensors by name, sees kind "range", unit "m", the scan's parameters, and the distances the
geometry gives (floor 1 m under DOWN, box top 0.6 m under ONBOX, 1.5 / cos(a) per SCAN ray,
+inf/-inf out of range), within 1e-9 m. Also the 1.0 IMU/F-T arrays are not touched (the mast
has none). No timing is asserted: the client waits for ticks with a generous timeout."""
import math, os, subprocess, sys

hilsim, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "python"))
import hilsim_client  # noqa: E402
import range_bench  # noqa: E402

name, cfg, tmp = range_bench.write_config(src, "range-py")
proc = subprocess.Popen([hilsim, "run", cfg, "--no-rt", "--duration", "120"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    c = range_bench.attach(hilsim_client, name, proc)
    with c:
        names = c.reading_names()
        assert {"DOWN", "ONBOX", "SCAN", "SHORT", "NEAR", "LEVEL"} <= set(names), names
        for _ in range(30):
            c.wait_tick(timeout_s=30)
        tick, rd = c.read_readings()
        scan = rd["SCAN"]
        assert scan.kind == "range" and scan.unit == "m" and len(scan.values) == 5, vars(scan)
        assert abs(scan.param[0] + 0.5) < 1e-12 and abs(scan.param[1] - 0.25) < 1e-12
        assert scan.samples >= 1
        for k, v in enumerate(scan.values):
            assert abs(v - 1.5 / math.cos(-0.5 + 0.25 * k)) < 1e-9, (k, v)
        assert abs(rd["DOWN"].values[0] - 1.0) < 1e-9, rd["DOWN"].values
        assert abs(rd["ONBOX"].values[0] - 0.6) < 1e-9, rd["ONBOX"].values
        assert rd["SHORT"].values[0] == math.inf and rd["NEAR"].values[0] == -math.inf
        print("range python ok: tick %d, %d readings" % (tick, len(rd)))
finally:
    proc.terminate()
    proc.wait(timeout=60)
