#!/usr/bin/python3
"""The hilsim:sync LTTng event against the run's own report, with a real lttng-sessiond
(scripts/trace-run.sh) and babeltrace2.

    test_sync_trace.py SOURCE_DIR HILSIM CLIENT_LIB

`hilsim run` serves config/arm2-shm.yaml on a sync clock (rt.clock.mode sync, source shm: the
shm command owner's command arrival) at a 20 ms period, while a Python client (SCHED_FIFO, so
a loaded machine delays it little) writes a command every 20.1 ms, 0.5 % slow, for 3 s, goes
silent for 1 s (hilsim must lose the events and free-run; the client is declared lost too) and
claims and writes again for 3 s. Then every
hilsim:sync event of the trace is read back with babeltrace2 and the summary's sync clock line
is recomputed from them:
  events        the sum of the events fields;
  locks         transitions into locked (2) from free (0) or acquiring (1);
  losses        transitions from any other state to free;
  locked ticks  events with state locked; their |phase_error_ns|: the worst (exact to the
                summary's 0.1 us) and the root mean square (to 0.1 us: the trace carries each
                error truncated to the ns);
  last          the last event's phase error, drift (drift_ppb / 1000) and state;
  doubles       the extra events of the locked ticks (no tick is excused: catch_up);
and every executed tick has exactly one event (the stop line's tick count). What is compared is
the trace with the report of the same run, so the machine's speed cannot change the verdict;
the run must lock at least once for the comparison to mean something. Exit 77 (skip) when the
LTTng tools are missing.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
PERIOD_S = 0.02

CLIENT = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import hilsim_client as hc
bench, period = sys.argv[2], float(sys.argv[3])
deadline = time.monotonic() + 60
while True:
    try:
        c = hc.Client(bench)
        break
    except hc.HilsimError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.02)
c.claim()
cmd = [dict(mode=hc.MODE_POSITION_PD, q=0.3, kp=300.0, kd=20.0),
       dict(mode=hc.MODE_POSITION_PD, q=0.6, kp=120.0, kd=8.0)]
for seconds in (3.0, None, 3.0):  # writing, silent, writing
    t0 = time.monotonic()
    if seconds is None:
        time.sleep(1.0)
        c.claim()  # declared lost while silent: claim again
        continue
    for k in range(int(seconds / period)):
        time.sleep(max(0.0, t0 + k * period - time.monotonic()))
        try:
            c.write_commands(cmd)
        except hc.HilsimError:
            print("client: write %d of phase %r failed, state %r" % (k, seconds,
                  vars(c.read_state()).get("client_status")), flush=True)
            raise
c.detach()
"""

EVENT = re.compile(r"hilsim:sync: .*\{ tick = (\d+), phase_error_ns = (-?\d+), adjust_ns = "
                   r"(-?\d+), drift_ppb = (-?\d+), events = (\d+), state = (\d+) \}")
SUMMARY = re.compile(
    r"sync clock \((.*?)\): (\w+) at the end; (\d+) events, locked (\d+) times?, lost (\d+) "
    r"times?; (\d+) ticks locked: phase error rms ([\d.]+) us, worst ([\d.]+) us, last "
    r"([-+][\d.]+) us; drift ([-+][\d.]+) ppm; cycles while locked without an event (\d+), with "
    r"two or more (\d+) \((\d+) ticks")
STATES = ("free", "acquiring", "locked", "holdover")


def config(src, tmp, name):
    with open(os.path.join(src, "config", "arm2-shm.yaml")) as f:
        text = f.read()
    for old, new in (("name: arm2-shm", "name: " + name),
                     ("file: ../models/", "file: %s/models/" % src),
                     ("  period_ns: 1000000\n", "  period_ns: %d\n" % int(PERIOD_S * 1e9)),
                     ("  substeps: 1\n", "  substeps: %d\n" % int(PERIOD_S / 0.001)),
                     ("  warmup_ticks: 200\n",
                      "  warmup_ticks: 20\n  overrun_policy: catch_up\n"
                      "  overrun_leaky: {threshold: 1000000000}\n"
                      "  clock: {mode: sync, sync: {source: shm, lock_window_s: 0.005, max_slew_ppm: 50000, "
                      "lock_ticks: 4, timeout_periods: 10}}\n")):
        if old not in text:
            raise RuntimeError("config/arm2-shm.yaml changed: %r not found" % old)
        text = text.replace(old, new)
    if "trace:\n  enabled: true" not in text:
        text += "trace:\n  enabled: true\n"
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    src, hilsim, client_lib = sys.argv[1:4]
    for tool in ("lttng", "lttng-sessiond", "babeltrace2"):
        if not shutil.which(tool):
            print("SKIP: %s not installed" % tool)
            return SKIP
    name = "synctrace%d" % os.getpid()
    with tempfile.TemporaryDirectory(prefix="hs-sync-trace-") as tmp:
        cfg = config(src, tmp, name)
        trace = os.path.join(tmp, "trace")
        env = dict(os.environ, HILSIM_CLIENT_LIB=client_lib)
        # the client waits for the segment; hilsim runs 8 s under the tracer
        client = subprocess.Popen(["chrt", "-f", "40", "/usr/bin/python3", "-c", CLIENT,
                                   os.path.join(src, "python"), name, str(PERIOD_S * 1.005)],
                                  env=env)
        try:
            run = subprocess.run([os.path.join(src, "scripts", "trace-run.sh"), "-o", trace,
                                  "--", hilsim, "run", cfg, "--duration", "8"],
                                 capture_output=True, text=True, timeout=300)
        finally:
            try:
                client.wait(timeout=60 if run.returncode == 0 else 0.1)
            except (subprocess.TimeoutExpired, NameError):
                client.kill()
                client.wait()
        if run.returncode != 0:
            print("trace-run failed (%d):\n%s\n%s" % (run.returncode, run.stdout, run.stderr))
            return 1
        if client.returncode != 0:
            print("the client failed (%d)" % client.returncode)
            return 1
        bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=300)
        if bt.returncode != 0:
            print("babeltrace2 failed:\n" + bt.stderr)
            return 1
    ev = [tuple(int(x) for x in m.groups()) for m in map(EVENT.search, bt.stdout.splitlines())
          if m]
    s = SUMMARY.search(run.stdout)
    stopped = re.search(r"stopped: .*; ticks (\d+),", run.stdout)
    if not s or not stopped or not ev:
        print("no sync summary, stop line or hilsim:sync event:\n" + run.stdout + run.stderr)
        return 1
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    ticks = [e[0] for e in ev]
    check(len(ev) == int(stopped[1]), "%d hilsim:sync events for %s ticks" % (len(ev), stopped[1]))
    check(ticks == list(range(ticks[0], ticks[0] + len(ticks))),
          "the events' ticks are not consecutive (catch_up: no period is skipped)")
    prev, locks, losses = 0, 0, 0
    for e in ev:
        state = e[5]
        locks += state == 2 and prev in (0, 1)
        losses += state == 0 and prev != 0
        prev = state
    locked = [e for e in ev if e[5] == 2]
    errs = [e[1] for e in locked]
    rms = math.sqrt(sum(x * x for x in errs) / len(errs)) if errs else 0.0
    worst = max((abs(x) for x in errs), default=0)
    doubles = sum(e[4] - 1 for e in locked if e[4] > 1)
    want = dict(state=s[2], events=int(s[3]), locks=int(s[4]), losses=int(s[5]),
                locked_ticks=int(s[6]), rms_us=float(s[7]), worst_us=float(s[8]),
                last_us=float(s[9]), drift_ppm=float(s[10]), doubles=int(s[12]),
                excused=int(s[13]))
    got = dict(state=STATES[ev[-1][5]], events=sum(e[4] for e in ev), locks=locks, losses=losses,
               locked_ticks=len(locked), rms_us=rms / 1e3, worst_us=worst / 1e3,
               last_us=ev[-1][1] / 1e3, drift_ppm=ev[-1][3] / 1e3, doubles=doubles, excused=0)
    print("summary: " + s[0])
    print("trace:   %s" % ", ".join("%s %s" % (k, round(v, 3) if isinstance(v, float) else v)
                                    for k, v in got.items()))
    for k in ("state", "events", "locks", "losses", "locked_ticks", "doubles", "excused"):
        check(got[k] == want[k], "%s: trace %s, summary %s" % (k, got[k], want[k]))
    # the summary prints 0.1 us (0.1 ppm): half of that is rounding, and the trace's rms is over
    # errors truncated to the ns (at most 1 ns each)
    for k, tol in (("worst_us", 0.05), ("last_us", 0.05), ("drift_ppm", 0.05),
                   ("rms_us", 0.05 + 0.001)):
        check(abs(got[k] - want[k]) <= tol + 1e-9, "%s: trace %.4f, summary %.1f"
              % (k, got[k], want[k]))
    check(want["locks"] >= 1, "the run never locked: the comparison says little")
    check(want["losses"] >= 1, "the client's silence was not a loss")
    if failures:
        print("the trace (tick, phase_error_ns, adjust_ns, drift_ppb, events, state):")
        for e in ev:
            print("  %d %d %d %d %d %d" % e)
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("hilsim:sync agrees with the summary over %d ticks (%d locked)" % (len(ev), len(locked)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
