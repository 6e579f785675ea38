"""The divergence guard as a user meets it: `hilsim sim` and `hilsim run` on a world that
explodes (gains unstable at the step, a huge commanded torque, each on actuators configured
without a torque limit) stop with a one-line cause, a complete log and exit status 3; with the
default finite torque limits the same gains and the same command stay bounded (exit 0). ODE's
own messages arrive as hilsim log lines. No timing is asserted."""
import csv
import math
import os
import re
import subprocess
import tempfile
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
MODELS = os.path.join(SRC, "models")
PLANT_FAULT = 3


def run(*args, timeout=120):
    return subprocess.run([HILSIM, *args], capture_output=True, text=True, timeout=timeout)


UNLIMITED = "actuators: {defaults: {torque_limit_nm: .inf, velocity_limit: .inf}}\n"
INF_WARNING = "torque_limit_nm of L_KNEE is .inf"


def unstable_config(tmp, extra="", limits=UNLIMITED):
    """The bundled biped with gains at the top of the documented ranges, quick solver: the
    explicit PD is unstable at 1 ms for its light links (issue 10). A runaway needs actuators
    without a torque limit: `limits` gives them .inf unless told otherwise ("" keeps the
    finite defaults, which clamp the PD's output)."""
    path = os.path.join(tmp, "unstable.yaml")
    with open(path, "w") as f:
        f.write("bench: {name: unstable-%d}\n" % os.getpid() +
                "models:\n"
                "  - {name: biped, file: %s/biped.wrl}\n" % MODELS +
                "  - {name: floor, file: %s/floor.wrl, static: true}\n" % MODELS +
                "physics: {solver: quick}\n"
                "controller: {type: pd_hold, defaults: {kp: 1e6, kd: 1e5}}\n" + limits + extra)
    return path


def torque_config(tmp, limits=UNLIMITED):
    """The quick look's world (biped on the floor, PD hold) as a config, so the actuators'
    torque limits can be set."""
    path = os.path.join(tmp, "torque.yaml")
    with open(path, "w") as f:
        f.write("bench: {name: torque-%d}\n" % os.getpid() +
                "models:\n"
                "  - {name: biped, file: %s/biped.wrl}\n" % MODELS +
                "  - {name: floor, file: %s/floor.wrl, static: true}\n" % MODELS +
                "controller: {type: pd_hold, bandwidth_rad_s: 30}\n" + limits)
    return path


ROOT = re.compile(r"\w+ root at \(([-0-9.e+]+), ([-0-9.e+]+), ([-0-9.e+]+)\) m")


FAULT_LINE = re.compile(r"plant fault: tick (\d+) \(t = [0-9.e+-]+ s\): link (\w+) of (\w+): "
                        r"(linear velocity|angular velocity|joint rate|centre of mass distance)")


class SimStopsOnAFault(unittest.TestCase):
    def check_log(self, out, tick):
        """Every row complete (the header's field count, a final newline); the last row is the
        tick that tripped."""
        with open(out, newline="") as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"))
        rows = list(csv.reader(text.splitlines()))
        self.assertGreaterEqual(len(rows), 2)
        for r in rows[1:]:
            self.assertEqual(len(r), len(rows[0]))
        self.assertAlmostEqual(float(rows[-1][0]), tick * 1e-3, places=9)

    def test_unstable_gains_trip_the_guard(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "log.csv")
            r = run("sim", unstable_config(tmp), "--duration", "5", "--out", out)
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            self.assertIn(INF_WARNING, r.stderr)  # .inf is accepted, with a warning
            m = FAULT_LINE.search(r.stderr)
            self.assertIsNotNone(m, r.stderr)
            self.assertEqual(m.group(3), "biped")
            self.assertIn("physics.guard.", r.stderr)
            self.assertIn("safe stop", r.stderr)
            self.assertIn("stopped by a plant fault", r.stdout)
            self.assertIn("simulated", r.stdout)
            self.check_log(out, int(m.group(1)))

    def check_bounded(self, r):
        """Ran to the end: exit 0, no fault, the root finite and within 10 m of the origin."""
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("plant fault", r.stderr + r.stdout)
        m = ROOT.search(r.stdout)
        self.assertIsNotNone(m, r.stdout)
        for v in m.groups():
            self.assertTrue(abs(float(v)) < 10.0, r.stdout)

    def test_unstable_gains_bounded_by_default_limits(self):
        """The same gains with the finite default torque limits: the PD's output is clamped,
        the world stays bounded for 5 s."""
        with tempfile.TemporaryDirectory() as tmp:
            r = run("sim", unstable_config(tmp, limits=""), "--duration", "5")
            self.check_bounded(r)
            self.assertNotIn("is .inf", r.stderr)

    def test_huge_torque_trips_the_guard(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "log.csv")
            r = run("sim", torque_config(tmp), "--torque", "L_KNEE=1e9", "--duration", "5",
                    "--out", out)
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            self.assertIn(INF_WARNING, r.stderr)
            m = FAULT_LINE.search(r.stderr)
            self.assertIsNotNone(m, r.stderr)
            self.check_log(out, int(m.group(1)))

    def test_huge_torque_clamped_by_default_limits(self):
        """The quick look itself (default limits): the same 1e9 N·m command is clamped to the
        knee's default limit; the biped kicks but the world stays bounded."""
        r = run("sim", "--model", os.path.join(MODELS, "biped.wrl"), "--env",
                os.path.join(MODELS, "floor.wrl"), "--torque", "L_KNEE=1e9", "--duration", "5")
        self.check_bounded(r)

    def test_tight_bounds_from_the_config_trip_on_a_fall(self):
        """physics.guard keys reach the world: a 1 m/s bound trips on the biped dropped from
        0.5 m above its stance (no contact for the first ~0.3 s)."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "drop.yaml")
            with open(path, "w") as f:
                f.write("bench: {name: drop}\n"
                        "models:\n"
                        "  - name: biped\n"
                        "    file: %s/biped.wrl\n" % MODELS +
                        "    pose: {position: [0, 0, 1.24]}\n"
                        "  - {name: floor, file: %s/floor.wrl, static: true}\n" % MODELS +
                        "physics: {guard: {max_linear_velocity_mps: 1}}\n")
            r = run("sim", path, "--duration", "1")
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            self.assertIn("linear velocity", r.stderr)
            self.assertIn("above 1 (physics.guard.max_linear_velocity_mps)", r.stderr)
            # v = g t passes 1 m/s after 102 steps of 1 ms
            m = FAULT_LINE.search(r.stderr)
            self.assertEqual(int(m.group(1)), 102)

    def test_soft_floor_lets_the_biped_through_and_trips(self):
        """The floor check: a floor contact of 100 N/m without damping cannot carry the
        29.9 kg biped (it would sink 2.9 m): an ankle's centre of mass goes deeper than its
        geometry reaches plus 0.05 m within a fraction of a second, and the run stops with a
        plant fault naming the link, its depth and the tick, the log complete."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "soft.yaml")
            with open(path, "w") as f:
                f.write("bench: {name: soft-%d}\n" % os.getpid() +
                        "models:\n"
                        "  - {name: biped, file: %s/biped.wrl}\n" % MODELS +
                        "  - {name: floor, file: %s/floor.wrl, static: true}\n" % MODELS +
                        "physics: {contact_stiffness_n_m: 100, contact_damping_n_s_m: 0}\n")
            out = os.path.join(tmp, "soft.csv")
            r = run("sim", path, "--duration", "5", "--out", out)
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            m = re.search(r"plant fault: tick (\d+) \(t = [0-9.e+-]+ s\): link (\w+) of biped: "
                          r"centre of mass ([0-9.e+-]+) m below the floor \(z = 0 m\) for 10 "
                          r"steps .*reaches \(([0-9.e+-]+) m\) plus physics.guard.floor_depth_m "
                          r"0.05: it went through the floor \(or off its edge\)", r.stderr)
            self.assertIsNotNone(m, r.stderr)
            self.assertGreater(float(m.group(3)), float(m.group(4)) + 0.05)
            self.assertLess(int(m.group(1)), 1000)
            self.check_log(out, int(m.group(1)))
            # The keys reach the world: .inf turns the check off (the biped sinks on for 1 s,
            # nothing else trips); a floor given 0.3 m up has the standing biped's feet under
            # it from the start: the world is refused at its warm-up (bad input, exit 2).
            r = run("sim", path, "--duration", "1", "--set", "physics.guard.floor_depth_m=.inf")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("plant fault", r.stderr + r.stdout)
            r = run("sim", os.path.join(SRC, "config", "biped-stand.yaml"), "--duration", "1",
                    "--set", "physics.guard.floor_z_m=0.3")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("initial state diverges", r.stderr)
            self.assertIn("below the floor (z = 0.3 m) for 10 steps", r.stderr)

    def test_braked_arm_at_its_limit_stays_at_rest(self):
        # The guest DBC bench after its peer let the elbow sag to its limit: every joint on its
        # brake for a minute at a 2 ms step. The elbow creeps onto its stop at 44.7 s; ODE's
        # "powered stop" then applied the brake's holding torque (1e6 N·m) into the stop and
        # the shoulder ran away at -124 rad/s (a plant fault). Hold rows now never trigger it
        # (src/plant/plant_actuate.c).
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(SRC, "tests", "canio", "arm2-dbc-guest.yaml")) as f:
                text = f.read()
            text = text.replace("SHOULDER: {q: 0.3}", "SHOULDER: {q: 0.6}")
            text = text.replace("ELBOW: {q: 0.6}", "ELBOW: {q: 2.79}")
            text = text.replace("file: ../../models/", "file: %s/models/" % SRC)
            text = text.replace("file: arm2-elbow.dbc",
                                "file: %s/tests/canio/arm2-elbow.dbc" % SRC)
            cfg = os.path.join(tmp, "braked.yaml")
            with open(cfg, "w") as f:
                f.write(text)
            out = os.path.join(tmp, "braked.csv")
            r = run("sim", cfg, "--free", "--duration", "60", "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 6001)
            worst = max(abs(float(row["SHOULDER.dq"])) for row in rows)
            self.assertLess(worst, 1.0, "a braked shoulder reached %g rad/s" % worst)

    def test_bad_guard_config_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = unstable_config(tmp, "")
            with open(path) as f:
                text = f.read().replace("physics: {solver: quick}",
                                        "physics: {solver: quick, guard: {joint_rate_factor: 0.5}}")
            with open(path, "w") as f:
                f.write(text)
            r = run("config", "check", path)
            self.assertEqual(r.returncode, 2)
            self.assertIn("joint_rate_factor", r.stderr)
            self.assertIn(path + ":", r.stderr)


WHEEL = """#VRML V2.0 utf8
# A 1 kg wheel (0.01 kg m^2 about z, centre of mass on the axis) on a fixed stand: no velocity
# limit in the model, so its drive runs on the default 2 pi rad/s.
PROTO Joint [ exposedField SFVec3f translation 0 0 0 exposedField MFNode children []
  exposedField SFString jointType "rotate" exposedField SFInt32 jointId -1
  exposedField SFVec3f jointAxis 0 0 1 ]
{ Transform { translation IS translation children IS children } }
PROTO Segment [ exposedField SFFloat mass 0 exposedField SFVec3f centerOfMass 0 0 0
  exposedField MFFloat momentsOfInertia [0 0 0 0 0 0 0 0 0] exposedField MFNode children [] ]
{ Group { children IS children } }
PROTO Humanoid [ exposedField MFNode humanoidBody [] exposedField SFString name "" ]
{ Group { children IS humanoidBody } }
DEF WHEEL_STAND Humanoid { name "wheel" humanoidBody [
  DEF BASE Joint { jointType "fixed" translation 0 0 0.5 children [
    Segment { mass 5 momentsOfInertia [0.1 0 0 0 0.1 0 0 0 0.1]
      children Shape { geometry Box { size 0.1 0.1 0.1 } } }
    DEF WHEEL Joint { jointId 0 translation 0 0 0.1 children [
      Segment { mass 1 momentsOfInertia [0.005 0 0 0 0.005 0 0 0 0.01]
        children Shape { geometry Box { size 0.2 0.2 0.02 } } } ] } ] } ] }
"""


class DriveLimitBoundsTheJointRate(unittest.TestCase):
    """The guard's joint-rate bound is 10 x the limit the joint's drive enforces, here the
    default 2 pi rad/s the model leaves to hilsim. A scenario push (an external cause the drive
    cannot refuse) of 20 N m for 0.1 s on the wheel (0.01 kg m^2; the drive brakes with at
    most its default 1 N m) passes 62.8 rad/s after ~35 ms: a plant fault naming the joint,
    its rate and the limit. 4 N m for 0.1 s reaches 30 to 40 rad/s, past the drive's limit
    but within the bound: no fault, and the drive brakes it back to 2 pi. With the limit .inf
    in the config there is no bound: 20 N m spins it to 200 rad/s, no fault."""

    def sim(self, tmp, torque, extra=""):
        with open(os.path.join(tmp, "wheel.wrl"), "w") as f:
            f.write(WHEEL)
        cfg = os.path.join(tmp, "wheel.yaml")
        with open(cfg, "w") as f:
            f.write("bench: {name: wheel-%d}\n" % os.getpid() +
                    "models:\n  - {name: wheel, file: wheel.wrl}\n"
                    "controller: {type: none}\n" + extra)
        scen = os.path.join(tmp, "push.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: spin, duration_s: 1.0}\n"
                    "steps:\n"
                    "  - {at_s: 0.1, duration_s: 0.1, push: {link: WHEEL, torque_nm: [0, 0, %g]}}\n"
                    % torque)
        out = os.path.join(tmp, "wheel.csv")
        r = run("sim", cfg, "--scenario", scen, "--duration", "1", "--out", out)
        with open(out, newline="") as f:
            rates = [float(row["WHEEL.dq"]) for row in csv.DictReader(f)]
        return r, rates

    def test_push_past_the_bound_trips(self):
        with tempfile.TemporaryDirectory() as tmp:
            r, rates = self.sim(tmp, 20)
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            m = re.search(r"plant fault: tick (\d+) \(t = [0-9.e+-]+ s\): link WHEEL of wheel: "
                          r"joint rate ([0-9.e+-]+) rad/s above 62.8319 \(physics.guard."
                          r"joint_rate_factor 10 x the joint's velocity limit 6.28319\)",
                          r.stderr)
            self.assertIsNotNone(m, r.stderr)
            self.assertGreater(float(m.group(2)), 62.8319)
            self.assertLess(float(m.group(2)), 62.8319 + 2.0)  # at most 20 N m x 1 ms / I more
            self.assertTrue(130 <= int(m.group(1)) <= 140, m.group(1))

    def test_push_within_the_bound_runs_on(self):
        with tempfile.TemporaryDirectory() as tmp:
            r, rates = self.sim(tmp, 4)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("plant fault", r.stderr + r.stdout)
            top = max(abs(v) for v in rates)
            self.assertTrue(3 * math.pi < top < 62.8, top)
            self.assertLess(abs(rates[-1]), 2 * math.pi * 1.001)

    def test_infinite_limit_has_no_bound(self):
        with tempfile.TemporaryDirectory() as tmp:
            r, rates = self.sim(tmp, 20, "actuators: {joints: {WHEEL: {velocity_limit: .inf}}}\n")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("plant fault", r.stderr + r.stdout)
            self.assertGreater(max(abs(v) for v in rates), 150)


class RobotsOnTheFloorNeverTripTheFloorCheck(unittest.TestCase):
    """Robots lying or sitting on the floor, however they got there, are never under it: the
    bundled biped limp (it folds up and lies), pushed over by the bundled scenario, and the
    OpenHRP robots in ../shared limp in the quick look (the quick look standing is
    test_quick_look_robots). Each runs 5 s and must end low (it fell) with no plant fault."""

    def check_lying(self, r, name, below=0.35):
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("plant fault", r.stderr + r.stdout)
        m = re.search(r"%s root at \(([-0-9.e+]+), ([-0-9.e+]+), ([-0-9.e+]+)\) m" % name,
                      r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertLess(float(m.group(3)), below, r.stdout)  # it fell: lying, not standing

    def test_limp_biped_lies_on_the_floor(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "limp.yaml")
            with open(path, "w") as f:
                f.write("bench: {name: limp-%d}\n" % os.getpid() +
                        "models:\n"
                        "  - {name: biped, file: %s/biped.wrl}\n" % MODELS +
                        "  - {name: floor, file: %s/floor.wrl, static: true}\n" % MODELS +
                        "controller: {type: none}\n")
            self.check_lying(run("sim", path, "--duration", "5"), "biped")

    def test_pushed_over_biped_lies_on_the_floor(self):
        r = run("sim", os.path.join(SRC, "config", "biped-stand.yaml"), "--scenario",
                os.path.join(SRC, "scenarios", "biped-side-push.yaml"), "--duration", "5")
        self.check_lying(r, "biped")

    def test_limp_openhrp_robots_lie_on_the_floor(self):
        shared = os.environ.get("HS_SHARED_DIR", "")
        floor = os.path.join(shared, "models", "openhrp", "floor.wrl")
        if not os.path.exists(floor):
            self.skipTest("no ../shared models")
        for name in ("SR1.wrl", "box1.wrl", "crawler.wrl"):
            with self.subTest(name):
                r = run("sim", "--model", os.path.join(shared, "models", "openhrp", name),
                        "--env", floor, "--free", "--duration", "5")
                self.check_lying(r, "robot")


class RunStopsOnAFault(unittest.TestCase):
    def test_fault_in_the_loop(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run("run", unstable_config(tmp, "rt: {warmup_ticks: 0}\n"), "--duration", "2",
                    "--no-rt")
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            self.assertIn("plant fault during the run: tick", r.stderr)
            self.assertIn("safe stop: 17 joints", r.stderr)
            self.assertIn("plant fault: tick", r.stdout)  # the summary says why it stopped
            self.assertIn("stopped: phase error", r.stdout)

    def test_fault_in_the_warm_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run("run", unstable_config(tmp), "--duration", "2", "--no-rt")
            self.assertEqual(r.returncode, PLANT_FAULT, r.stderr)
            self.assertIn("plant fault during warm-up: tick", r.stderr)


class OdeMessagesAreLogged(unittest.TestCase):
    def test_lcp_messages_become_counted_log_lines(self):
        """config/biped-stand.yaml's standard solver reports "LCP internal error" as its feet
        touch down: never raw on stderr, always as hilsim lines with a count at the end."""
        r = run("sim", os.path.join(SRC, "config", "biped-stand.yaml"), "--duration", "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("ODE Message", r.stderr)
        for line in r.stderr.splitlines():
            self.assertTrue(line.startswith("hilsim: "), line)
        self.assertRegex(r.stderr, r"warning: ODE message 3 at tick \d+: LCP internal error")
        self.assertRegex(r.stderr, r"ODE message 3 reported \d+ times \(ticks \d+ \.\. \d+\)")

    def test_the_warm_up_is_not_reported(self):
        """The bundled demo bench (config/biped-shm.yaml) is quiet: the warm-up's sizing step
        (made-up contacts, undone) made the standard solver report "LCP internal error" at
        "tick 0" of every run, which read as a fault. Its first second says nothing of ODE."""
        r = run("sim", os.path.join(SRC, "config", "biped-shm.yaml"), "--duration", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("ODE message", r.stderr)


if __name__ == "__main__":
    unittest.main()
