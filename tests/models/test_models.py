"""Checks of the bundled robot models (models/*.wrl) and the biped's standing bench.

The models are loaded by the hilsim binary (`hilsim model --json`) and compared with the numbers
their authors designed; the biped bench is run offline (`hilsim sim`) and its readings compared
with statics: a robot standing still weighs m g on its ankles and its IMU feels +g.

Stdlib only (Debian's /usr/bin/python3). Environment: HILSIM (the binary), HS_SOURCE_DIR.
"""
import csv
import json
import math
import os
import subprocess
import tempfile
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
BIPED = os.path.join(SRC, "models", "biped.wrl")
ARM2 = os.path.join(SRC, "models", "arm2.wrl")
STAND = os.path.join(SRC, "config", "biped-stand.yaml")

G = 9.80665  # m/s²: the physics default, which biped-stand.yaml keeps

# The biped as designed (header of models/biped.wrl): link -> mass in kg.
BIPED_MASS_KG = {"WAIST": 5.5, "CHEST": 9.0}
for _s in "RL":
    BIPED_MASS_KG.update({_s + "_HIP_Y": 0.5, _s + "_HIP_R": 0.6, _s + "_HIP_P": 2.6,
                          _s + "_KNEE": 1.8, _s + "_ANKLE_P": 0.3, _s + "_ANKLE_R": 0.2,
                          _s + "_SHOULDER_P": 1.0, _s + "_ELBOW": 0.7})
BIPED_LEG = ["HIP_Y", "HIP_R", "HIP_P", "KNEE", "ANKLE_P", "ANKLE_R"]
# jointId order of the design: right leg, left leg, chest, right arm, left arm.
BIPED_IDS = (["R_" + j for j in BIPED_LEG] + ["L_" + j for j in BIPED_LEG] + ["CHEST"] +
             ["R_SHOULDER_P", "R_ELBOW", "L_SHOULDER_P", "L_ELBOW"])
BIPED_STANDING_Z = 0.74  # m, WAIST height with the soles on z = 0 (header of biped.wrl)


def load(path):
    r = subprocess.run([HILSIM, "model", "--json", path], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        raise AssertionError("hilsim model %s: exit %d: %s" % (path, r.returncode, r.stderr))
    return json.loads(r.stdout)


def by_name(model):
    return {l["name"]: l for l in model["links"]}


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def box_inertia(m, a, b, c):
    return [m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12]


def cylinder_inertia_z(m, r, h):
    """Solid cylinder whose axis is the link's z (a VRML Cylinder turned by 90° about x)."""
    i = m * (3 * r * r + h * h) / 12
    return [i, i, m * r * r / 2]


class Biped(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load(BIPED)
        cls.links = by_name(cls.m)

    def test_no_warnings(self):
        self.assertEqual(self.m["warnings"], [])

    def test_absent_limits_are_null(self):
        # The free root has no joint range and no link has a current limit: JSON has no
        # infinity, and a made-up number would read as a real limit.
        root = self.m["links"][0]
        self.assertIsNone(root["llimit"])
        self.assertIsNone(root["ulimit"])
        self.assertTrue(all(l["climit"] is None for l in self.m["links"]))

    def test_joint_ids_contiguous_in_design_order(self):
        ids = {l["name"]: l["joint_id"] for l in self.m["links"] if l["joint_id"] >= 0}
        self.assertEqual(self.m["njoint_ids"], len(BIPED_IDS))
        self.assertEqual(sorted(ids.values()), list(range(len(BIPED_IDS))))
        self.assertEqual(ids, {n: i for i, n in enumerate(BIPED_IDS)})
        root = self.m["links"][0]
        self.assertEqual((root["name"], root["joint_type"]), ("WAIST", "free"))
        for n in BIPED_IDS:
            self.assertEqual(self.links[n]["joint_type"], "rotate", n)

    def test_masses_as_designed(self):
        masses = {l["name"]: l["mass"] for l in self.m["links"]}
        self.assertEqual(set(masses), set(BIPED_MASS_KG))
        for n, kg in BIPED_MASS_KG.items():
            self.assertLess(rel(masses[n], kg), 1e-12, n)
        design_total = sum(BIPED_MASS_KG.values())
        self.assertLess(rel(self.m["total_mass"], design_total), 1e-9)
        self.assertLess(abs(design_total - 29.9), 1e-9)

    def test_inertia_from_geometry(self):
        """Every single-primitive link's tensor is the solid primitive's, about its centre,
        which is the centre of mass; the file prints 6 significant digits."""
        for l in self.m["links"]:
            if l["name"] == "CHEST":
                continue
            self.assertEqual(len(l["geoms"]), 1, l["name"])
            g = l["geoms"][0]
            for k in range(3):
                self.assertAlmostEqual(g["p"][k], l["com"][k], delta=1e-12, msg=l["name"])
            if g["type"] == "box":
                want = box_inertia(l["mass"], *g["size"])
            else:
                self.assertEqual(g["type"], "cylinder", l["name"])
                # turned onto z: the rotation (row-major) maps the cylinder's y axis, its
                # second column, onto the link's z axis
                self.assertAlmostEqual(abs(g["R"][7]), 1.0, delta=1e-9, msg=l["name"])
                want = cylinder_inertia_z(l["mass"], g["radius"], g["height"])
            I = l["inertia"]
            for k in range(3):
                self.assertLess(rel(I[4 * k], want[k]), 1e-5, "%s I[%d]" % (l["name"], k))
            for k in (1, 2, 3, 5, 6, 7):
                self.assertEqual(I[k], 0.0, l["name"])

    def test_chest_is_torso_plus_head(self):
        """CHEST: an 8 kg torso box and a 1 kg head box, combined by the parallel-axis rule."""
        l = self.links["CHEST"]
        torso, head = sorted(l["geoms"], key=lambda g: g["p"][2])
        parts = [(8.0, torso), (1.0, head)]
        cz = sum(m * g["p"][2] for m, g in parts) / 9.0
        self.assertLess(abs(l["com"][2] - cz), 1e-6)
        want = [0.0, 0.0, 0.0]
        for m, g in parts:
            d = g["p"][2] - cz
            I = box_inertia(m, *g["size"])
            want = [want[0] + I[0] + m * d * d, want[1] + I[1] + m * d * d, want[2] + I[2]]
        for k in range(3):
            self.assertLess(rel(l["inertia"][4 * k], want[k]), 1e-5, k)

    def world_z(self, name):
        z, i = 0.0, self.m["links"].index(self.links[name])
        while i >= 0:
            z += self.m["links"][i]["origin_p"][2]
            i = self.m["links"][i]["parent"]
        return z

    def test_soles_touch_the_floor_at_the_standing_height(self):
        self.assertAlmostEqual(self.m["links"][0]["origin_p"][2], BIPED_STANDING_Z, delta=1e-12)
        for s in "RL":
            foot = self.links[s + "_ANKLE_R"]
            (g,) = foot["geoms"]
            self.assertEqual(g["type"], "box")
            sole = self.world_z(s + "_ANKLE_R") + g["p"][2] - g["size"][2] / 2
            self.assertAlmostEqual(sole, 0.0, delta=1e-12, msg=s)
        lowest = min(self.world_z(l["name"]) + g["p"][2] for l in self.m["links"]
                     for g in l["geoms"])
        self.assertGreater(lowest, 0.0)

    def test_drives_in_realistic_ranges(self):
        for n in BIPED_IDS:
            l = self.links[n]
            self.assertTrue(50 <= l["gear_ratio"] <= 160, n)
            self.assertTrue(0.5 < l["gear_efficiency"] <= 1.0, n)
            self.assertTrue(1e-5 <= l["rotor_inertia"] <= 1e-4, n)
            self.assertTrue(2048 <= l["encoder_pulse"] <= 4096, n)
            self.assertTrue(0.01 <= l["torque_const"] <= 0.2, n)
            self.assertTrue(l["llimit"] < l["ulimit"], n)
            self.assertTrue(l["llimit"] <= 0.0 <= l["ulimit"], n + ": zero pose inside the stops")
            self.assertTrue(0 < l["uvlimit"] < 20 and l["lvlimit"] == -l["uvlimit"], n)

    def test_sensors_on_their_links(self):
        sensors = {s["name"]: s for s in self.m["sensors"]}
        want = {"WAIST_ACCEL": ("accel", "WAIST", 0), "WAIST_GYRO": ("gyro", "WAIST", 0),
                "R_ANKLE_FT": ("force", "R_ANKLE_R", 0), "L_ANKLE_FT": ("force", "L_ANKLE_R", 1)}
        self.assertEqual(set(sensors), set(want))
        for n, (typ, link, sid) in want.items():
            s = sensors[n]
            self.assertEqual((s["type"], s["link"], s["sensor_id"]), (typ, link, sid), n)
            self.assertTrue(all(x > 0 for x in s["max"]), n + ": a measuring range")
            if typ == "force":
                self.assertTrue(all(x > 0 for x in s["max_torque"]), n)
                # between the ankle and the sole: below the joint, above the sole's bottom
                self.assertTrue(-0.06 < s["p"][2] < 0.0, n)


def window_means(rows, col, t0, width_s=0.1):
    """Means over consecutive windows from t0: the configured sensor noise averages out, a
    drift or an oscillation slower than the window does not."""
    out, acc, start = [], [], None
    for r in rows:
        t = float(r["time_s"])
        if t < t0:
            continue
        if start is None:
            start = t
        if t - start >= width_s - 1e-9:
            out.append(sum(acc) / len(acc))
            acc, start = [], t
        acc.append(float(r[col]) if isinstance(col, str) else sum(float(r[c]) for c in col))
    return out


class BipedStands(unittest.TestCase):
    """config/biped-stand.yaml for 10 s at 1 ms: settled after 1 s, then statics."""

    SETTLE_S = 1.0

    @classmethod
    def setUpClass(cls):
        cls.model = load(BIPED)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "stand.csv")
            r = subprocess.run([HILSIM, "sim", STAND, "--duration", "10", "--out", out],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise AssertionError("hilsim sim: exit %d: %s" % (r.returncode, r.stderr))
            with open(out) as f:
                cls.rows = list(csv.DictReader(f))
        cls.settled = [r for r in cls.rows if float(r["time_s"]) >= cls.SETTLE_S]

    def test_ran_ten_seconds(self):
        self.assertGreaterEqual(float(self.rows[-1]["time_s"]), 9.99)
        self.assertGreater(len(self.settled), 8900)

    def test_waist_height_holds(self):
        z = [float(r["biped.z"]) for r in self.settled]
        self.assertLess(max(z) - min(z), 0.005)
        # Standing where it was put: only the contact compliance (0.1 mm here) lowers it.
        self.assertLess(abs(sum(z) / len(z) - BIPED_STANDING_Z), 0.002)

    def test_stays_upright(self):
        for r in self.settled:
            qx, qy = float(r["biped.qx"]), float(r["biped.qy"])
            tilt = 2 * math.asin(min(1.0, math.hypot(qx, qy)))
            self.assertLess(tilt, 0.01, r["time_s"])

    def test_ankle_force_sensors_carry_the_weight(self):
        """Sign (include/hilsim/ft_sensor.h): a sensor reads the wrench its link (the foot)
        exerts on the parent (the ankle). Standing, the floor pushes each sole up and the foot
        passes that up into the ankle, so fz is POSITIVE (a negative fz would mean the foot
        hangs from the ankle). The two sensors carry everything above them: the robot's mass
        less the two sole plates below the sensors, which is within 2 % of the whole robot's
        m g because the soles are light (0.4 of 29.9 kg)."""
        M = self.model["total_mass"]
        links = by_name(self.model)
        soles = links["R_ANKLE_R"]["mass"] + links["L_ANKLE_R"]["mass"]
        right = window_means(self.settled, "R_ANKLE_FT.fz", self.SETTLE_S)
        left = window_means(self.settled, "L_ANKLE_FT.fz", self.SETTLE_S)
        total = window_means(self.settled, ["R_ANKLE_FT.fz", "L_ANKLE_FT.fz"], self.SETTLE_S)
        self.assertGreaterEqual(len(total), 89)
        for fr, fl, ft in zip(right, left, total):
            self.assertGreater(fr, 0.0)
            self.assertGreater(fl, 0.0)
            self.assertLess(abs(fr - fl) / ft, 0.1, "symmetric robot, both feet loaded")
            self.assertLess(rel(ft, (M - soles) * G), 0.01, "weight above the sensors")
            self.assertLess(rel(ft, M * G), 0.02, "total weight")
        for r in self.settled[::100]:
            for s in ("R_ANKLE_FT", "L_ANKLE_FT"):
                self.assertLess(abs(float(r[s + ".fx"])), 5.0, "no shear standing still")
                self.assertLess(abs(float(r[s + ".fy"])), 5.0)

    def test_waist_imu_reads_plus_g(self):
        """An accelerometer at rest measures the specific force: +g along the up axis."""
        az = window_means(self.settled, "WAIST_ACCEL.z", self.SETTLE_S)
        self.assertGreaterEqual(len(az), 89)
        for a in az:
            self.assertLess(rel(a, G), 0.01)
        for col in ("WAIST_ACCEL.x", "WAIST_ACCEL.y"):
            for a in window_means(self.settled, col, self.SETTLE_S):
                self.assertLess(abs(a), 0.05, col)
        for col in ("WAIST_GYRO.x", "WAIST_GYRO.y", "WAIST_GYRO.z"):
            for w in window_means(self.settled, col, self.SETTLE_S):
                self.assertLess(abs(w), 0.01, col)


class BipedChestPush(unittest.TestCase):
    """The gains are critically damped for the inertia they move: a chest yaw started at
    dq0 = 0.5 rad/s (arms and chest turning, the robot standing) rises to about
    dq0 / (w e) = 6.1 mrad at t = 1/w and returns without overshoot (w = 30 rad/s in
    biped-stand.yaml). The waist recoils a little against the feet's friction, so the peak is
    checked within 25 %; overshoot, the signature of underdamping, within 2 % of the peak."""

    W = 30.0
    DQ0 = 0.5

    def test_push_decays_critically(self):
        with open(STAND) as f:
            text = f.read()
        text = text.replace("file: ../models/", "file: " + os.path.join(SRC, "models") + "/")
        line = next(l for l in text.splitlines()
                    if l.strip().startswith("file:") and "biped.wrl" in l)
        text = text.replace(line, line + "\n    initial:\n      joints:\n        CHEST: {dq: %g}"
                            % self.DQ0, 1)
        with tempfile.TemporaryDirectory() as tmp:
            cfg, out = os.path.join(tmp, "push.yaml"), os.path.join(tmp, "push.csv")
            with open(cfg, "w") as f:
                f.write(text)
            r = subprocess.run([HILSIM, "sim", cfg, "--duration", "1", "--out", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
        self.assertAlmostEqual(float(rows[0]["CHEST.dq"]), self.DQ0, delta=1e-9)
        q = [float(r["CHEST.q"]) for r in rows]
        t = [float(r["time_s"]) for r in rows]
        k = max(range(len(q)), key=lambda i: q[i])
        peak = self.DQ0 / (self.W * math.e)
        self.assertLess(rel(q[k], peak), 0.25)
        self.assertLess(abs(t[k] - 1 / self.W), 0.5 / self.W)
        self.assertGreater(min(q[k:]), -0.02 * q[k], "overshoot")
        self.assertLess(abs(q[-1]), 0.01 * q[k], "back at the hold position after 1 s")


class Arm2(unittest.TestCase):
    """models/arm2.wrl against the numbers it declares: base 5 kg, upper arm 2 kg, forearm
    1.2 kg, tool 1 kg; two rotate joints (SHOULDER 0, ELBOW 1)."""

    def test_declared_mass_and_joints(self):
        m = load(ARM2)
        self.assertEqual(m["warnings"], [])
        masses = {l["name"]: l["mass"] for l in m["links"]}
        want = {"BASE": 5.0, "SHOULDER": 2.0, "ELBOW": 1.2, "WRIST": 1.0}
        self.assertEqual(masses, want)
        self.assertLess(rel(m["total_mass"], sum(want.values())), 1e-9)
        ids = {l["name"]: l["joint_id"] for l in m["links"] if l["joint_id"] >= 0}
        self.assertEqual(ids, {"SHOULDER": 0, "ELBOW": 1})
        self.assertEqual(m["njoint_ids"], 2)
        types = {l["name"]: l["joint_type"] for l in m["links"]}
        self.assertEqual(types, {"BASE": "fixed", "SHOULDER": "rotate", "ELBOW": "rotate",
                                 "WRIST": "fixed"})


if __name__ == "__main__":
    unittest.main()
