#!/usr/bin/env python3
"""UNFINISHED, NOT YET SHOWN TO WORK: a first trial (--duration 30 --baseline 15) printed
its first line and then did not finish within 200 s; the hang is not yet found. No figures
have been measured with it.

Soak: a 1 kHz bench with a controller attached, stress-ng beside it and a hostile control
client hammering its socket, compared with a baseline run without the hostile client.

  perf/soak_ctl.py [--duration S] [--baseline S] [--build DIR] [--config FILE]

Both runs: `hilsim run CONFIG --no-rt --duration S` (free-running at the config's period,
1 kHz for config/arm2-shm.yaml), examples/pd_controller holding every joint over shared
memory, `stress-ng --cpu 2` beside them. The soak run adds, on the control socket, for its
whole duration:
  trickler     one byte every 2 s, never a newline (reconnects when dropped)
  pipeliner    20,000 `status` lines, never reading (reconnects when dropped)
  flood        40 connections at once every 5 s (past 32 get "error: busy")
  prober       `status` every 0.5 s on a fresh connection, timed from connect to answer
It prints, for both runs, the bench's own deadline misses per 1000 s, the shm and controller
counters (states published, commands applied, torn reads, clients lost, controller ticks and
timeouts), the bench's RSS (first and last minute, largest), and for the soak the prober's
latencies (median, p99, max, how many over 100 ms). The exit status is 0 when the soak holds
the issue's bar: no more own misses than the baseline's rate allows (+ a margin of 2), the
RSS within 2 MiB of its first minute, no client lost, no controller timeout beyond the
baseline's, and every `status` answered within 100 ms; else 1. Not in CI: a soak takes an
hour by default (--duration 3600).
"""

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Hostile:
    """The hostile clients, each a thread, until stop is set."""

    def __init__(self, sock):
        self.sock, self.stop = sock, threading.Event()
        self.latencies, self.failures, self.busy, self.drops = [], 0, 0, 0
        self.threads = [threading.Thread(target=f, daemon=True)
                        for f in (self.trickler, self.pipeliner, self.flood, self.prober)]

    def connect(self):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(10)
        c.connect(self.sock)
        return c

    def trickler(self):
        while not self.stop.is_set():
            try:
                c = self.connect()
                while not self.stop.wait(2.0):
                    c.send(b"s")
            except OSError:
                self.drops += 1
            time.sleep(0.1)

    def pipeliner(self):
        data = b"status\n" * 20000
        while not self.stop.is_set():
            try:
                c = self.connect()
                c.setblocking(False)
                sent = 0
                while sent < len(data) and not self.stop.is_set():
                    try:
                        sent += c.send(data[sent:])
                    except BlockingIOError:
                        time.sleep(0.05)
                # never read the answers: wait until the server drops us
                while not self.stop.is_set():
                    try:
                        c.send(b"status\n")
                        time.sleep(0.5)
                    except BlockingIOError:
                        time.sleep(0.5)
                    except OSError:
                        break
                c.close()
                self.drops += 1
            except OSError:
                time.sleep(0.1)

    def flood(self):
        while not self.stop.wait(5.0):
            conns = []
            try:
                for _ in range(40):
                    conns.append(self.connect())
                for c in conns[32:]:
                    c.settimeout(5)
                    if c.recv(200).startswith(b"error: busy"):
                        self.busy += 1
            except OSError:
                pass
            for c in conns:
                c.close()

    def prober(self):
        while not self.stop.wait(0.5):
            t0 = time.monotonic()
            try:
                c = self.connect()
                c.sendall(b"status\n")
                answer = c.makefile("rb").readline()
                dt = time.monotonic() - t0
                c.close()
                if answer.startswith(b"ok bench"):
                    self.latencies.append(dt)
                else:
                    self.failures += 1
            except OSError:
                self.failures += 1

    def start(self):
        for t in self.threads:
            t.start()

    def join(self):
        self.stop.set()
        for t in self.threads:
            t.join(30)


def run(args, tmp, name, duration, hostile):
    with open(args.config) as f:
        cfg = f.read().replace("../models/", os.path.join(ROOT, "models") + "/")
    cfg = re.sub(r"name: [\w-]+", "name: " + name, cfg, count=1)
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(cfg)
    env = dict(os.environ, HILSIM_CTL_DIR=tmp)
    stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--timeout", "%ds" % (duration + 60)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bench = subprocess.Popen([os.path.join(args.build, "hilsim"), "run", path, "--no-rt",
                              "--duration", str(duration)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env)
    sock = os.path.join(tmp, "hilsim-%s.ctl" % name)
    while not os.path.exists(sock) and bench.poll() is None:
        time.sleep(0.05)
    ctl = subprocess.Popen([os.path.join(args.build, "examples", "pd_controller"), name,
                            str(duration * 2000)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    h = Hostile(sock) if hostile else None
    if h:
        h.start()
    rss, t0 = [], time.monotonic()
    while bench.poll() is None:
        r = rss_kib(bench.pid)
        if r:
            rss.append((time.monotonic() - t0, r))
        time.sleep(1.0)
    if h:
        h.join()
    out = bench.communicate()[0]
    cout = ctl.communicate(timeout=120)[0]
    stress.terminate()
    stress.wait()
    m = re.search(r"stopped: [^;]*; ticks (\d+), deadline misses (\d+), skipped periods (\d+)", out)
    shm = re.search(r"shm: (\d+) states published, (\d+) commands applied, .*?(\d+) torn reads, "
                    r"(\d+) stale joint-ticks, (\d+) clients lost", out)
    pd = re.search(r"(\d+) ticks held \((\d+) missed, (\d+) timeouts\)", cout)
    if not (m and shm and pd):
        sys.exit("soak: cannot read the run's summary:\n%s\n%s" % (out[-3000:], cout[-1000:]))
    first = [r for t, r in rss if t < 60] or [rss[0][1]]
    last = [r for t, r in rss if t > rss[-1][0] - 60] or [rss[-1][1]]
    res = dict(ticks=int(m.group(1)), misses=int(m.group(2)), skipped=int(m.group(3)),
               published=int(shm.group(1)), applied=int(shm.group(2)), torn=int(shm.group(3)),
               stale=int(shm.group(4)), lost=int(shm.group(5)), held=int(pd.group(1)),
               ctl_missed=int(pd.group(2)), timeouts=int(pd.group(3)),
               rss_first=statistics.median(first), rss_last=statistics.median(last),
               rss_max=max(r for _, r in rss))
    res["rate"] = res["misses"] * 1000.0 / max(res["ticks"] / 1000.0, 1e-9)
    if h:
        lat = sorted(h.latencies) or [float("inf")]
        res.update(probes=len(h.latencies), probe_fail=h.failures, busy=h.busy, drops=h.drops,
                   lat_med=statistics.median(lat), lat_p99=lat[int(0.99 * (len(lat) - 1))],
                   lat_max=lat[-1], over_100ms=sum(x > 0.1 for x in lat))
    return res


def show(label, r):
    print("%s: %d ticks, own deadline misses %d (%.2f per 1000 s), skipped periods %d"
          % (label, r["ticks"], r["misses"], r["rate"], r["skipped"]))
    print("  shm: %d states published, %d commands applied, %d torn reads, %d stale joint-ticks, "
          "%d clients lost; controller: %d ticks held, %d missed, %d timeouts"
          % (r["published"], r["applied"], r["torn"], r["stale"], r["lost"], r["held"],
             r["ctl_missed"], r["timeouts"]))
    print("  RSS: %.0f KiB in the first minute, %.0f KiB in the last, %d KiB at most"
          % (r["rss_first"], r["rss_last"], r["rss_max"]))
    if "probes" in r:
        print("  status: %d answered (%d failed): median %.1f ms, p99 %.1f ms, max %.1f ms, "
              "%d over 100 ms; %d 'busy' refusals, %d hostile connections dropped"
              % (r["probes"], r["probe_fail"], r["lat_med"] * 1e3, r["lat_p99"] * 1e3,
                 r["lat_max"] * 1e3, r["over_100ms"], r["busy"], r["drops"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=int, default=3600, help="soak seconds (default 3600)")
    ap.add_argument("--baseline", type=int, default=0,
                    help="baseline seconds (default: a quarter of the soak, at most 900)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--config", default=os.path.join(ROOT, "config", "arm2-shm.yaml"))
    args = ap.parse_args()
    base_s = args.baseline or max(60, min(900, args.duration // 4))
    with tempfile.TemporaryDirectory() as tmp:
        print("baseline %d s, then soak %d s, each at the config's rate with stress-ng --cpu 2"
              % (base_s, args.duration), flush=True)
        base = run(args, tmp, "soak%d-base" % os.getpid(), base_s, False)
        show("baseline", base)
        soak = run(args, tmp, "soak%d" % os.getpid(), args.duration, True)
        show("soak", soak)
    allowed = base["rate"] * soak["ticks"] / 1000.0 / 1000.0 * 1.0 + 2
    checks = [
        ("own deadline misses within the baseline's rate (+2)", soak["misses"] <= allowed),
        ("RSS flat (last minute within 2 MiB of the first)",
         soak["rss_last"] - soak["rss_first"] <= 2048),
        ("no client lost, no torn read", soak["lost"] == 0 and soak["torn"] == 0),
        ("no controller timeout beyond the baseline's", soak["timeouts"] <= base["timeouts"]),
        ("every status answered within 100 ms",
         soak["probe_fail"] == 0 and soak["over_100ms"] == 0 and soak["probes"] > 0),
    ]
    for what, ok in checks:
        print("  %s %s" % ("ok  " if ok else "FAIL", what))
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
