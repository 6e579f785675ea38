#!/usr/bin/env python3
"""End to end: `hilsim run` serving config/arm2-shm.yaml over shared memory, with local clients
through the ctypes bindings (python/hilsim_client.py).

  lockstep      in lockstep, a client sees every tick exactly once, its PD commands move both
                joints to a target, the static error matches gravity load / kp
  client_killed a client SIGKILLed mid-motion, in lockstep (the dead client's ticks run after
                the lockstep timeout): its joints fall back to the safe behaviour (brake) after
                the command timeout and the server declares it lost after the client timeout,
                both judged in ticks of simulated time; a fresh client takes over and moves the
                joints; the summary counts the fallbacks and the lost client
  occupied      a second hilsim with the same bench name refuses with one clear line, exit 1
  sigterm       SIGTERM: clean exit 0, waiting clients get ESHUTDOWN, the segment is removed
  stale_segment a SIGKILLed hilsim leaves its segment; the next start names it stale

Environment (set by ctest): HS_HILSIM, HILSIM_CLIENT_LIB, HS_SOURCE_DIR.
Each test runs its own bench name, so tests and a demo can run side by side.
"""

import errno
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get("HS_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_client as hc  # noqa: E402

HILSIM = os.environ.get("HS_HILSIM")
G = 9.81
# models/arm2.wrl: both joints rotate about Y, links point up (+Z) at q = 0.
# Upper arm 2.0 kg, centre of mass 0.2 m from the shoulder, elbow 0.4 m out; forearm 1.2 kg at
# 0.15 m from the elbow; tool 1.0 kg at 0.3 + 0.05 m from the elbow.
M_UPPER, C_UPPER, L_UPPER = 2.0, 0.2, 0.4
FOREARM = ((1.2, 0.15), (1.0, 0.35))
KP = (300.0, 120.0)
KD = (20.0, 8.0)
SETTLE_S = 2.0  # simulated time per move; the slower joint's envelope decays ~e^-8 in it


def gravity_torques(q1, q2):
    """Static joint torques (N m) the motors must supply at (q1, q2), magnitudes."""
    s1, s12 = math.sin(q1), math.sin(q1 + q2)
    elbow = G * sum(m * c for m, c in FOREARM) * s12
    shoulder = G * (M_UPPER * C_UPPER * s1 + sum(m for m, _ in FOREARM) * L_UPPER * s1) + elbow
    return abs(shoulder), abs(elbow)



class Bench:
    """hilsim run on a copy of config/arm2-shm.yaml under a unique bench name."""

    def __init__(self, tmp, tag, duration=None, name=None, clock=None):
        self.name = name or "shmio%d-%s" % (os.getpid(), tag)
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            text = f.read()
        text = text.replace("name: arm2-shm", "name: " + self.name)
        text = text.replace("file: ../models/", "file: %s/models/" % SRC)
        # A loaded test machine overruns ticks; the leaky overrun bucket would then latch the
        # bench's own safe hold over every source, which is not what these tests are about.
        text = text.replace("  warmup_ticks: 200\n",
                            "  warmup_ticks: 200\n  overrun_leaky: {threshold: 1000000000}\n" +
                            ("  clock: %s\n" % clock if clock else ""))
        if "overrun_leaky" not in text:
            raise RuntimeError("config/arm2-shm.yaml changed: cannot relax the overrun bucket")
        self.config = os.path.join(tmp, self.name + ".yaml")
        with open(self.config, "w") as f:
            f.write(text)
        self.out_path = os.path.join(tmp, self.name + ".out")
        self.err_path = os.path.join(tmp, self.name + ".err")
        self.duration = duration
        self.proc = None

    @property
    def segment(self):
        return "/dev/shm/hilsim-" + self.name

    def start(self):
        cmd = [HILSIM, "run", self.config, "--no-rt"]
        if self.duration:
            cmd += ["--duration", str(self.duration)]
        self.out = open(self.out_path, "w")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err)
        return self

    def attach(self, timeout_s=30.0):
        """A client once the segment is ready (it appears before its magic is set)."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("hilsim exited %d: %s" % (self.proc.returncode, self.stderr()))
            try:
                return hc.Client(self.name)
            except hc.HilsimError as e:
                if e.errno not in (errno.ENOENT, errno.EAGAIN) or time.monotonic() > deadline:
                    raise
            time.sleep(0.02)

    def stop(self, sig=signal.SIGTERM, timeout_s=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=timeout_s)
        self.out.close()
        self.err.close()
        return rc

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def cleanup(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc:
            self.out.close()
            self.err.close()
        try:
            os.unlink(self.segment)
        except FileNotFoundError:
            pass


def pd_commands(targets):
    return [dict(mode=hc.MODE_POSITION_PD, q=q, kp=kp, kd=kd)
            for q, kp, kd in zip(targets, KP, KD)]


def run_for(client, sim_s, each, wall_timeout_s=120.0):
    """Calls each(tick, missed, state) on every tick for sim_s of simulated time."""
    deadline = time.monotonic() + wall_timeout_s
    t0 = None
    st = None
    while True:
        tick, missed = client.wait_tick(5.0)
        st = client.read_state()
        if t0 is None:
            t0 = st.sim_time_s
        each(tick, missed, st)
        if st.sim_time_s - t0 >= sim_s:
            return st
        if time.monotonic() > deadline:
            raise TimeoutError("bench too slow: %.3f s simulated" % (st.sim_time_s - t0))


def check_static_error(tc, states, targets, what):
    """At rest under a PD, kp e = gravity load: |e| = tau_g(q) / kp per joint."""
    st = states[-1]
    earlier = next(s for s in reversed(states) if s.sim_time_s <= st.sim_time_s - 0.5)
    tau_g = gravity_torques(st.q[0], st.q[1])
    for j in range(2):
        expected = tau_g[j] / KP[j]
        err = abs(st.q[j] - targets[j])
        # 10 % of the expected error for unmodelled effects (gear efficiency, ODE constraint
        # softness), plus 1 mrad for what is left of the transient.
        tc.assertAlmostEqual(err, expected, delta=0.1 * expected + 1e-3,
                             msg="%s joint %d: |q - q*| %.5f, gravity/kp %.5f (q %r)" %
                             (what, j, err, expected, st.q))
        tc.assertAlmostEqual(abs(st.tau[j]), tau_g[j], delta=0.05 * tau_g[j] + 0.05,
                             msg="%s joint %d: published torque vs gravity load" % (what, j))
        # At rest: the position, not the (solver-noisy) velocity, stays put over the last 0.5 s.
        tc.assertLess(abs(st.q[j] - earlier.q[j]), 1e-3, "%s joint %d still moving" % (what, j))


KILLED_CLIENT = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import hilsim_client as hc
c = hc.Client(sys.argv[2])
c.claim()
while True:
    c.wait_tick(5.0)
    # shoulder: PD hold; elbow: the actuator's velocity loop at 0.4 rad/s (moving when killed)
    c.write_commands([dict(mode=hc.MODE_POSITION_PD, q=0.3, kp=300.0, kd=20.0),
                      dict(mode=hc.MODE_VELOCITY, dq=0.4)])
    if c.lockstep:
        c.step()
"""


@unittest.skipUnless(HILSIM, "HS_HILSIM not set (run through ctest)")
class TestShmIo(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory()
        self.tmp = self.tmpdir.name
        self.benches = []

    def tearDown(self):
        for b in self.benches:
            b.cleanup()
        self.tmpdir.cleanup()

    def bench(self, tag, **kw):
        b = Bench(self.tmp, tag, **kw)
        self.benches.append(b)
        return b

    def test_lockstep_pd_reaches_target(self):
        # In lockstep (a stalled client holds the bench, never times out on the wall clock):
        # on a loaded machine a Python client in wall mode can stall past the 200 ms client
        # timeout and be declared lost, which is not what this test is about.
        b = self.bench("lockstep", clock="{mode: lockstep, lockstep_timeout_s: 60, "
                       "on_timeout: hold}").start()
        c = b.attach()
        self.assertTrue(c.lockstep)
        self.assertEqual(c.joint_names, ["SHOULDER", "ELBOW"])
        self.assertEqual(c.joint_units, ["rad", "rad"])
        self.assertEqual(c.find_sensor("tip"), (hc.KIND_IMU, 0))
        self.assertEqual(c.find_sensor("WRIST_FT"), (hc.KIND_FORCE, 0))
        self.assertEqual(c.info.tick_period_ns, 1000000)
        self.assertEqual(c.info.command_timeout_ns, 50000000)
        self.assertEqual(c.info.client_timeout_ns, 200000000)
        c.claim()
        targets = (0.5, 0.3)  # from the initial 0.3, 0.6
        seen = []

        def each(tick, missed, st):
            seen.append((tick, missed, st))
            c.write_commands(pd_commands(targets))
            c.step()

        st = run_for(c, SETTLE_S, each)
        states = [s for _, _, s in seen]
        # Lockstep accounting: the client saw every tick exactly once, none missed.
        for (t0, _, _), (t1, m1, _) in zip(seen, seen[1:]):
            self.assertEqual((t1, m1), (t0 + 1, 0))
        self.assertEqual(c.missed_ticks, 0)
        # One physics step per executed tick; periods the server skipped after an overrun are
        # gaps in the tick numbers without a step.
        for t, _, snap in seen:
            self.assertGreaterEqual(snap.tick, t)  # read after the wait: that tick or newer
        snapshots = list({s.tick: s for _, _, s in seen}.values())  # a snapshot may repeat
        self.assertGreater(len(snapshots), 100)
        for s0, s1 in zip(snapshots, snapshots[1:]):
            if s1.tick == s0.tick + 1:
                self.assertAlmostEqual(s1.sim_time_s - s0.sim_time_s, 1e-3, delta=1e-9)
            self.assertGreater(s1.sim_time_s, s0.sim_time_s)
            self.assertLessEqual(s1.sim_time_s - s0.sim_time_s,
                                 (s1.tick - s0.tick) * 1e-3 + 1e-9)
        self.assertEqual(st.client_status, hc.CLIENT_ACTIVE)
        # The server consumes the last command at the next tick and echoes its seq.
        c.wait_tick(5.0)
        c.step()
        c.wait_tick(5.0)
        st = c.read_state()
        self.assertEqual(st.command_seq, c.last_command_seq)
        self.assertEqual(st.stale_joints, 0)
        check_static_error(self, states + [st], targets, "lockstep")
        # Sensors at rest, averaged over the last 0.5 s (the solver's jitter reaches the
        # accelerometer): the tip IMU measures 1 g of specific force, the wrist F/T carries the
        # 1 kg tool.
        rest = [s for s in states if s.sim_time_s >= st.sim_time_s - 0.5]
        mean = [sum(s.imu_accel[0][k] for s in rest) / len(rest) for k in range(3)]
        self.assertAlmostEqual(math.sqrt(sum(a * a for a in mean)), G, delta=0.3)
        mean = [sum(s.ft_force[0][k] for s in rest) / len(rest) for k in range(3)]
        self.assertAlmostEqual(math.sqrt(sum(f * f for f in mean)), 1.0 * G, delta=0.3)
        c.detach()
        self.assertEqual(b.stop(), 0, b.stderr())
        self.assertIn("clients lost", b.stderr())
        self.assertNotIn("SAFE HOLD", b.stdout())

    def test_killed_client_safe_behaviour_then_takeover(self):
        # Lockstep: the killed client's last command and heartbeat are stamped with the tick
        # that took them, and once it is dead each tick runs after the 10 ms lockstep timeout,
        # so the 50 ms command timeout and the 200 ms client timeout are 50 and 200 ticks
        # however slow the machine is (on the wall clock a 10 ms tick would see them after 5
        # and 20 ticks).
        b = self.bench("killed", clock="{mode: lockstep, lockstep_timeout_s: 0.01, "
                       "on_timeout: step}").start()
        obs = b.attach()
        self.assertTrue(obs.lockstep)
        killed = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT,
                                   os.path.join(SRC, "python"), b.name])
        states = []  # every state the observer saw, before and after the kill
        try:
            # Wait until the killed client's commands drive the elbow.
            deadline = time.monotonic() + 60
            while True:
                obs.wait_tick(5.0)
                st = obs.read_state()
                states.append(st)
                if st.client_status == hc.CLIENT_ACTIVE and st.stale_joints == 0 and \
                        st.dq[1] > 0.1:
                    break
                self.assertLess(time.monotonic(), deadline, "client never drove the elbow")
                self.assertIsNone(killed.poll(), "client exited")
            q_kill = st.q[1]
            killed.send_signal(signal.SIGKILL)
            killed.wait()
        finally:
            if killed.poll() is None:
                killed.kill()
                killed.wait()
        run_for(obs, 0.5, lambda t, m, s: states.append(s))
        trace = "\n".join("tick %d seq %d stale %d client %d q %.4f dq %.4f" %
                          (s.tick, s.command_seq, s.stale_joints, s.client_status, s.q[1],
                           s.dq[1]) for s in states)
        # The tick Tc that took the client's last command: after every state that shows an
        # older command (B < Tc), at or before the first that shows it (Tc <= A). The observer
        # releases nothing and may miss ticks; with none missed around Tc, B + 1 == A.
        last = max(s.command_seq for s in states)
        a = min(s.tick for s in states if s.command_seq == last)
        b_ = max(s.tick for s in states if s.command_seq < last)
        # stale from the tick where now - Tc > 50 ms: Tc + 51; lost where now minus the last
        # heartbeat (its step, seen at Tc or the tick after) > 200 ms: Tc + 201 or Tc + 202
        for s in states:
            if s.tick > b_:
                why = "tick %d: stale %d (Tc in %d..%d)\n%s" % (s.tick, s.stale_joints, b_ + 1,
                                                                a, trace)
                if s.tick <= b_ + 51:
                    self.assertEqual(s.stale_joints, 0, why)
                if s.tick >= a + 51:
                    self.assertEqual(s.stale_joints, 2, why)
                lost = s.client_status == hc.CLIENT_LOST
                if s.tick <= b_ + 201:
                    self.assertFalse(lost, "tick %d lost early\n%s" % (s.tick, trace))
                if s.tick >= a + 202:
                    self.assertTrue(lost, "tick %d not lost\n%s" % (s.tick, trace))
        self.assertTrue(any(s.tick >= a + 202 for s in states), trace)
        stale_at = next(s.tick for s in states if s.tick > b_ and s.stale_joints == 2)
        after = [s for s in states if s.tick > stale_at + 20]
        self.assertTrue(after)
        for s in after:  # the brake stops the elbow where it was
            self.assertEqual(s.stale_joints, 2, trace)
            self.assertLess(abs(s.dq[1]), 0.02, "brake: the elbow keeps moving\n" + trace)
        self.assertLess(abs(after[-1].q[1] - q_kill), 0.05)
        self.assertEqual(obs.read_state().client_status, hc.CLIENT_LOST)
        # A fresh client takes over and moves the joints.
        obs.claim()
        targets = (0.4, q_kill - 0.3)
        states = []
        run_for(obs, SETTLE_S, lambda t, m, s: (obs.write_commands(pd_commands(targets)),
                                                 obs.step(), states.append(s)))
        obs.wait_tick(5.0)
        obs.step()
        obs.wait_tick(5.0)
        st = obs.read_state()
        self.assertEqual(st.client_status, hc.CLIENT_ACTIVE)
        self.assertEqual(st.stale_joints, 0)
        check_static_error(self, states + [st], targets, "takeover")
        obs.detach()
        self.assertEqual(b.stop(), 0, b.stderr())
        out, err = b.stdout(), b.stderr()
        self.assertNotIn("SAFE HOLD", out)
        for joint in ("SHOULDER", "ELBOW"):
            m = re.search(r"joint %s: (\d+) stale-command fallbacks" % joint, out)
            self.assertIsNotNone(m, out)
            self.assertGreaterEqual(int(m.group(1)), 1)
        m = re.search(r"shm: .* (\d+) clients lost", err)
        self.assertIsNotNone(m, err)
        self.assertEqual(int(m.group(1)), 1)

    def test_occupied_name_is_refused(self):
        a = self.bench("occupied").start()
        a.attach().detach()
        second = subprocess.run([HILSIM, "run", a.config, "--no-rt", "--duration", "1"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(second.returncode, 1, second.stderr)
        errors = [ln for ln in second.stderr.splitlines() if "error" in ln]
        self.assertEqual(len(errors), 1, second.stderr)
        self.assertIn("bench.name '%s'" % a.name, errors[0])
        self.assertIn("in use by running server pid %d" % a.proc.pid, errors[0])
        self.assertIn(os.path.basename(a.config), errors[0])
        # The first one is untouched.
        self.assertTrue(os.path.exists(a.segment))
        c = a.attach()
        c.wait_tick(5.0)
        c.detach()
        self.assertEqual(a.stop(), 0, a.stderr())
        self.assertFalse(os.path.exists(a.segment))

    def test_sigterm_removes_the_segment(self):
        b = self.bench("sigterm").start()  # no duration: runs until the signal
        c = b.attach()
        self.assertTrue(os.path.exists(b.segment))
        c.wait_tick(5.0)
        self.assertEqual(b.stop(signal.SIGTERM), 0, b.stderr())
        self.assertFalse(os.path.exists(b.segment))
        with self.assertRaises(hc.HilsimError) as cm:
            for _ in range(10):  # at most the ticks published before the stop
                c.wait_tick(5.0)
        self.assertEqual(cm.exception.errno, errno.ESHUTDOWN)
        c.detach()
        self.assertIn("SIGTERM", b.stderr())

    def test_fatal_signal_marks_the_segment_stopped(self):
        # SIGQUIT (systemd's watchdog sends SIGABRT; both take the emergency path): the process
        # dies of the signal, and before it does its emergency hook marks the segment stopped,
        # so a waiting client learns ESHUTDOWN instead of EIDRM after its own timeout.
        b = self.bench("quit").start()
        c = b.attach()
        c.wait_tick(5.0)
        b.proc.send_signal(signal.SIGQUIT)
        self.assertEqual(b.proc.wait(timeout=60), -signal.SIGQUIT, b.stderr())
        with self.assertRaises(hc.HilsimError) as cm:
            for _ in range(1000):  # at most the ticks published before the signal
                c.wait_tick(20.0)
        self.assertEqual(cm.exception.errno, errno.ESHUTDOWN, b.stderr())
        c.detach()
        self.assertIn("emergency stop", b.stderr())

    def test_stale_segment_is_taken_over(self):
        a = self.bench("stale").start()
        a.attach().detach()
        a.proc.kill()
        a.proc.wait()
        self.assertTrue(os.path.exists(a.segment))  # SIGKILL: nobody removed it
        second = subprocess.run([HILSIM, "run", a.config, "--no-rt", "--duration", "1"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("took over stale segment", second.stderr)
        self.assertIn("server pid %d is dead" % a.proc.pid, second.stderr)
        self.assertFalse(os.path.exists(a.segment))  # and removed its own at the end

    def test_shm_list_and_remove(self):
        a = self.bench("cli").start()
        a.attach().detach()
        name = os.path.basename(a.segment)[len("hilsim-"):]

        def listing():
            out = subprocess.run([HILSIM, "shm", "list"], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            rows = [l.split() for l in out.stdout.splitlines() if l.split()[:1] == [name]]
            self.assertEqual(len(rows), 1, out.stdout)
            return rows[0]

        row = listing()
        self.assertEqual(row[1:3], [str(a.proc.pid), "alive"])
        live = subprocess.run([HILSIM, "shm", "remove", name], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(live.returncode, 1, live.stderr)
        self.assertIn("in use by running pid %d" % a.proc.pid, live.stderr)
        self.assertTrue(os.path.exists(a.segment))
        a.proc.kill()
        a.proc.wait()
        row = listing()
        self.assertEqual(row[1:3], [str(a.proc.pid), "dead"])
        gone = subprocess.run([HILSIM, "shm", "remove", name], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(gone.returncode, 0, gone.stderr)
        self.assertFalse(os.path.exists(a.segment))
        bad = subprocess.run([HILSIM, "shm", "remove"], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(bad.returncode, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
