#!/usr/bin/env python3
"""The ctypes bindings (python/hilsim_client.py) against the small C bench server
(tests/client/shm_test_server.c), plus the examples: logger.py and pd_controller.

Environment (set by ctest): HILSIM_CLIENT_LIB, HS_TEST_SERVER, HS_PD_CONTROLLER, HS_SOURCE_DIR.
"""

import csv
import errno
import os
import signal
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("HS_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_client as hc  # noqa: E402

SERVER = os.environ.get("HS_TEST_SERVER")


class BenchServer:
    """Runs shm_test_server at 1 ms ticks under a unique bench name until finish(): a test does
    not guess how many ticks its clients need on a loaded machine."""

    def __init__(self, tag, env=None):
        self.bench = "py%d-%s" % (os.getpid(), tag)
        self.proc = subprocess.Popen([SERVER, self.bench, "0", "1000"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, **(env or {})))
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            self.proc.kill()
            raise RuntimeError("server did not start: %r %s" % (line, self.proc.stderr.read()))

    def finish(self):
        """Stops the server after it has run at least two ticks more (so it has seen what the
        clients did last) and returns its output."""
        with hc.Client(self.bench) as obs:  # an observer: it never claims the commands
            obs.wait_tick(30.0)
            obs.wait_tick(30.0)
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=60)
        if self.proc.returncode != 0:
            raise RuntimeError("server failed: %s" % err)
        return out

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            os.unlink("/dev/shm/hilsim-" + self.bench)
        except FileNotFoundError:
            pass


@unittest.skipUnless(SERVER, "HS_TEST_SERVER not set (run through ctest)")
class TestBindings(unittest.TestCase):
    def test_missing_bench_is_a_clear_error(self):
        with self.assertRaises(hc.HilsimError) as cm:
            hc.Client("py%d-nothing-here" % os.getpid())
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertIn("no bench", str(cm.exception))

    def test_attach_read_and_command_a_c_server(self):
        srv = BenchServer("pd")
        try:
            with hc.Client(srv.bench) as c:
                self.assertEqual((c.info.joint_count, c.info.imu_count, c.info.ft_count),
                                 (3, 1, 1))
                self.assertEqual(c.info.abi_version, hc.ABI_VERSION)
                self.assertEqual(c.joint_names, ["J0", "RARM_ELBOW", "SLIDER"])
                self.assertEqual(c.joint_units, ["rad", "rad", "m"])
                elbow = c.find_joint("RARM_ELBOW")
                self.assertEqual(elbow, 1)
                self.assertEqual(c.find_sensor("FT_R"), (hc.KIND_FORCE, 0))
                self.assertEqual(c.find_sensor("IMU"), (hc.KIND_IMU, 0))
                with self.assertRaises(hc.HilsimError):
                    c.find_joint("NO_SUCH_JOINT")

                tick, _ = c.wait_tick(30.0)
                st = c.read_state()
                self.assertGreaterEqual(st.tick, tick)
                self.assertEqual(st.imu_accel[0], (0.0, 0.0, 9.81))
                self.assertEqual(st.ft_force[0][2], float(st.tick))
                self.assertAlmostEqual(st.sim_time_s, st.tick * 1e-3, places=9)
                self.assertEqual((st.bench_flags, st.safe_hold), (0, False))

                with self.assertRaises(hc.HilsimError) as cm:
                    c.write_command(elbow, hc.MODE_POSITION_PD, q=0.5, kp=50.0, kd=10.0)
                self.assertEqual(cm.exception.errno, errno.EPERM)
                c.claim()
                # Hold RARM_ELBOW at 0.5 rad against the server's constant -1 N m load for 1.5 s
                # of ticks: a PD with kp 50 settles at 0.5 - 1/50 = 0.48 rad.
                for _ in range(1500):
                    c.wait_tick(30.0)
                    c.write_command(elbow, hc.MODE_POSITION_PD, q=0.5, kp=50.0, kd=10.0)
                st = c.read_state()
                self.assertAlmostEqual(st.q[elbow], 0.48, delta=0.01)
                self.assertGreaterEqual(st.command_seq, c.last_command_seq - 5)
                self.assertEqual(st.client_status, hc.CLIENT_ACTIVE)
            out = srv.finish()
        finally:
            srv.kill()
        line = [ln for ln in out.splitlines() if ln.startswith("joint RARM_ELBOW")][0]
        f = line.split()
        self.assertEqual(int(f[f.index("mode") + 1]), hc.MODE_POSITION_PD)
        self.assertEqual(float(f[f.index("target") + 1]), 0.5)
        self.assertGreater(int(f[f.index("fresh") + 1]), 0)
        self.assertIn("client status 0", out)  # released at detach

    def test_crashed_server_is_reported_then_reattach(self):
        srv = BenchServer("gone")
        try:
            c = hc.Client(srv.bench)
            c.wait_tick(30.0)
            c.server_check()  # alive: no error
            srv.proc.kill()
            srv.proc.wait()
            with self.assertRaises(hc.HilsimError) as cm:
                c.wait_tick(0.05)
            self.assertEqual(cm.exception.errno, errno.EIDRM)
            with self.assertRaises(hc.HilsimError) as cm:
                c.server_check()
            self.assertEqual(cm.exception.errno, errno.EIDRM)
            c.detach()
            # A new server on the same name takes the dead one's segment over.
            srv2 = BenchServer("gone")
            try:
                with hc.Client(srv2.bench) as c2:
                    c2.wait_tick(30.0)
                    c2.claim()
                srv2.proc.send_signal(signal.SIGTERM)
                srv2.proc.communicate(timeout=60)
            finally:
                srv2.kill()
        finally:
            srv.kill()

    def test_stopped_server_refuses_commands(self):
        srv = BenchServer("stopped")
        try:
            c = hc.Client(srv.bench)
            c.claim()
            c.write_command(0, hc.MODE_TORQUE, tau_ff=0.1)
            srv.proc.send_signal(signal.SIGTERM)
            srv.proc.communicate(timeout=60)
            with self.assertRaises(hc.HilsimError) as cm:
                c.write_command(0, hc.MODE_TORQUE, tau_ff=0.1)
            self.assertEqual(cm.exception.errno, errno.ESHUTDOWN)
            with self.assertRaises(hc.HilsimError) as cm:
                c.read_state()
            self.assertEqual(cm.exception.errno, errno.ESHUTDOWN)
            c.detach()
        finally:
            srv.kill()

    def test_bench_safe_hold_flag(self):
        """A bench in safe hold says so in every snapshot, whatever the commands."""
        srv = BenchServer("hold", env={"HS_TEST_BENCH_FLAGS": str(hc.BENCH_SAFE_HOLD)})
        try:
            with hc.Client(srv.bench) as c:
                c.wait_tick(30.0)
                st = c.read_state()
                self.assertEqual(st.bench_flags, hc.BENCH_SAFE_HOLD)
                self.assertTrue(st.safe_hold)
            srv.finish()
        finally:
            srv.kill()

    def test_logger_and_pd_controller_examples(self):
        srv = BenchServer("examples")
        try:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "log.csv")
                # The server runs until finish(), so the logger gets its 300 ticks however slowly
                # it starts; a long tick timeout rides out a starved machine.
                logger = subprocess.Popen(
                    [sys.executable, os.path.join(SRC, "examples", "logger.py"), srv.bench, out,
                     "--ticks", "300", "--timeout", "30"], stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)
                pd = os.environ.get("HS_PD_CONTROLLER")
                if pd:
                    r = subprocess.run([pd, srv.bench, "500", "50", "10"], capture_output=True,
                                       text=True, timeout=60)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertIn("500 ticks held", r.stdout)
                    self.assertIn("RARM_ELBOW", r.stdout)
                lout, lerr = logger.communicate(timeout=60)
                self.assertEqual(logger.returncode, 0, lerr)
                with open(out, newline="") as f:
                    rows = list(csv.reader(f))
            srv.finish()
        finally:
            srv.kill()
        # docs/recording.md, "CSV columns": time_s first, the logger's own columns last.
        head = rows[0]
        self.assertEqual(head[0], "time_s")
        self.assertIn("RARM_ELBOW.q", head)
        self.assertIn("SLIDER.q", head)
        self.assertEqual(len(rows), 301)
        col = {name: i for i, name in enumerate(head)}
        ticks = [int(r[col["tick"]]) for r in rows[1:]]
        missed = [int(r[col["missed"]]) for r in rows[1:]]
        for r in rows[1:]:
            self.assertGreaterEqual(int(r[col["state_tick"]]), int(r[col["tick"]]))
        for a, b, m in zip(ticks, ticks[1:], missed[1:]):
            self.assertEqual(b, a + 1 + m)  # every tick seen once or counted missed



class ConstantsMatchTheHeader(unittest.TestCase):
    """The module's constants (documented in python/README.md) equal include/hilsim/shm_abi.h's
    enums and flags, read from the header itself: a value added or renumbered there fails here."""

    def test_constants(self):
        import re
        with open(os.path.join(SRC, "include", "hilsim", "shm_abi.h")) as f:
            header = f.read()

        def enum_values(prefix):
            """name -> value for the enumerators starting with prefix (C numbering rules)."""
            out, nxt = {}, 0
            for name, expr in re.findall(r"\b(%s[A-Z_]+)\s*(?:=\s*([^,/\n]+))?," % prefix, header):
                if name.endswith("_MAX"):
                    continue
                if expr:
                    e = expr.strip().replace("u <<", " <<")
                    nxt = eval(e, {})  # the header's literals: integers and shifts only
                out[name[len(prefix):]] = nxt
                nxt += 1
            return out

        for prefix, module_prefix in (("HS_SHM_MODE_", "MODE_"), ("HS_SHM_CLOCK_", "CLOCK_"),
                                      ("HS_SHM_CLIENT_", "CLIENT_"), ("HS_SHM_KIND_", "KIND_")):
            values = enum_values(prefix)
            self.assertTrue(values, prefix)
            for name, value in values.items():
                with self.subTest(name=prefix + name):
                    self.assertEqual(getattr(hc, module_prefix + name), value)
        self.assertEqual(hc.BENCH_SAFE_HOLD, enum_values("HS_SHM_BENCH_")["SAFE_HOLD"])
        self.assertEqual(hc.BENCH_FAULT, enum_values("HS_SHM_BENCH_")["FAULT"])

if __name__ == "__main__":
    unittest.main(verbosity=2)
