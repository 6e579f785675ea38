#!/usr/bin/env python3
"""The bundled encoder scenario can fail (issue 31.3): scenarios/arm-encoder-stuck.yaml played in
lockstep on config/arm2-shm.yaml against examples/torque_controller, which closes its PD on the
reported (encoder) positions and sends torques, over real shared memory.

  - the stuck elbow encoder reaches that loop: exit 5, elbow_held and no_runaway_torque fail;
  - the same file with the fault made harmless (an offset of 0) passes: exit 0, 3 of 3, so the
    expectations themselves can hold and the failure above is the fault's.

Lockstep: the controller releases every tick, so the verdicts do not depend on the host's load.
Environment (set by ctest): HS_HILSIM, HS_TORQUE_CONTROLLER, HS_SOURCE_DIR."""
import os
import subprocess
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HS_HILSIM"]
TORQUE = os.environ.get("HS_TORQUE_CONTROLLER")


class EncoderFaultReachesTheLoop(unittest.TestCase):
    def play(self, fault):
        """Plays the bundled scenario with its sensor_fault mapping replaced by FAULT; returns
        hilsim's exit status and the JUnit test cases (name: failure text or None)."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", tmp]))
        name = "enc%d-%s" % (os.getpid(), os.path.basename(tmp)[-8:])  # unique per play
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        with open(os.path.join(tmp, "bench.yaml"), "w") as f:
            f.write(cfg.replace("name: arm2-shm", "name: " + name))
        with open(os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml")) as f:
            scen = f.read()
        self.assertIn("sensor_fault: {joint: ELBOW, kind: stuck}", scen)
        with open(os.path.join(tmp, "s.yaml"), "w") as f:
            f.write(scen.replace("sensor_fault: {joint: ELBOW, kind: stuck}",
                                 "sensor_fault: {joint: ELBOW, %s}" % fault))
        junit = os.path.join(tmp, "junit.xml")
        run = subprocess.Popen([HILSIM, "run", os.path.join(tmp, "bench.yaml"), "--no-rt",
                                "--clock", "lockstep", "--scenario", os.path.join(tmp, "s.yaml"),
                                "--junit", junit],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seg = "/dev/shm/hilsim-" + name
        for _ in range(1200):  # the bench builds first; judged on the segment, not a sleep
            if os.path.exists(seg) or run.poll() is not None:
                break
            time.sleep(0.05)
        ctl = subprocess.run([TORQUE, name, "100000"], capture_output=True, text=True, timeout=300)
        out, _ = run.communicate(timeout=300)
        print(out[-1200:], ctl.stdout[-400:])
        cases = {c.get("name"): (None if c.find("failure") is None else c.find("failure").text)
                 for c in ET.parse(junit).getroot().iter("testcase")}
        return run.returncode, cases

    @unittest.skipUnless(TORQUE, "examples/torque_controller not built")
    def test_stuck_encoder_fails_a_loop_on_the_encoder(self):
        rc, cases = self.play("kind: stuck")
        self.assertEqual(rc, 5)
        self.assertIsNotNone(cases["elbow_held"])
        self.assertIsNotNone(cases["no_runaway_torque"])

    @unittest.skipUnless(TORQUE, "examples/torque_controller not built")
    def test_without_the_fault_it_passes(self):
        rc, cases = self.play("kind: offset, value: 0.0")
        self.assertEqual(rc, 0, cases)
        self.assertEqual(sorted(cases), ["elbow_held", "no_runaway_torque", "shoulder_held"])
        self.assertTrue(all(v is None for v in cases.values()), cases)


if __name__ == "__main__":
    unittest.main()
