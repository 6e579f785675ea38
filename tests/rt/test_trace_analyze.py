#!/usr/bin/python3
"""scripts/trace-analyze.py on constructed babeltrace2 text (no LTTng needed): the
percentile definition on one sample per bin, the overflow rule, missing tick numbers, the
text table layout, and the per-process selection.

    test_trace_analyze.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

LINE = ("[05:00:00.000000000] (+0.000000000) vm hilsim:tick: { cpu_id = 0 }, { vpid = %d }, "
        "{ tick = %d, planned_ns = %d, actual_ns = %d, wake_latency_ns = %d, inputs_ns = %d, "
        "actuation_ns = 1000, physics_ns = 70500, sensors_ns = 0, outputs_ns = 0, "
        "tick_ns = %d, overrun = %d }\n")


def make_lines(pid, ticks, period=1000000):
    out = []
    for i, t in enumerate(ticks):
        wake = i * 1000 + 500  # 0.5 us .. 99.5 us, one per microsecond
        inputs = 50000000 if i == 0 else 2000  # one overflow (--range-ns 20 ms)
        out.append(LINE % (pid, t, t * period, t * period + wake, wake, inputs, 3000,
                           1 if i == 3 else 0))
    return out


SKIP = ("[05:00:00.000000000] (+0.000000000) vm hilsim:policy_action: { cpu_id = 0 }, "
        "{ vpid = %d }, { tick = %d, action = 1, value = %d }\n")


def with_skips(pid, ticks):
    """The tick lines plus a skip action on every tick followed by a gap, and one after the
    last tick (the run ended on an overrun that skipped two periods)."""
    out, seen = [], set(ticks)
    for line, t in zip(make_lines(pid, ticks), ticks):
        out.append(line)
        gap = 0
        while t + 1 + gap not in seen and t + 1 + gap <= max(ticks):
            gap += 1
        if gap:
            out.append(SKIP % (pid, t, gap))
    out.append(SKIP % (pid, max(ticks), 2))
    return out


def run(src, fake_dir, lines, *args):
    data = os.path.join(fake_dir, "bt.txt")
    with open(data, "w") as f:
        f.writelines(lines)
    fake = os.path.join(fake_dir, "babeltrace2")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\ncat '%s'\n" % data)
    os.chmod(fake, 0o755)
    return subprocess.run(["/usr/bin/python3", src + "/scripts/trace-analyze.py",
                           "--babeltrace2", fake, "unused-dir"] + list(args),
                          capture_output=True, text=True)


def main():
    src = sys.argv[1]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    # 100 ticks numbered 0..104 with 5 gaps.
    ticks = [t for t in range(105) if t not in (10, 11, 50, 51, 52)]
    with tempfile.TemporaryDirectory() as tmp:
        r = run(src, tmp, with_skips(41, ticks), "--json", "--range-ns", "20000000")
        check(r.returncode == 0, "json run failed: " + r.stderr)
        j = json.loads(r.stdout) if r.returncode == 0 else {"phases": {}}
        w = j["phases"].get("wake", {})
        # N = 100: k = 50, 99, 100, 100 -> the midpoints of the 49500 and 98500 ns samples' bins
        # (128 bins per power of two), then the exact max.
        check([w.get(k) for k in ("p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns")] ==
              [49535, 98559, 99500, 99500], "wake percentiles %s" % w)
        for key, kth in (("p50_ns", 49500), ("p99_ns", 98500)):
            check(abs(w.get(key, 0) - kth) * 256 <= kth, "%s beyond 1/256 of %d" % (key, kth))
        check(w.get("min_ns") == 500 and w.get("max_ns") == 99500, "wake min/max %s" % w)
        check(w.get("mean_ns") == 50000.0, "wake mean %s" % w.get("mean_ns"))
        i = j["phases"].get("inputs", {})
        check(i.get("overflow") == 1 and i.get("p99_99_ns") == 50000000 and
              i.get("p50_ns") == 2003, "inputs overflow rule %s" % i)  # 2000 ns bin: 2000..2007
        check(j.get("missing_ticks") == [10, 11, 50, 51, 52], "missing %s" % j.get("missing_ticks"))
        # The five gaps and the two periods skipped after the last tick: the run counts both.
        check(j.get("missed_periods") == 7 and j.get("ticks") == 100, "counts %s" % j)
        check(j.get("skipped_after_last") == 2, "after last %s" % j.get("skipped_after_last"))
        check(j.get("period_ns") == 1000000, "period %s" % j.get("period_ns"))
        check(j.get("overruns") == 1, "overruns %s" % j.get("overruns"))

        r = run(src, tmp, with_skips(41, ticks))
        rows = r.stdout.splitlines()
        check(rows[0] == "ticks 100  overruns 1  missed periods 7  period 1000.000 us",
              "header %r" % rows[0])
        check("physics           100     70.500     70.500     70.500     70.500     70.500"
              "     70.500     70.500" in rows, "physics row missing:\n" + r.stdout)
        check(rows[-1] == "missing ticks: 10-11,50-52", "missing line %r" % rows[-1])

        two = make_lines(41, range(10)) + make_lines(42, range(20))
        r = run(src, tmp, two)
        check(r.returncode != 0 and "--pid" in r.stderr, "two processes not refused: %s"
              % r.stderr)
        r = run(src, tmp, two, "--pid", "42", "--json")
        check(r.returncode == 0 and json.loads(r.stdout)["ticks"] == 20, "--pid 42: %s"
              % (r.stdout or r.stderr))

        r = run(src, tmp, [])
        check(r.returncode == 1 and "no hilsim:tick" in r.stderr, "empty trace: %s" % r.stderr)

    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("trace-analyze: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
