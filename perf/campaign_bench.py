#!/usr/bin/env python3
"""Campaign throughput and per-run overhead (issue 30), measured side by side in one run.

  perf/campaign_bench.py BUILD_DIR [RUNS] [ROUNDS]

For RUNS runs of the bundled push scenario on the standing biped (hilsim's own PD hold, so every
run is a `hilsim sim`), each round times, in turn: the same RUNS `hilsim sim --scenario` command
lines run one after another by this script (the bare baseline), `hilsim campaign run -j 1`, and
`hilsim campaign run -j 2`. Prints the medians over ROUNDS, runs per minute, the campaign's
per-run overhead against the bare runs (-j 1 / bare), and the speed-up from 1 to 2 workers.
A benchmark, not a test: on a shared machine read the ratios, not the absolute times."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    hilsim = os.path.join(build, "hilsim")
    tmp = tempfile.mkdtemp(prefix="hs-campbench-")
    try:
        with open(os.path.join(SRC, "scenarios", "biped-side-push.yaml")) as f:
            scen = f.read().replace("force_n: [0, 40, 0]", "force_n: [0, ${f}, 0]")
        with open(os.path.join(tmp, "s.yaml"), "w") as f:
            f.write(scen)
        camp = os.path.join(tmp, "c.yaml")
        with open(camp, "w") as f:
            f.write("campaign:\n  name: bench\n  config: %s\n  scenario: s.yaml\n"
                    "  runs_per_cell: %d\nparameters:\n  f: {uniform: [30, 50]}\n"
                    % (os.path.join(SRC, "config", "biped-stand.yaml"), runs))
        times = {"bare": [], "j1": [], "j2": []}
        for k in range(rounds):
            # The bare runs replay the campaign's own command lines (same scenario files).
            ref = os.path.join(tmp, "ref%d" % k)
            subprocess.run([hilsim, "campaign", "run", camp, "--out", ref, "-j", "2", "--quiet"],
                           capture_output=True)
            cmds = []
            for r in sorted(os.listdir(os.path.join(ref, "runs"))):
                with open(os.path.join(ref, "runs", r, "command.txt")) as f:
                    cmds.append(f.readline().split())
            t0 = time.monotonic()
            for c in cmds:
                subprocess.run(c, capture_output=True)
            times["bare"].append(time.monotonic() - t0)
            for j in ("1", "2"):
                out = os.path.join(tmp, "j%s-%d" % (j, k))
                t0 = time.monotonic()
                subprocess.run([hilsim, "campaign", "run", camp, "--out", out, "-j", j, "--quiet"],
                               capture_output=True)
                times["j" + j].append(time.monotonic() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        print("%d runs of biped-side-push (4 s simulated each), %d rounds, medians "
              "(load average at the end: %.1f on %d cores):" % (runs, rounds, os.getloadavg()[0],
                                                                os.cpu_count()))
        for k, label in (("bare", "bare hilsim sim, one after another"),
                         ("j1", "hilsim campaign run -j 1"), ("j2", "hilsim campaign run -j 2")):
            print("  %-36s %7.2f s  %6.1f runs/min  (rounds: %s)" % (
                label, med[k], runs / med[k] * 60, ", ".join("%.2f" % t for t in times[k])))
        print("per-run overhead of the campaign (-j 1 / bare): %+.1f %%" % ((med["j1"] / med["bare"] - 1) * 100))
        print("speed-up from 1 to 2 workers (-j 1 / -j 2):     %.2fx" % (med["j1"] / med["j2"]))
    finally:
        shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
