#!/usr/bin/env python3
"""End to end: scenarios through the hilsim binary.

  shm_encoder_stuck  `hilsim run config/arm2-shm.yaml --clock lockstep --scenario
                     scenarios/arm-encoder-stuck.yaml` with examples/pd_controller over real
                     shared memory, in lockstep (scenario time is tick time): the scenario starts
                     on the controller's first command, the JUnit XML has one test case per
                     expectation, all passed, and the exit status is 0
  sim_verdict_fail   `hilsim sim` with an expectation that cannot hold: exit status 5, the
                     JUnit XML names the failing case with its tick, the JSON agrees
  biped_side_push    the bundled biped scenario passes offline (recovers, then falls)
  diverged_error     a push of 1e30 N makes the plant diverge: exit 3, the verdict is ERROR
                     naming the plant fault and its tick (never PASS 0 of 0), the expectation
                     decided before it stays passed, the one after is "not decided", JUnit
                     counts errors (never 0 failures and 0 errors) and the JSON agrees
  stopped_error      `hilsim run` stopped by SIGTERM before the scenario's end: ERROR, exit 1
  safe_hold_error    `hilsim run` whose overrun bucket latches SAFE HOLD (one injected stall,
                     threshold 1) during a scenario: ERROR naming the safe hold, JUnit
                     <error type="safe_hold">, exit 1
  bad_inputs         an oversized scenario file exits 2; an unwritable --junit is refused
                     before the run (exit 2); a path CSV of 1,000,000 rows loads and one of
                     1,000,001 is refused at line 1,000,002

Environment (set by ctest): HS_HILSIM, HS_PD_CONTROLLER, HS_SOURCE_DIR.
"""

import json
import os
import signal
import subprocess
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HS_HILSIM"]
PD = os.environ.get("HS_PD_CONTROLLER")


def junit_cases(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    cases = {}
    for case in root.iter("testcase"):
        failure = case.find("failure")
        cases[case.get("name")] = None if failure is None else failure.text
    return root, cases


class Scenarios(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    @unittest.skipUnless(PD, "examples/pd_controller not built")
    def test_shm_encoder_stuck(self):
        name = "scen%d-e2e" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        cfg = cfg.replace("name: arm2-shm", "name: " + name)
        with open(self.path("bench.yaml"), "w") as f:
            f.write(cfg)
        junit = self.path("junit.xml")
        run = subprocess.Popen(
            [HILSIM, "run", self.path("bench.yaml"), "--no-rt", "--clock", "lockstep", "--scenario",
             os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml"), "--junit", junit,
             "--result-json", self.path("result.json")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # the controller outlives the 3 s scenario and stops when the server does; it retries
        # a segment being filled but not a missing one, so wait for the segment first
        seg = "/dev/shm/hilsim-" + name
        for _ in range(600):
            if os.path.exists(seg) or run.poll() is not None:
                break
            time.sleep(0.05)
        ctl = subprocess.run([PD, name, "100000", "300", "6"], capture_output=True, text=True,
                             timeout=120)
        out, _ = run.communicate(timeout=120)
        print(out[-1500:])
        print(ctl.stdout[-600:], ctl.stderr[-600:])
        root, cases = junit_cases(junit)
        self.assertEqual(sorted(cases), ["elbow_held", "no_runaway_torque", "shoulder_held"])
        failed = sum(f is not None for f in cases.values())
        self.assertEqual(root.get("failures"), str(failed))
        with open(self.path("result.json")) as f:
            res = json.load(f)
        # in lockstep the controller closes every tick whatever the machine's load, so the arm
        # is held through the stuck encoder and every expectation passes
        self.assertEqual(failed, 0, cases)
        self.assertEqual(run.returncode, 0, out[-2000:])
        self.assertTrue(res["passed"])
        stuck = [s for s in res["steps"] if s["name"] == "encoder_stuck"][0]
        # started by the condition (never at tick 0) and active for exactly 1 s of ticks
        self.assertGreater(stuck["onset_tick"], 0)
        self.assertEqual(stuck["active_ticks"], 1000)

    def test_sim_verdict_fail(self):
        scen = self.path("fail.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: must-fail, duration_s: 0.5}\n"
                    "steps:\n"
                    "  - {name: fine, at_s: 0.1,\n"
                    "     expect: {kind: joint_near, joint: ELBOW, value: 0.6, tolerance: 0.1}}\n"
                    "  - {name: impossible, at_s: 0.2, duration_s: 0.1,\n"
                    "     expect: {kind: link_above, link: ELBOW, value: 5}}\n")
        junit, res = self.path("j.xml"), self.path("r.json")
        p = subprocess.run([HILSIM, "sim", os.path.join(SRC, "config", "arm2-demo.yaml"),
                            "--scenario", scen, "--junit", junit, "--result-json", res],
                           capture_output=True, text=True, timeout=120)
        print(p.stdout)
        self.assertEqual(p.returncode, 5, p.stderr)
        self.assertIn("verdict: FAIL (1 of 2 expectations passed)", p.stdout)
        _, cases = junit_cases(junit)
        self.assertIsNone(cases["fine"])
        self.assertIn("tick 300", cases["impossible"])
        with open(res) as f:
            r = json.load(f)
        self.assertFalse(r["passed"])
        bad = [e for e in r["expectations"] if e["name"] == "impossible"][0]
        self.assertEqual((bad["status"], bad["tick"]), ("fail", 300))

    def test_diverged_error(self):
        scen = self.path("diverge.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: diverges, duration_s: 1}\n"
                    "steps:\n"
                    "  - {name: before, at_s: 0.05,\n"
                    "     expect: {kind: joint_near, joint: ELBOW, value: 0.6, tolerance: 0.1}}\n"
                    "  - {name: blowup, at_s: 0.1, duration_s: 0.1,\n"
                    "     push: {link: ELBOW, force_n: [1e30, 0, 0]}}\n"
                    "  - {name: after, at_s: 0.5,\n"
                    "     expect: {kind: joint_near, joint: ELBOW, value: 0.6, tolerance: 0.1}}\n")
        junit, res = self.path("j.xml"), self.path("r.json")
        p = subprocess.run([HILSIM, "sim", os.path.join(SRC, "config", "arm2-demo.yaml"),
                            "--scenario", scen, "--junit", junit, "--result-json", res],
                           capture_output=True, text=True, timeout=120)
        print(p.stdout[-1500:])
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertNotIn("verdict: PASS", p.stdout)
        self.assertRegex(p.stdout, r"verdict: ERROR at tick \d+: plant fault: .*\(1 of 2 "
                                   r"expectations passed, 0 failed, 1 not decided\)")
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("errors"), "2")  # the run, and "after"
        self.assertEqual(root.get("failures"), "0")
        cases = {c.get("name"): c for c in root.iter("testcase")}
        self.assertIsNotNone(cases["run"].find("error"))
        self.assertIn("plant fault", cases["run"].find("error").get("message"))
        # the cause as a type CI tools show; the undecided expectation carries it too
        self.assertEqual(cases["run"].find("error").get("type"), "plant_fault")
        self.assertEqual(cases["after"].find("error").get("type"), "plant_fault")
        # durations: the cases' shares never add up to more than the suite's time
        suite = root.find("testsuite")
        self.assertLessEqual(sum(float(c.get("time")) for c in cases.values()),
                             float(suite.get("time")) + 1e-6)
        self.assertIsNone(cases["before"].find("error"))
        self.assertRegex(cases["after"].find("error").get("message"),
                         r"^not decided: plant fault: .* at tick \d+$")
        with open(res) as f:
            r = json.load(f)
        self.assertEqual(r["verdict"], "error")
        self.assertFalse(r["passed"])
        self.assertIn("plant fault", r["error"]["cause"])
        self.assertGreaterEqual(r["error"]["tick"], 100)
        self.assertEqual([e["status"] for e in r["expectations"]], ["pass", "error"])

    def test_stopped_error(self):
        name = "scen%d-stop" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        with open(self.path("bench.yaml"), "w") as f:
            f.write(cfg.replace("name: arm2-shm", "name: " + name))
        scen = self.path("long.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: long, duration_s: 600}\n"
                    "steps:\n"
                    "  - {name: late, at_s: 500, expect: {kind: link_above, link: ELBOW, "
                    "value: -10}}\n")
        junit = self.path("j.xml")
        run = subprocess.Popen([HILSIM, "run", self.path("bench.yaml"), "--no-rt", "--scenario",
                                scen, "--junit", junit], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, HILSIM_CTL_DIR=self.tmp.name))
        sock = self.path("hilsim-%s.ctl" % name)
        deadline = time.monotonic() + 120
        while not os.path.exists(sock):  # the control socket: the run is up
            self.assertIsNone(run.poll())
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        run.terminate()
        out, _ = run.communicate(timeout=120)
        print(out[-600:])
        self.assertEqual(run.returncode, 1, out[-2000:])
        self.assertRegex(out, r"verdict: ERROR at tick \d+: stopped early: the loop stopped "
                              r"\(stop requested\)")
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("errors"), "2")
        types = [e.get("type") for e in root.iter("error")]
        self.assertEqual(types, ["stopped_early", "stopped_early"])

    def test_safe_hold_error(self):
        # The overrun bucket latching SAFE HOLD during a scenario: one injected stall of the
        # loop (the test hook, SIGUSR1) overruns a tick, and with the bucket's threshold at 1
        # the hold latches. The scenario plays on to its end, but its verdict is ERROR naming
        # the safe hold and its tick (never PASS), JUnit's error type is safe_hold, the JSON
        # agrees, and the run's exit status is 1.
        name = "scen%d-hold" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        with open(self.path("bench.yaml"), "w") as f:
            f.write(cfg.replace("name: arm2-shm", "name: " + name))
        scen = self.path("held.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: held, duration_s: 3}\n"
                    "steps:\n"
                    "  - {name: late, at_s: 2.5, expect: {kind: link_above, link: ELBOW, "
                    "value: -10}}\n")
        junit, res = self.path("j.xml"), self.path("r.json")
        log = open(self.path("run.log"), "w+")
        self.addCleanup(log.close)
        env = dict(os.environ, HILSIM_CTL_DIR=self.tmp.name, HILSIM_TEST_HOOKS="1",
                   HILSIM_TEST_STALL_MS="300")
        run = subprocess.Popen([HILSIM, "run", self.path("bench.yaml"), "--no-rt", "--scenario",
                                scen, "--junit", junit, "--result-json", res, "--set",
                                "rt.overrun_leaky.threshold=1"],
                               stdout=log, stderr=subprocess.STDOUT, env=env)
        self.addCleanup(lambda: run.poll() is None and (run.kill(), run.wait()))
        deadline = time.monotonic() + 120
        while True:  # the loop runs: its first tick is the scenario's
            log.seek(0)
            if "running bench" in log.read():
                break
            self.assertIsNone(run.poll())
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        run.send_signal(signal.SIGUSR1)
        self.assertEqual(run.wait(timeout=120), 1)
        log.seek(0)
        out = log.read()
        print(out[-800:])
        self.assertRegex(out, r"verdict: ERROR at tick \d+: SAFE HOLD latched")
        self.assertNotIn("verdict: PASS", out)
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("errors"), "2")  # the run, and "late"
        self.assertEqual(root.get("failures"), "0")
        self.assertEqual([e.get("type") for e in root.iter("error")], ["safe_hold", "safe_hold"])
        with open(res) as f:
            r = json.load(f)
        self.assertEqual(r["verdict"], "error")
        self.assertIn("SAFE HOLD", r["error"]["cause"])
        self.assertEqual(r["expectations"][0]["status"], "error")

    def test_bad_inputs(self):
        demo = os.path.join(SRC, "config", "arm2-demo.yaml")
        big = self.path("big.yaml")
        with open(big, "w") as f:
            f.write("scenario: {name: big, duration_s: 1}\n" + "#" * (5 << 20) + "\n")
        p = subprocess.run([HILSIM, "sim", demo, "--scenario", big], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("larger than", p.stderr)
        ok = self.path("ok.yaml")
        with open(ok, "w") as f:
            f.write("scenario: {name: ok, duration_s: 0.1}\nsteps: []\n")
        os.mkfifo(self.path("fifo.xml"))
        for junit in ("/proc/nonexistent/j.xml", self.path("fifo.xml")):
            t0 = time.monotonic()
            p = subprocess.run([HILSIM, "sim", demo, "--scenario", ok, "--junit", junit],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(junit, p.stderr)
            self.assertNotIn("simulated", p.stdout)  # refused before the run
        for rows, rc in ((1000000, 0), (1000001, 2)):
            csv = self.path("path%d.csv" % rows)
            with open(csv, "w") as f:
                f.write("time_s,ELBOW\n")
                f.write("".join("%d,0.6\n" % k for k in range(rows)))
            scen = self.path("path%d.yaml" % rows)
            with open(scen, "w") as f:
                f.write("scenario: {name: path, duration_s: 0.01}\nsteps:\n"
                        "  - {at_s: 0, duration_s: 0.01, path: {file: %s}}\n" % csv)
            p = subprocess.run([HILSIM, "sim", demo, "--scenario", scen], capture_output=True,
                               text=True, timeout=300)
            self.assertEqual(p.returncode, rc, (rows, p.stdout[-500:], p.stderr[-500:]))
            if rc:
                self.assertIn("%s:1000002" % csv, p.stderr)
                self.assertIn("more than 1000000 rows", p.stderr)

    def test_biped_side_push(self):
        p = subprocess.run([HILSIM, "sim", os.path.join(SRC, "config", "biped-stand.yaml"),
                            "--scenario", os.path.join(SRC, "scenarios", "biped-side-push.yaml")],
                           capture_output=True, text=True, timeout=300)
        print(p.stdout[-800:])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("verdict: PASS (3 of 3 expectations passed)", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
