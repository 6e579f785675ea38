#!/usr/bin/python3
"""Per-phase timing table from an LTTng trace of hilsim:tick events.

    trace-analyze.py TRACE_DIR [--json] [--pid PID] [--range-ns 10000000000]

Runs babeltrace2 on TRACE_DIR, and prints the same table as the in-process stats
(rt/rt_stats.c) using the same log-linear histogram and percentile definition (hilsim/rt/rt_hist.h):
1 ns bins below 128 ns, then 128 bins per power of two. With N samples and p in parts per
million, k = ceil(p * N / 1e6) (at least 1); k = 1 is the exact minimum, k = N the exact
maximum; otherwise the percentile is the midpoint of the smallest bin whose cumulative count
reaches k, clamped into [min, max], or the exact maximum when k is only reached in the overflow
(samples >= --range-ns). Also lists tick numbers missing from 0..last (skipped periods, or lost
events). When the trace has the vpid context and holds several processes,
choose one with --pid. Python 3 standard library only.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys

PHASES = [  # (row name, event field)
    ("wake", "wake_latency_ns"),
    ("inputs", "inputs_ns"),
    ("actuation", "actuation_ns"),
    ("physics", "physics_ns"),
    ("sensors", "sensors_ns"),
    ("outputs", "outputs_ns"),
    ("tick", "tick_ns"),
]
PCT_PPM = [500000, 990000, 999000, 999900]
PCT_LABEL = ["p50", "p99", "p99.9", "p99.99"]
PCT_KEY = ["p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns"]

EVENT_RE = re.compile(r"\bhilsim:(\w+): .*\{ ([^{}]*) \}\s*$")
FIELD_RE = re.compile(r"(\w+) = (-?\d+)")
VPID_RE = re.compile(r"\{ vpid = (\d+) \}")


SUB_BITS = 7
SUB = 1 << SUB_BITS
REL_ERR = 1.0 / (2 * SUB)


def bin_of(v):
    if v < SUB:
        return max(v, 0)
    shift = v.bit_length() - 1 - SUB_BITS
    return (shift << SUB_BITS) + (v >> shift)


def bin_value(i):
    """Midpoint of the integers in bin i (rt_hist.c: hs_hist_bin_value)."""
    if i < 2 * SUB:
        return i
    shift = (i >> SUB_BITS) - 1
    lo = ((i & (SUB - 1)) | SUB) << shift
    return lo + ((1 << shift) - 1) // 2


class Hist:
    def __init__(self, range_ns):
        self.range_ns = range_ns
        self.bins = {}
        self.overflow = 0
        self.count = 0
        self.min = self.max = 0
        self.sum = 0

    def record(self, v):
        if v >= self.range_ns:
            self.overflow += 1
        else:
            idx = bin_of(v)
            self.bins[idx] = self.bins.get(idx, 0) + 1
        if self.count == 0 or v < self.min:
            self.min = v
        if self.count == 0 or v > self.max:
            self.max = v
        self.count += 1
        self.sum += v

    def percentile(self, p_ppm):
        k = max(1, (p_ppm * self.count + 999999) // 1000000)
        if k == 1:
            return self.min
        if k >= self.count:
            return self.max
        cum = 0
        for idx in sorted(self.bins):
            cum += self.bins[idx]
            if cum >= k:
                return min(max(bin_value(idx), self.min), self.max)
        return self.max

    def mean(self):
        return self.sum / self.count if self.count else 0.0


def read_events(trace_dir, babeltrace):
    proc = subprocess.Popen([babeltrace, trace_dir], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        m = EVENT_RE.search(line)
        if m:
            v = VPID_RE.search(line)
            yield (m.group(1), {k: int(v) for k, v in FIELD_RE.findall(m.group(2))},
                   int(v.group(1)) if v else None)
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise RuntimeError("babeltrace2 failed on %s: %s" % (trace_dir, err.strip()))


def ranges(nums):
    """[1,2,3,7] -> '1-3,7'"""
    out, start, prev = [], None, None
    for n in nums:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(str(start) if start == prev else "%d-%d" % (start, prev))
            start = prev = n
    if start is not None:
        out.append(str(start) if start == prev else "%d-%d" % (start, prev))
    return ",".join(out)


def select_process(events, pid):
    """Keeps one process's events: pid if given, else the only one; errors if ambiguous."""
    events = list(events)
    pids = sorted({p for _, _, p in events if p is not None})
    if pid is not None:
        return [(n, f) for n, f, p in events if p == pid]
    if len(pids) > 1:
        raise RuntimeError("the trace holds several processes (vpid %s): choose one with --pid"
                           % ", ".join(map(str, pids)))
    return [(n, f) for n, f, _ in events]


# enum hs_rt_log_kind in hilsim/rt/rt_ring.h: policy_action's action for a skip; its value is the
# number of periods skipped.
LOG_SKIP = 1


def analyze(events, range_ns):
    hists = {name: Hist(range_ns) for name, _ in PHASES}
    ticks, planned, overruns, actions, overrun_events = [], {}, 0, 0, 0
    skipped, skip_at = 0, {}
    counts = {}
    for name, f in events:
        counts[name] = counts.get(name, 0) + 1
        if name == "tick":
            for row, field in PHASES:
                hists[row].record(f[field])
            ticks.append(f["tick"])
            planned[f["tick"]] = f["planned_ns"]
            overruns += 1 if f["overrun"] else 0
        elif name == "overrun":
            overrun_events += 1
        elif name == "policy_action":
            actions += 1
            if f["action"] == LOG_SKIP:
                skipped += f["value"]
                skip_at[f["tick"]] = f["value"]
    seen = set(ticks)
    last = max(ticks) if ticks else -1
    missing = [t for t in range(0, last + 1) if t not in seen]
    period = 0
    if len(seen) > 1:
        lo, hi = min(seen), last
        period = (planned[hi] - planned[lo]) // (hi - lo)
    return {
        "period_ns": period,
        "ticks": len(ticks),
        "overruns": overruns,
        # The skip actions, not the gaps: a skip after the last tick leaves no gap, yet the
        # run counted it.
        "missed_periods": skipped,
        "range_ns": range_ns,
        "pct_rel_err": float("%.6f" % REL_ERR),
        "first_tick": min(ticks) if ticks else None,
        "last_tick": last if ticks else None,
        "missing_ticks": missing,
        "skipped_after_last": skip_at.get(last, 0) if ticks else 0,
        "duplicate_ticks": len(ticks) - len(seen),
        "overrun_events": overrun_events,
        "policy_actions": actions,
        "events": counts,
        "phases": hists,
    }


def phase_json(h):
    d = {"count": h.count, "overflow": h.overflow}
    if h.count:
        d.update({"min_ns": h.min, "mean_ns": float("%.1f" % h.mean()), "max_ns": h.max})
        for p, key in zip(PCT_PPM, PCT_KEY):
            d[key] = h.percentile(p)
    return d


def format_text(r):
    lines = ["ticks %d  overruns %d  missed periods %d  period %.3f us" %
             (r["ticks"], r["overruns"], r["missed_periods"], r["period_ns"] / 1e3)]
    head = "%-10s %10s %10s %10s" % ("phase [us]", "count", "min", "mean")
    head += "".join(" %10s" % label for label in PCT_LABEL) + " %10s" % "max"
    lines.append(head)
    for name, _ in PHASES:
        h = r["phases"][name]
        row = "%-10s %10d" % (name, h.count)
        if h.count:
            row += " %10.3f %10.3f" % (h.min / 1e3, h.mean() / 1e3)
            row += "".join(" %10.3f" % (h.percentile(p) / 1e3) for p in PCT_PPM)
            row += " %10.3f" % (h.max / 1e3)
        lines.append(row)
    lines.append("percentiles are log-linear bin midpoints, within %.2f %% of the samples"
                 % (100.0 * REL_ERR))
    lines.append("missing ticks: %s" % (ranges(r["missing_ticks"]) or "none"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace_dir")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--pid", type=int, help="analyze this process (vpid) only")
    ap.add_argument("--range-ns", type=int, default=10000000000,
                    help="histogram range, as the loop's hist_range_ns (overflow at and above; "
                         "hilsim run uses rt.histogram_max_us)")
    ap.add_argument("--babeltrace2", default=shutil.which("babeltrace2") or "babeltrace2")
    a = ap.parse_args()
    if a.range_ns <= 0 or a.range_ns > 1 << 36:
        ap.error("--range-ns must be in 1..%d" % (1 << 36))
    try:
        events = select_process(read_events(a.trace_dir, a.babeltrace2), a.pid)
        r = analyze(events, a.range_ns)
    except (OSError, RuntimeError) as e:
        print("trace-analyze: %s" % e, file=sys.stderr)
        return 1
    if r["ticks"] == 0:
        print("trace-analyze: no hilsim:tick events in %s" % a.trace_dir, file=sys.stderr)
        return 1
    if a.json:
        out = dict(r)
        out["phases"] = {name: phase_json(r["phases"][name]) for name, _ in PHASES}
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
