"""`hilsim run` with a real shm client in this process (python/hilsim_client.py over ctypes):
the client commands 1e9 N·m, the divergence guard trips, hilsim stops with its one-line cause,
the summary, exit status 3 and no stale segment left behind (issue 10: it used to abort with
exit 134 and leave the segment). The fault flag in the published state is checked
deterministically in tests/bench/test_bench_guard.c. No timing is asserted."""
import errno
import os
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HILSIM"]
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_client as hc  # noqa: E402


class RunFaultWithShmClient(unittest.TestCase):
    def test_client_torque_trips_the_guard(self):
        name = "guard%d" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            text = f.read()
        text = text.replace("name: arm2-shm", "name: " + name)
        text = text.replace("file: ../models/", "file: %s/models/" % SRC)
        # No torque, current or speed limit (the case of issue 10: an unlimited actuator).
        text = text.replace("torque_limit_nm: 80", "torque_limit_nm: .inf\n    velocity_limit: .inf")
        text = text.replace("current_limit_a: 25", "current_limit_a: .inf")
        text = text.replace("  warmup_ticks: 200\n",
                            "  warmup_ticks: 200\n  overrun_leaky: {threshold: 1000000000}\n")
        for key in ("velocity_limit: .inf", "current_limit_a: .inf", "overrun_leaky"):
            self.assertIn(key, text, "config/arm2-shm.yaml changed: update this test")
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "bench.yaml")
            with open(cfg, "w") as f:
                f.write(text)
            out, err = open(os.path.join(tmp, "out"), "w+"), open(os.path.join(tmp, "err"), "w+")
            proc = subprocess.Popen([HILSIM, "run", cfg, "--no-rt", "--duration", "60"],
                                    stdout=out, stderr=err)
            try:
                deadline = time.monotonic() + 30
                while True:
                    self.assertIsNone(proc.poll(), "hilsim exited early")
                    try:
                        c = hc.Client(name)
                        break
                    except hc.HilsimError as e:
                        if e.errno not in (errno.ENOENT, errno.EAGAIN) or \
                                time.monotonic() > deadline:
                            raise
                    time.sleep(0.02)
                c.claim()
                c.wait_tick(5.0)
                c.write_command(c.find_joint("ELBOW"), hc.MODE_TORQUE, tau_ff=1e9)
                rc = proc.wait(timeout=60)
                c.detach()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
            out.close()
            err.close()
        self.assertEqual(rc, 3, stderr)
        self.assertRegex(stderr, r"plant fault during the run: tick \d+ \(t = [0-9.e+-]+ s\): "
                                 r"link \w+ of arm: ")
        self.assertIn("safe stop: 2 joints", stderr)
        self.assertIn("plant fault: tick", stdout)
        self.assertFalse(os.path.exists("/dev/shm/hilsim-" + name), "stale segment left")


if __name__ == "__main__":
    unittest.main()
