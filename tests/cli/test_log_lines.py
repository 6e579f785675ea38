"""What a person reads of a run on a host that cannot keep up (issue 31.7): a biped ticking every
20 µs overruns every tick, and used to print a warning line per overrun and per skip (889 of
939 lines of a 3 s run). Now each second prints at most its first overrun, its first skip and
one summary of the rest: a run prints at most three such lines per second of its wall time
(plus the safe-hold line), whatever the host's speed, and the summaries count what they held
back.

Stdlib only. Environment: HILSIM, HS_SOURCE_DIR."""
import math
import os
import re
import subprocess
import time
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ.get("HS_SOURCE_DIR", ".")


class OverrunLines(unittest.TestCase):
    def test_overruns_are_summarised_per_second(self):
        t0 = time.monotonic()
        r = subprocess.run(
            [HILSIM, "run", os.path.join(SRC, "config", "biped-stand.yaml"), "--no-rt",
             "--duration", "0.5", "--set", "rt.period_ns=100000", "--set", "physics.substeps=4",
             "--set", "physics.step_s=0.000025",
             "--set", "bench.name=loglines%d" % os.getpid()],
            capture_output=True, text=True, timeout=300)
        wall_s = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        lines = [l for l in r.stderr.splitlines() if re.search(r"overrun|skipped|skip", l)]
        summaries = [l for l in lines if "more overrun" in l]
        print("\n".join(lines))
        self.assertTrue(summaries, "no summary of held-back overruns")
        held = sum(int(re.search(r"(\d+) more overrun", l).group(1)) for l in summaries)
        self.assertGreater(held, 20)  # 4 steps of ~100 µs in a 100 µs tick: every one overruns
        # At most 3 lines per started second of the process's life (first overrun, first skip,
        # summary), plus the safe-hold line.
        self.assertLessEqual(len(lines), 3 * (math.ceil(wall_s) + 1) + 1, "\n".join(lines))


if __name__ == "__main__":
    unittest.main()
