#!/usr/bin/python3
"""Tracing end to end: records trace_demo under a real lttng-sessiond with
scripts/trace-run.sh, then checks that the trace holds every tick number 0..N-1 and that
scripts/trace-analyze.py gives exactly the in-process stats (same bins, same percentile
definition, same numbers). Exit 77 (skip) when the LTTng tools are missing.

    test_trace.py SOURCE_DIR TRACE_DEMO [TICKS [skip STALL_SEQ STALL_NS]]

With "skip" the demo runs the skip policy and stalls once: the trace must then miss exactly
the periods the loop counted as skipped (and at least the ones the stall forces).
"""
import json
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    src, demo = sys.argv[1], sys.argv[2]
    ticks = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    skip = sys.argv[4:7] if len(sys.argv) > 6 and sys.argv[4] == "skip" else None
    period = 1000000
    demo_args = [str(ticks), str(period)] + (skip if skip else ["catch-up"])
    for tool in ("lttng", "lttng-sessiond", "babeltrace2"):
        if not shutil.which(tool):
            print("SKIP: %s not installed" % tool)
            return SKIP
    with tempfile.TemporaryDirectory(prefix="hs-trace-test-") as tmp:
        out = tmp + "/trace"
        run = subprocess.run([src + "/scripts/trace-run.sh", "-o", out, "--", demo] + demo_args, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            print("trace-run failed (%d):\n%s\n%s" % (run.returncode, run.stdout, run.stderr))
            return 1
        lines = run.stdout.strip().splitlines()
        assert lines[-1] == out, "trace-run printed %r, expected %r" % (lines[-1], out)
        inproc = json.loads(lines[0])
        ana = subprocess.run(["/usr/bin/python3", src + "/scripts/trace-analyze.py", "--json", out],
                             capture_output=True, text=True, timeout=120)
        if ana.returncode != 0:
            print("trace-analyze failed:\n" + ana.stderr)
            return 1
        traced = json.loads(ana.stdout)
        text = subprocess.run(["/usr/bin/python3", src + "/scripts/trace-analyze.py", out],
                              capture_output=True, text=True, timeout=120).stdout

    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    check(inproc["ticks"] == ticks, "in-process ticks %d != %d" % (inproc["ticks"], ticks))
    check(traced["ticks"] == ticks, "trace holds %d tick events, expected %d"
          % (traced["ticks"], ticks))
    if skip:
        forced = int(skip[2]) // period  # periods the stall alone must skip
        check(traced["first_tick"] == 0, "first tick %s" % traced["first_tick"])
        # A skip by the last tick leaves no gap in the numbering, only its policy event.
        tail = traced["skipped_after_last"]
        check(len(traced["missing_ticks"]) + tail == inproc["missed_periods"],
              "trace misses %d ticks and skips %d after the last, loop counted %d skipped"
              % (len(traced["missing_ticks"]), tail, inproc["missed_periods"]))
        check(inproc["missed_periods"] >= forced, "only %d periods skipped, the stall forces %d"
              % (inproc["missed_periods"], forced))
        check(traced["last_tick"] == ticks - 1 + inproc["missed_periods"] - tail,
              "last tick %s" % traced["last_tick"])
    else:
        check(traced["first_tick"] == 0 and traced["last_tick"] == ticks - 1,
              "tick range %s..%s" % (traced["first_tick"], traced["last_tick"]))
        check(traced["missing_ticks"] == [], "missing ticks: %s" % traced["missing_ticks"][:20])
    check(traced["events"].get("can_frame") == ticks, "can_frame events: %s"
          % traced["events"].get("can_frame"))
    check(traced["duplicate_ticks"] == 0, "duplicate ticks: %d" % traced["duplicate_ticks"])
    check(traced["period_ns"] == inproc["period_ns"], "period %d != %d"
          % (traced["period_ns"], inproc["period_ns"]))
    check(traced["missed_periods"] == inproc["missed_periods"], "missed periods %d != %d"
          % (traced["missed_periods"], inproc["missed_periods"]))
    check(traced["overruns"] == inproc["overruns"], "overruns %d != %d"
          % (traced["overruns"], inproc["overruns"]))
    check(traced["overrun_events"] == inproc["overruns"], "overrun events %d != %d"
          % (traced["overrun_events"], inproc["overruns"]))
    for phase, want in inproc["phases"].items():
        got = traced["phases"][phase]
        for key, val in want.items():
            check(got.get(key) == val, "%s.%s: trace %s, in-process %s"
                  % (phase, key, got.get(key), val))
    # The text tables agree row for row too (the demo prints its table on stderr).
    demo_rows = [l for l in run.stderr.splitlines() if l.split()[:1] and l.split()[0] in
                 inproc["phases"]]
    trace_rows = [l for l in text.splitlines() if l.split()[:1] and l.split()[0] in
                  inproc["phases"]]
    demo_head = [l for l in run.stderr.splitlines() if l.startswith("ticks ")]
    trace_head = [l for l in text.splitlines() if l.startswith("ticks ")]
    check(demo_head == trace_head, "headers differ: %s / %s" % (demo_head, trace_head))
    check(len(demo_rows) == 7 and demo_rows == trace_rows,
          "text tables differ:\n%s\n---\n%s" % ("\n".join(demo_rows), "\n".join(trace_rows)))
    print(text)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("trace and in-process stats agree on %d ticks" % ticks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
