#!/usr/bin/env python3
"""The four CSV writers name their columns by one scheme: docs/recording.md, "CSV columns".

Each writer is run for real on the two-joint arm (joints SHOULDER and ELBOW; sensors TIP_ACCEL,
TIP_GYRO, WRIST_FT): `hilsim sim --out`, `hilsim replay --out` of a `hilsim run --record`,
python/hilsim_record.py's write_csv of the same recording, and examples/logger.py on a running
shm bench. Every header column must be one the table allows (its templates expanded over the
bench's joints, sensors and bodies), `time_s` first, and the columns for the same quantity are
spelled the same in every writer that has them.

Environment (set by ctest): HILSIM, HS_SOURCE_DIR, HILSIM_CLIENT_LIB.
"""

import csv
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HILSIM"]
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_record  # noqa: E402

JOINTS = ["SHOULDER", "ELBOW"]
SENSORS = ["TIP_ACCEL", "TIP_GYRO", "WRIST_FT"]


def table():
    """The columns the docs' table allows: (regex, writers) per template."""
    with open(os.path.join(SRC, "docs", "recording.md")) as fh:
        text = fh.read()
    part = text.split("## CSV columns", 1)[1]
    rows = [l for l in part.splitlines() if l.startswith("| `")]
    out = []
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for tmpl in re.findall(r"`([^`]+)`", cells[0]):
            for t in tmpl.split():
                rx = re.escape(t)
                rx = rx.replace(r"J\.", "(?:%s)\\." % "|".join(JOINTS))
                rx = rx.replace(r"S\.FIELD", "(?:%s)\\.[a-z][a-z0-9]*" % "|".join(SENSORS))
                rx = rx.replace(r"B\.", "arm\\.")
                rx = rx.replace(r"NAME\.replay", ".+\\.replay")
                out.append((re.compile("^%s$" % rx), cells[3]))
    return out


def header(path):
    with open(path) as fh:
        return next(csv.reader(fh))


class Columns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.allowed = table()
        cls.cfg = {}
        for name in ("arm2-demo", "arm2-shm"):
            with open(os.path.join(SRC, "config", name + ".yaml")) as fh:
                text = fh.read().replace("../models/", SRC + "/models/")
            bench = "%s-csv%d" % (name, os.getpid())
            path = os.path.join(cls.tmp.name, name + ".yaml")
            with open(path, "w") as fh:
                fh.write(text.replace("name: " + name, "name: " + bench, 1))
            cls.cfg[name] = (path, bench)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def check(self, cols, writer):
        self.assertEqual(cols[0], "time_s", writer)
        for c in cols:
            self.assertTrue(any(rx.match(c) for rx, _ in self.allowed),
                            "%s writes column %r, which docs/recording.md's table does not "
                            "name" % (writer, c))
        for j in JOINTS:
            self.assertIn(j + ".q", cols, writer)
            self.assertIn(j + ".encoder_count", cols, writer)

    def run_hilsim(self, *args):
        p = subprocess.run([HILSIM, *args], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, HILSIM_CTL_DIR=self.tmp.name))
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        return p

    def test_four_writers(self):
        demo, _ = self.cfg["arm2-demo"]
        self.run_hilsim("sim", demo, "--duration", "0.05", "--out", self.path("sim.csv"))
        sim = header(self.path("sim.csv"))
        self.check(sim, "hilsim sim --out")

        rec = self.path("rec")
        self.run_hilsim("run", demo, "--no-rt", "--duration", "0.1",
                        "--record", rec)
        p = subprocess.run([HILSIM, "replay", rec, "--out", self.path("replay.csv")],
                           capture_output=True, text=True, timeout=300)
        self.assertIn(p.returncode, (0, 4), p.stderr)
        replay = header(self.path("replay.csv"))
        self.check(replay, "hilsim replay --out")
        self.assertIn("ELBOW.encoder_position.replay", replay)

        hilsim_record.open_recording(rec).write_csv(self.path("reader.csv"))
        reader = header(self.path("reader.csv"))
        self.check(reader, "hilsim_record.write_csv")
        # the C and the Python reader name the recording's columns alike
        self.assertEqual(reader, [c for c in replay if not c.endswith(".replay")])

        shm, bench = self.cfg["arm2-shm"]
        hs = subprocess.Popen([HILSIM, "run", shm, "--no-rt", "--duration", "30"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 120
            while not os.path.exists("/dev/shm/hilsim-" + bench):
                self.assertIsNone(hs.poll())
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.1)
            lg = subprocess.run([sys.executable, os.path.join(SRC, "examples", "logger.py"),
                                 bench, self.path("logger.csv"), "--ticks", "20", "--timeout",
                                 "10"], capture_output=True, text=True, timeout=120)
            self.assertEqual(lg.returncode, 0, lg.stdout + lg.stderr)
        finally:
            hs.terminate()
            hs.communicate(timeout=120)
        logger = header(self.path("logger.csv"))
        self.check(logger, "examples/logger.py")
        # the same quantity is spelled the same by every writer that has it
        for col in ("ELBOW.q", "ELBOW.dq", "ELBOW.tau", "ELBOW.encoder_count"):
            for cols in (sim, replay, reader, logger):
                self.assertIn(col, cols)
        for cols in (replay, reader, logger):
            self.assertIn("ELBOW.current_A", cols)
        for s in ("TIP_ACCEL.z", "WRIST_FT.fz"):
            for cols in (sim, replay, reader):
                self.assertIn(s, cols)


if __name__ == "__main__":
    unittest.main()
