"""The README's quick look (`hilsim sim --model ROBOT --env floor.wrl`) on real robots, in
simulated time (`hilsim sim` is offline, so host speed does not matter), and the drive's
default velocity limit as a user meets it.

QuickLookRobots runs every OpenHRP model under $HS_SHARED_DIR/models/openhrp (skipped when that
is absent) for 10 s of simulated time on the floor. A robot *stands or hangs* when:
  - hilsim exits 0 and the divergence guard never trips (no "plant fault");
  - it comes to rest: over the last simulated second every joint stays within REST_SPAN of
    where it was at 9 s and never turns faster than REST_RATE (contact jitter of a caster
    wheel, a period-2 wobble of under a milliradian at 0.7 rad/s, is rest; a chattering
    mechanism is not), and the root moves less than REST_DRIFT;
  - it has not fallen: the root is no more than FALL_DROP of its starting height (above the
    floor) lower, and its attitude is within FALL_TILT of the start.
A fixed root passes the last two trivially (it never moves); a free body standing on the floor
has to keep its posture. The hold is a stiff position servo's (an implicit PD, quick_look_gains.c):
it may sag but must not fall, drift or chatter.

SpeedLimit checks the default velocity limit: a huge torque on a light link stays under the
joint's limit within SPEED_TOLERANCE, without a guard trip."""
import csv
import glob
import math
import os
import re
import subprocess
import tempfile
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
SHARED = os.environ.get("HS_SHARED_DIR", "")
OPENHRP = os.path.join(SHARED, "models", "openhrp")
FLOOR = os.path.join(OPENHRP, "floor.wrl")
EXTRA = os.environ.get("HS_QUICK_LOOK_EXTRA", "")  # more model files, ':'-separated
# Fetched OpenHRP/Choreonoid samples (tests/model/README.md fills HS_ROBOTS_DIR from the fetch
# mirrors; absent files are skipped): RH2's pan-tilt (5 g links carrying a 0.1 kg·m² sensor by
# a fixed joint), GR001 (a 0.74 kg servo humanoid with rotor inertias of 1 on 30 g links), SR1
# with hands, JVRC-1 (its ankles hold 62 kg over its feet: the quick look's stance gains,
# src/bench/quick_look_gains.c), and OpenHRP's other standing and closed-link samples (sample1,
# sample_special_joint_robot and sample_4leg_robot fell or chattered under the explicit hold).
# The *_bush samples model a bushing as six joints in a row with no mass between them: the quick
# look runs them on the exact solver (MasslessChain below checks that choice).
ROBOTS = os.environ.get("HS_ROBOTS_DIR", "")
FETCHED = [
    "fkanehiro+openhrp3/sample/model/RH2/" + f for f in (
        "RH2_Arm.wrl", "RH2_WithArm_withoutSensor.wrl", "RH2_withArm_withObstacleBumpSensor.wrl",
        "RH2_withoutArm_withBumpSensor.wrl", "RH2_withoutArm_withObstacleBumpSensor.wrl",
        "RH2_withoutArm_withObstacleSensor.wrl", "RH2_withoutArm_withoutSensor.wrl")
] + [
    "choreonoid+choreonoid/share/model/GR001/GR001.wrl",
    "choreonoid+choreonoid/share/model/SR1/SR1Hand.wrl",
    "fkanehiro+openhrp3/sample/model/PD_HGtest.wrl",
    "fkanehiro+openhrp3/sample/model/sample2.wrl",
    "fkanehiro+openhrp3/sample/model/closed-link-sample.wrl",
    "fkanehiro+openhrp3/sample/model/simple_vehicle.wrl",
    "fkanehiro+openhrp3/sample/model/sample1.wrl",
    "fkanehiro+openhrp3/sample/model/sample_special_joint_robot.wrl",
    "fkanehiro+openhrp3/sample/model/sample_4leg_robot.wrl",
    "jvrc+model/JVRC-1/main.wrl",
    "fkanehiro+openhrp3/sample/model/sample1_bush.wrl",
    "fkanehiro+openhrp3/sample/model/sample_4leg_robot_bush.wrl",
    # The rest of both collections' robot files: SR1's planar twin, OpenHRP's small samples,
    # vehicles with a camera or range sensor, PA10, RoboStation, and RH2's pan-tilt parts on
    # their own (4 mm tall: FALL_DROP_MIN).
    "choreonoid+choreonoid/share/model/SR1/SR1-2D.wrl",
] + ["fkanehiro+openhrp3/sample/model/" + f for f in (
    "springJoint.wrl", "sample3dof.wrl", "closedlink2.wrl", "simple_vehicle_with_camera.wrl",
    "simple_vehicle_with_rangesensor.wrl", "crawler.wrl", "sample.wrl", "RoboStation.wrl",
    "PA10/pa10.main.wrl", "simple_vehicle/main.wrl",
    "RH2/parts/PanTilt/robotis/PanTilt_robotis.wrl",
    "RH2/parts/PanTilt/futaba/PanTilt_futaba.wrl")
]

REST_SPAN = 0.05     # rad or m, every joint, over the last second
REST_RATE = 5.0      # rad/s or m/s, every joint, over the last second
REST_DRIFT = 0.01    # m the root may move over the last second
FALL_DROP = 0.10     # share of the starting root height it may lose
FALL_DROP_MIN = 0.002  # m it may lose whatever its height: rest_on_static starts it 1 mm up
FALL_TILT = 15.0     # degrees
SPEED_TOLERANCE = 0.01  # share of the limit
DEFAULT_SPEED = 2 * math.pi  # rad/s: config/README.md "Velocity limit"


def run(*args, timeout=600):
    return subprocess.run([HILSIM, *args], capture_output=True, text=True, timeout=timeout)


def robot_files():
    """Model files that define a robot (a Humanoid node): not the Inline'd parts."""
    files = sorted(glob.glob(os.path.join(OPENHRP, "**", "*.wrl"), recursive=True))
    files += [f for f in EXTRA.split(":") if f]
    files += [p for p in (os.path.join(ROBOTS, f) for f in FETCHED) if ROBOTS and os.path.isfile(p)]
    out = []
    for f in files:
        with open(f, errors="replace") as fh:
            if re.search(r"^\s*(DEF\s+\S+\s+)?Humanoid\s*\{", fh.read(), re.M):
                out.append(f)
    return out


def read_log(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def tilt_deg(q0, q1):
    dot = abs(sum(a * b for a, b in zip(q0, q1)))
    return math.degrees(2 * math.acos(min(1.0, dot)))


class QuickLookRobots(unittest.TestCase):
    def test_every_openhrp_robot_stands_or_hangs(self):
        if not os.path.isfile(FLOOR):
            self.skipTest("no OpenHRP models at %s" % OPENHRP)
        files = robot_files()
        self.assertTrue(files, "no robot under %s" % OPENHRP)
        for model in files:
            with self.subTest(model=model), \
                    tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "log.csv")
                # One row per 10 ms: the last second has 100 of them.
                r = run("sim", "--model", model, "--env", FLOOR, "--duration", "10",
                        "--log-every", "10", "--out", out)
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                self.assertNotIn("plant fault", r.stdout + r.stderr)
                head, rows = read_log(out)
                self.assertAlmostEqual(rows[-1][0], 10.0, places=6)
                last = [row for row in rows if row[0] >= 9.0 - 1e-9]
                for i in (i for i, n in enumerate(head) if n.endswith(".q")):
                    span = max(abs(row[i] - last[0][i]) for row in last)
                    self.assertLess(span, REST_SPAN, "%s still moving" % head[i])
                for i in (i for i, n in enumerate(head) if n.endswith(".dq")):
                    peak = max(abs(row[i]) for row in last)
                    self.assertLess(peak, REST_RATE, "%s not at rest" % head[i])
                x = head.index("robot.x")
                p0, p9, p10 = rows[0][x:x + 3], last[0][x:x + 3], rows[-1][x:x + 3]
                self.assertLess(math.dist(p9, p10), REST_DRIFT, "root still moving")
                floor_top = 0.0  # floor.wrl's top face
                height0 = p0[2] - floor_top
                if height0 > 0:
                    self.assertGreater(p10[2] - floor_top,
                                       min((1 - FALL_DROP) * height0, height0 - FALL_DROP_MIN),
                                       "root fell from %.3f to %.3f m" % (p0[2], p10[2]))
                tilt = tilt_deg(rows[0][x + 3:x + 7], rows[-1][x + 3:x + 7])
                self.assertLess(tilt, FALL_TILT, "root tilted %.1f degrees" % tilt)


# A hinge pair with no mass between the hinges (a universal joint as OpenHRP files write it),
# hung from a fixed base; the PROTOs come from the merge test's model.
CHAIN_BODY = """
DEF UJ Humanoid {
  name "UJ"
  humanoidBody [
    DEF BASE Joint {
      jointType "fixed"
      translation 0 0 1.0
      children [
        DEF BASE_LINK Segment {
          mass 1.0
          momentsOfInertia [ 0.001 0 0 0 0.001 0 0 0 0.001 ]
        }
        DEF UJ_X Joint {
          jointType "rotate" jointId 0 jointAxis "X"
          children [
            DEF UJ_Y Joint {
              jointType "rotate" jointId 1 jointAxis "Y"
              children [
                DEF BOB Segment {
                  centerOfMass 0 0 -0.3
                  mass 1.0
                  momentsOfInertia [ 0.001 0 0 0 0.001 0 0 0 0.001 ]
                }
              ]
            }
          ]
        }
      ]
    }
  ]
  joints [ USE BASE USE UJ_X USE UJ_Y ]
  segments [ USE BASE_LINK USE BOB ]
}
"""


class MasslessChain(unittest.TestCase):
    """The quick look runs a robot with a massless link between two moving joints on the exact
    solver, says so naming the link, and leaves the choice to a user who set the solver."""

    def test_solver_follows_the_robot(self):
        with open(os.path.join(SRC, "tests", "models", "fixed_pendulum.wrl")) as f:
            text = f.read()
        protos = text[:text.index("DEF PEND Humanoid")]
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "uj.wrl")
            with open(model, "w") as f:
                f.write(protos + CHAIN_BODY)
            r = run("sim", "--model", model, "--duration", "0.01")
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertIn("link 'UJ_X' is massless between two moving joints", r.stderr)
            self.assertIn("running physics.solver standard", r.stderr)
            r = run("sim", "--model", model, "--duration", "0.01",
                    "--set", "physics.solver=quick")
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertNotIn("is massless between", r.stderr)
        # A massless frame on a fixed joint (the merge test's range-finder mount) is no chain.
        r = run("sim", "--model", os.path.join(SRC, "tests", "models", "fixed_pendulum.wrl"),
                "--duration", "0.01")
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertNotIn("is massless between", r.stderr)


class SpeedLimit(unittest.TestCase):
    def peak_rate(self, model, joint, torque, env=None):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "log.csv")
            args = ["sim", "--model", model, "--torque", "%s=%s" % (joint, torque),
                    "--duration", "3", "--out", out]
            if env:
                args += ["--env", env]
            r = run(*args)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertNotIn("plant fault", r.stdout + r.stderr)
            head, rows = read_log(out)
            i = head.index(joint + ".dq")
            return max(abs(row[i]) for row in rows)

    def test_sr1_wrist_under_a_huge_torque(self):
        """SR1's wrist gives no velocity limit: the default 2 pi rad/s holds under 1e4 N·m
        (and under 1e9 N·m the other way), with and without a floor."""
        model = os.path.join(OPENHRP, "SR1.wrl")
        if not os.path.isfile(model):
            self.skipTest("no %s" % model)
        for torque, env in (("1e4", None), ("1e4", FLOOR), ("-1e9", FLOOR)):
            peak = self.peak_rate(model, "RARM_WRIST_R", torque, env)
            self.assertGreater(peak, 0.9 * DEFAULT_SPEED)  # it did reach the limit
            self.assertLess(peak, (1 + SPEED_TOLERANCE) * DEFAULT_SPEED)

    def test_bundled_biped_knee_at_the_model_limit(self):
        """The bundled biped's knee has uvlimit 8 rad/s: the drive keeps it there under 1e9 N·m
        (the default torque limit clamps the torque; the speed loop the rate)."""
        models = os.path.join(SRC, "models")
        peak = self.peak_rate(os.path.join(models, "biped.wrl"), "L_KNEE", "1e9",
                              os.path.join(models, "floor.wrl"))
        self.assertLess(peak, (1 + SPEED_TOLERANCE) * 8.0)


if __name__ == "__main__":
    unittest.main()
