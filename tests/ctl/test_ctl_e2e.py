#!/usr/bin/env python3
"""End to end: live control of a running bench through `hilsim ctl`.

`hilsim run --clock lockstep --no-rt` serves config/arm2-shm.yaml (renamed per test run); the
test is its lockstep client over real shared memory (python/hilsim_client.py): it releases every
tick itself and holds both joints with a position PD at their initial positions, and a loaded
machine changes nothing. Commands go through the `hilsim ctl` binary. A command counts as
applied once `status` says so; effects are compared over the same number of ticks.

  status           answers ok with the bench, the clock and counters
  refused          a malformed or unknown command: one error line, exit 2, counted as
                   rejected, never applied
  push             horizontal pushes of 200 N for 50 ms on ELBOW deflect the PD-held elbow
                   far more than it moves unpushed, and opposite pushes along clearly
                   different paths
  sensor faults    stuck: the ELBOW reading repeats exactly while a push moves the arm;
                   clear: it moves again; offset: the reading jumps by the offset
  loop counters    `status` reads the loop's counters as of the last tick boundary: with the
                   bench held between two ticks, k ticks later tick and ticks moved by exactly k
  inject           a noise step (sigma 0.01) on the ELBOW reading: its spread is 0.01 while the
                   step lasts and back to the still arm's after; bad steps are refused with the
                   scenario parser's line:column and never take a slot
  scenario         a scenario file started live plays to its end: its verdict and JUnit file
                   (written where asked, relative to the client's directory) say PASS with one
                   test case; started again and stopped early, it says ERROR (the expectation
                   not decided, JUnit <error>), and its default files appear next to the socket
  unauthorised     (as root only) with the socket's mode widened to 0666 by hand, a process
                   of another user (nobody) connects but gets one "error: not authorised" line
                   and is counted; its command never runs
  stop             the run ends by itself with exit 0 and its summary counts the commands

Environment (set by ctest): HS_HILSIM, HS_SOURCE_DIR, HILSIM_CLIENT_LIB.
"""

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HS_HILSIM"]
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_client  # noqa: E402

WINDOW = 300  # ticks compared, 0.3 s at 1 kHz


class LiveControl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.name = "ctl%d-e2e" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        cfg = cfg.replace("name: arm2-shm", "name: " + cls.name)
        cls.cfg = os.path.join(cls.tmp.name, "bench.yaml")
        with open(cls.cfg, "w") as f:
            f.write(cfg)
        cls.env = dict(os.environ, HILSIM_CTL_DIR=cls.tmp.name)
        cls.bench = subprocess.Popen([HILSIM, "run", cls.cfg, "--no-rt", "--clock", "lockstep"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   env=cls.env)
        sock = os.path.join(cls.tmp.name, "hilsim-%s.ctl" % cls.name)
        deadline = time.monotonic() + 120
        while not os.path.exists(sock):
            if cls.bench.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("no control socket: %s" % cls.bench.communicate()[0])
            time.sleep(0.1)
        cls.sock = sock
        while True:
            try:
                cls.client = hilsim_client.Client(cls.name)
                break
            except hilsim_client.HilsimError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        cls.elbow = cls.client.find_joint("ELBOW")
        cls.client.claim()
        assert cls.client.lockstep

    @classmethod
    def tearDownClass(cls):
        cls.client.detach()
        if cls.bench.poll() is None:
            cls.bench.terminate()
            cls.bench.wait(60)
        cls.tmp.cleanup()

    def ctl(self, *words):
        p = subprocess.run([HILSIM, "ctl", self.name] + [str(w) for w in words],
                           capture_output=True, text=True, env=self.env, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def counters(self):
        rc, out, err = self.ctl("status")
        self.assertEqual(rc, 0, err)
        words = out.split()
        return {k: int(words[words.index(k) + 1].rstrip(";"))
                for k in ("tick", "accepted", "applied", "rejected")}

    def send(self, *words):
        """Sends a command and returns once the tick has applied it."""
        before = self.counters()["applied"]
        rc, out, err = self.ctl(*words)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("ok"), out)
        deadline = time.monotonic() + 60
        while self.counters()["applied"] <= before:
            self.assertLess(time.monotonic(), deadline, "never applied: %s" % (words,))
            self.tick()

    def tick(self):
        """Runs one tick: waits for it, reads it, commands the PD hold, releases the next."""
        self.client.wait_tick(60.0)
        s = self.client.read_state()
        self.client.write_commands([
            dict(mode=hilsim_client.MODE_POSITION_PD, q=0.3, kp=300.0, kd=6.0),
            dict(mode=hilsim_client.MODE_POSITION_PD, q=0.6, kp=120.0, kd=2.5)])
        self.client.step()
        return s

    def elbow_over(self, ticks):
        """ELBOW position at every tick for `ticks` ticks."""
        return [self.tick().q[self.elbow] for _ in range(ticks)]

    def deflection(self, q, base):
        """The signed largest excursion of q from base."""
        return max((x - base for x in q), key=abs)

    def test_1_status(self):
        rc, out, err = self.ctl("status")
        self.assertEqual(rc, 0, err)
        self.assertIn("ok bench %s clock lockstep tick " % self.name, out)
        self.assertIn("loop ", out)

    def test_2_refused(self):
        before = self.counters()
        for words in (["push", "NOPE", 0, 0, 1, 1], ["push", "ELBOW", "nan", 0, 0, 1],
                      ["push", "ELBOW", 0, 0, 1e9, 1], ["push", "ELBOW", 0, 0, 1],
                      ["fault", "sensor", "KNEE", "stuck"], ["reboot"]):
            rc, out, err = self.ctl(*words)
            self.assertEqual(rc, 2, (words, out, err))
            self.assertTrue(err.startswith("error: "), err)
            self.assertEqual(err.count("\n"), 1, err)
        after = self.counters()
        self.assertEqual(after["rejected"] - before["rejected"], 6)
        self.assertEqual(after["accepted"], before["accepted"])
        self.assertEqual(after["applied"], before["applied"])

    def test_3_push(self):
        self.elbow_over(WINDOW)  # the PD hold settles
        base = self.elbow_over(1)[0]
        drift = abs(self.deflection(self.elbow_over(WINDOW), base))
        moves, paths = [], []
        for fx in (200, -200):
            base = self.elbow_over(1)[0]
            self.send("push", "ELBOW", fx, 0, 0, 0.05)
            q = self.elbow_over(WINDOW)
            paths.append([x - base for x in q])
            moves.append(self.deflection(q, base))
        print("elbow moved %r by equal and opposite pushes; %.2g unpushed" % (moves, drift))
        self.assertGreater(abs(moves[0]), 5 * drift + 0.01, (moves, drift))
        self.assertGreater(abs(moves[1]), 5 * drift + 0.01, (moves, drift))
        # the two links swing together, so the elbow's sign is no simple function of the push's;
        # but opposite pushes must drive it along clearly different paths
        apart = max(abs(a - b) for a, b in zip(*paths))
        self.assertGreater(apart, 0.05, "opposite pushes, same elbow path")

    def test_4_sensor_faults(self):
        self.send("fault", "sensor", "ELBOW", "stuck")
        self.send("push", "ELBOW", 200, 0, 0, 0.05)
        q = self.elbow_over(WINDOW)
        self.assertEqual(len(set(q)), 1, "a stuck reading repeats exactly: %r" % q[:5])
        self.send("clear")
        base = self.elbow_over(1)[0]
        self.send("push", "ELBOW", -200, 0, 0, 0.05)
        self.assertGreater(abs(self.deflection(self.elbow_over(WINDOW), base)), 0.01)
        true_q = self.elbow_over(5)[-1]
        self.send("fault", "sensor", "ELBOW", "offset", 0.5)
        faulty = self.elbow_over(5)[-1]
        self.assertAlmostEqual(faulty - true_q, 0.5, delta=0.05)
        self.send("clear")

    def counters_between_ticks(self):
        """Runs one tick holding the bench between two ticks for `status`: its counters."""
        self.client.wait_tick(60.0)
        rc, out, err = self.ctl("status")
        self.assertEqual(rc, 0, err)
        self.client.read_state()
        self.client.write_commands([
            dict(mode=hilsim_client.MODE_POSITION_PD, q=0.3, kp=300.0, kd=6.0),
            dict(mode=hilsim_client.MODE_POSITION_PD, q=0.6, kp=120.0, kd=2.5)])
        self.client.step()
        words = out.split()
        return {k: int(words[words.index(k) + 1].rstrip(";"))
                for k in ("tick", "ticks", "last_tick")}

    def test_5_loop_counters_current(self):
        a = self.counters_between_ticks()
        self.elbow_over(25)
        b = self.counters_between_ticks()
        print("status between ticks: %r then %r" % (a, b))
        self.assertEqual(b["tick"] - a["tick"], 26)
        self.assertEqual(b["ticks"] - a["ticks"], 26)
        self.assertEqual(b["last_tick"] - a["last_tick"], 26)

    @staticmethod
    def tick_noise(q):
        """The spread of a reading's independent per-tick noise: the arm moves smoothly (a tick
        changes q by far less than the noise), so consecutive differences carry sqrt(2) sigma."""
        return statistics.pstdev([b - a for a, b in zip(q, q[1:])]) / 2 ** 0.5

    def test_6_inject_noise(self):
        self.elbow_over(WINDOW)  # the swing of the pushes before dies down
        still = self.tick_noise(self.elbow_over(WINDOW))
        self.send("inject", "{sensor_fault: {kind: noise, joint: ELBOW, value: 0.01}, "
                            "duration_s: 0.5}")
        noisy = self.tick_noise(self.elbow_over(WINDOW))
        self.elbow_over(250)  # the step's 500 ticks are over
        after = self.tick_noise(self.elbow_over(WINDOW))
        print("ELBOW per-tick noise: %.2g before, %.4f with sigma 0.01, %.2g after"
              % (still, noisy, after))
        self.assertLess(still, 2e-3)
        self.assertLess(abs(noisy - 0.01), 0.0015)  # 300 samples: about 4 % standard error
        self.assertLess(after, 2e-3)
        rc, out, err = self.ctl("status")
        self.assertIn(" live_steps 0 ", out)

    def test_7_inject_refused(self):
        before = self.counters()
        for step, where in (("{sensor_fault: {kind: noise, joint: KNEE, value: 0.01}}", "live:1:1"),
                            ("{sensor_fault: {kind: nois, joint: ELBOW}}", "live:1:23"),
                            ("{at_s: 1, push: {link: ELBOW}}", "live:1:8"),
                            ("{push: {link: ELBOW}", "live:")):
            rc, out, err = self.ctl("inject", step)
            self.assertEqual(rc, 2, (step, out, err))
            self.assertTrue(err.startswith("error: " + where), err)
            self.assertEqual(err.count("\n"), 1, err)
        after = self.counters()
        self.assertEqual(after["rejected"] - before["rejected"], 4)
        self.assertEqual(after["accepted"], before["accepted"])

    SCENARIO = """scenario: {name: e2e-live, duration_s: 0.3}
steps:
  - {name: bias, at_s: 0.05, duration_s: 0.1,
     sensor_fault: {kind: offset, joint: ELBOW, value: 0.2}}
  - {name: held, at_s: 0.2, expect: {kind: joint_near, joint: ELBOW, value: 0.6, tolerance: 0.1}}
"""

    def scenario_status(self):
        rc, out, err = self.ctl("scenario", "status")
        self.assertEqual(rc, 0, err)
        return out

    def test_8_scenario_start_stop(self):
        path = os.path.join(self.tmp.name, "live.yaml")
        with open(path, "w") as f:
            f.write(self.SCENARIO)
        self.assertIn("ok no scenario started", self.scenario_status())
        rc, out, err = self.ctl("scenario", "stop")
        self.assertEqual(rc, 2, err)
        # relative paths are the client's: ctl runs in the temporary directory
        p = subprocess.run([HILSIM, "ctl", self.name, "scenario", "start", "live.yaml", "--junit",
                            "live.xml", "--result-json", "live.json"], capture_output=True,
                           text=True, env=self.env, timeout=60, cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ok scenario e2e-live starts", p.stdout)
        rc, out, err = self.ctl("scenario", "start", path)
        self.assertEqual(rc, 2, err)
        self.assertIn("still running", err)
        q = self.elbow_over(400)
        # the offset shows in the readings for 100 ticks, within the run
        jumps = [b - a for a, b in zip(q, q[1:])]
        self.assertAlmostEqual(max(jumps), 0.2, delta=0.02)
        self.assertAlmostEqual(min(jumps), -0.2, delta=0.02)
        self.assertEqual(jumps.index(min(jumps)) - jumps.index(max(jumps)), 100)
        deadline = time.monotonic() + 60
        while "ended" not in self.scenario_status():
            self.assertLess(time.monotonic(), deadline)
            self.tick()
        out = self.scenario_status()
        print(out.strip())
        self.assertIn("scenario e2e-live ended PASS: 1 of 1 expectations passed (played to its "
                      "end)", out)
        suite = ET.parse(os.path.join(self.tmp.name, "live.xml")).getroot()
        cases = suite.iter("testcase")
        self.assertEqual([c.get("name") for c in cases], ["held"])
        self.assertEqual(len(list(suite.iter("failure"))), 0)
        self.assertTrue(os.path.exists(os.path.join(self.tmp.name, "live.json")))

        # again, stopped before its expectation: FAIL, files next to the socket
        rc, out, err = self.ctl("scenario", "start", path)
        self.assertEqual(rc, 0, err)
        self.elbow_over(20)
        rc, out, err = self.ctl("scenario", "stop")
        self.assertEqual(rc, 0, err)
        while "ended" not in self.scenario_status():
            self.assertLess(time.monotonic(), deadline)
            self.tick()
        out = self.scenario_status()
        self.assertRegex(out, r"ended ERROR at tick \d+: stopped early: scenario stop on the "
                              r"control socket: 0 of 1 expectations passed, 1 not decided")
        junit = self.sock[:-len(".ctl")] + ".scenario-2.junit.xml"
        self.assertIn(junit, out)
        suite = ET.parse(junit).getroot()
        self.assertEqual(len(list(suite.iter("failure"))), 0)
        errors = list(suite.iter("error"))
        self.assertEqual(len(errors), 2)  # the run, and the expectation it left undecided
        self.assertIn("not decided: stopped early", errors[1].get("message"))
        self.assertTrue(os.path.exists(self.sock[:-len(".ctl")] + ".scenario-2.json"))

    def test_8b_unauthorised(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to connect as another user")
        unauthorised = lambda: int(self.ctl("status")[1].split("unauthorised ")[1].split()[0])
        before, applied = unauthorised(), self.counters()["applied"]
        mode_dir, mode_sock = os.stat(self.tmp.name).st_mode, os.stat(self.sock).st_mode
        os.chmod(self.tmp.name, 0o711)
        os.chmod(self.sock, 0o666)  # widened by hand: the credentials still decide
        # a forked child that becomes nobody: no program to exec that nobody could not read
        rfd, wfd = os.pipe()
        try:
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    os.close(rfd)
                    os.setgroups([])
                    os.setgid(65534)
                    os.setuid(65534)
                    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    c.settimeout(30)
                    c.connect(self.sock)
                    try:  # the server may have answered and closed before this
                        c.sendall(b"inject {push: {link: ELBOW, force_n: [0, 0, 200]}}\n")
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    os.write(wfd, c.makefile().readline().encode())
                    code = 0
                except BaseException as e:  # said in the parent's failure message
                    os.write(wfd, ("child: %r" % e).encode())
                finally:
                    os._exit(code)
            os.close(wfd)
            answer = os.fdopen(rfd).read()
            _, status = os.waitpid(pid, 0)
        finally:
            os.chmod(self.sock, mode_sock & 0o7777)
            os.chmod(self.tmp.name, mode_dir & 0o7777)
        print(answer.strip())
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, answer)
        self.assertTrue(answer.startswith("error: not authorised: uid 65534 "), answer)
        self.assertIn("not in the control socket's group (gid 0)", answer)
        self.assertEqual(unauthorised(), before + 1)
        self.assertEqual(self.counters()["applied"], applied)

    def test_9_stop(self):
        rc, out, err = self.ctl("stop")
        self.assertEqual(rc, 0, err)
        out, _ = self.bench.communicate(timeout=120)
        self.assertEqual(self.bench.returncode, 0, out)
        self.assertRegex(out, r"ctl: \d+ commands accepted, \d+ applied, [1-9]\d* rejected, 0 refused "
                              r"\(queue full\), 0 steps refused \(all 16 live step slots in use\), "
                              r"\d+ connections unauthorised")
        self.assertFalse(os.path.exists(self.sock), "the socket outlived the run")


if __name__ == "__main__":
    unittest.main()
