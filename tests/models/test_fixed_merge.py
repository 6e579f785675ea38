"""Fixed-link merging (physics.merge_fixed_links) against analytic results.

tests/models/fixed_pendulum.wrl: a fixed base, a hinge about Y (PIVOT) with a light rod and a
force sensor at the hinge, a heavy bob on a fixed joint in a turned frame with its centre of mass
off its origin and an IMU of its own, and a tip on a second fixed joint. Merged, rod, bob and tip
are one ODE body; the checks are those of one rigid body computed here from the model's numbers:

- small swings have the period of the compound pendulum, T = 2 pi sqrt(I_pivot / (M g d)) with
  the amplitude correction (1 + theta0^2 / 16), within 0.2 %;
- hanging at rest, the hinge's force sensor carries the weight of everything below it (M g,
  within 0.5 %) in its own (turned) frame, and the bob's IMU reads +g in the bob's sensor frame
  (composed of the hinge angle, the bob's fixed offset and the sensor's pose) within 0.02 m/s^2;
- a range finder on a massless frame fixed beside the rod sees the bob below it (its own
  link's geoms are skipped, not its ODE body's), at the distance the geometry gives (0.1 mm);
- spinning at a constant rate without gravity, the IMU reads the centripetal acceleration
  omega^2 r towards the axis within 3 % of omega^2 r and the gyro (and the joint) the rate
  within 0.2 % of omega, both in the sensor frame (worst over every tick from 0.1 s: 2.35 % and 0.17 % at the
  default 12 quick-step iterations; 1.26 % and 0.11 % at 16, 0.9 % at 20: the IMU
  differentiates the body's velocity over one step, which turns the vector by omega h / 2, and
  quick-step's hinge rows let the spinning body wobble a little under the centripetal load,
  less the more iterations).
Unmerged (merge_fixed_links false) the same runs are printed for comparison: the fixed joints
between the 0.2 kg rod and the 2 kg bob are loose under quick-step and the bob's IMU shakes.

Stdlib only (Debian's /usr/bin/python3). Environment: HILSIM (the binary), HS_SOURCE_DIR.
"""
import csv
import math
import os
import subprocess
import tempfile
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
MODEL = os.path.join(SRC, "tests", "models", "fixed_pendulum.wrl")
G = 9.80665


def rot(axis, angle):
    n = math.sqrt(sum(a * a for a in axis))
    x, y, z = (a / n for a in axis)
    c, s, t = math.cos(angle), math.sin(angle), 1 - math.cos(angle)
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]


def mul(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(3)) for c in range(3)] for r in range(3)]


def tr(a):
    return [[a[c][r] for c in range(3)] for r in range(3)]


def app(a, v):
    return [sum(a[r][k] * v[k] for k in range(3)) for r in range(3)]


def add(u, v):
    return [a + b for a, b in zip(u, v)]


def diag(a, b, c):
    return [[a, 0, 0], [0, b, 0], [0, 0, c]]


# The model (fixed_pendulum.wrl), link frames in PIVOT's frame at q = 0.
R_BOB = rot((1, 1, 0), 0.5)
P_BOB = [0, 0, -0.5]
R_TIP = mul(R_BOB, rot((0, 0, 1), 0.3))
P_TIP = add(P_BOB, app(R_BOB, [0, 0, -0.1]))
PARTS = [  # (mass, centre of mass, inertia about it), all in PIVOT's frame
    (0.2, [0, 0, -0.25], diag(0.0041667, 0.0041667, 0.00001)),
    (2.0, add(P_BOB, app(R_BOB, [0.03, 0, -0.05])), mul(mul(R_BOB, diag(0.002, 0.002, 0.002)),
                                                        tr(R_BOB))),
    (0.3, add(P_TIP, app(R_TIP, [0.01, 0.02, 0])), mul(mul(R_TIP, diag(1e-4, 1.3e-4, 5e-5)),
                                                       tr(R_TIP))),
]
M = sum(p[0] for p in PARTS)
COM = [sum(p[0] * p[1][k] for p in PARTS) / M for k in range(3)]
# Moment of inertia about the hinge (the Y axis through PIVOT's origin): parallel axis.
I_PIVOT = sum(p[2][1][1] + p[0] * (p[1][0] ** 2 + p[1][2] ** 2) for p in PARTS)
D = math.hypot(COM[0], COM[2])
# At rest the centre of mass hangs straight below the hinge: Ry(q) COM has x = 0.
Q_EQ = math.atan2(COM[0], -COM[2])
CAM = [0.0112135, 0.0187865, -0.3]  # the range finder's frame (no mass, no rotation)
R_SENSOR = mul(R_BOB, rot((0, 1, 0), 0.4))  # the IMU's axes in PIVOT's frame
P_SENSOR = add(P_BOB, app(R_BOB, [0.02, 0.01, -0.03]))


def run(tmp, name, merge, q, dq, gravity, duration):
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write("bench: {name: merge-%s}\n" % name)
        f.write("models:\n  - name: pend\n    file: %s\n" % MODEL)
        f.write("    initial: {joints: {PIVOT: {q: %.17g, dq: %.17g}}}\n" % (q, dq))
        f.write("physics:\n  merge_fixed_links: %s\n  gravity: [0, 0, %.17g]\n"
                % ("true" if merge else "false", -gravity))
        f.write("controller: {type: none}\n")
    out = os.path.join(tmp, name + ".csv")
    r = subprocess.run([HILSIM, "sim", cfg, "--duration", str(duration), "--out", out],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError("hilsim sim: exit %d: %s" % (r.returncode, r.stderr))
    with open(out) as f:
        return list(csv.DictReader(f))


def period(rows, q0):
    """Mean period from the upward zero crossings of q - q0 (linear interpolation)."""
    ups = []
    for a, b in zip(rows, rows[1:]):
        xa, xb = float(a["PIVOT.q"]) - q0, float(b["PIVOT.q"]) - q0
        if xa < 0 <= xb:
            ta, tb = float(a["time_s"]), float(b["time_s"])
            ups.append(ta + (tb - ta) * (-xa) / (xb - xa))
    return (ups[-1] - ups[0]) / (len(ups) - 1), len(ups) - 1


def worst(rows, sensor, want):
    return max(abs(float(r[sensor + "." + c]) - want[k]) for r in rows
               for k, c in enumerate("xyz"))


class FixedLinksMerged(unittest.TestCase):
    AMPLITUDE = 0.05  # rad

    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            cls.swing = {m: run(tmp, "swing%d" % m, m, Q_EQ + cls.AMPLITUDE, 0, G, 8)
                         for m in (True, False)}
            cls.rest = {m: run(tmp, "rest%d" % m, m, Q_EQ, 0, G, 1) for m in (True, False)}
            cls.spin = {m: run(tmp, "spin%d" % m, m, 0, 5.0, 0, 1) for m in (True, False)}

    def test_period_of_the_combined_rigid_body(self):
        t0 = 2 * math.pi * math.sqrt(I_PIVOT / (M * G * D))
        want = t0 * (1 + self.AMPLITUDE ** 2 / 16)
        got, n = period(self.swing[True], Q_EQ)
        other, _ = period(self.swing[False], Q_EQ)
        print("\npendulum: I_pivot %.6f kg m^2, M %.3f kg, d %.5f m: T = %.5f s analytic, "
              "%.5f s merged (%+.3f %%, %d periods), %.5f s unmerged (%+.3f %%)"
              % (I_PIVOT, M, D, want, got, 100 * (got / want - 1), n, other,
                 100 * (other / want - 1)))
        self.assertGreaterEqual(n, 4)
        self.assertLess(abs(got / want - 1), 0.002)

    def test_force_sensor_carries_the_weight(self):
        # Hanging: the load pulls down, (0, 0, -M g) in the world, read in PIVOT's frame
        # turned by q about Y (include/hilsim/ft_sensor.h).
        want = app(tr(rot((0, 1, 0), Q_EQ)), [0, 0, -M * G])
        for merge in (True, False):
            rows = self.rest[merge][500:]
            for k, c in enumerate("xyz"):
                mean = sum(float(r["PIVOT_FT.f" + c]) for r in rows) / len(rows)
                self.assertLess(abs(mean - want[k]), 0.005 * M * G, (merge, c, mean, want))

    def test_imu_reads_gravity_at_rest(self):
        R_ws = mul(rot((0, 1, 0), Q_EQ), R_SENSOR)
        want = app(tr(R_ws), [0, 0, G])  # specific force at rest: +g up
        rows = self.rest[True][100:]
        for r in rows[::50]:
            for k, c in enumerate("xyz"):
                self.assertLess(abs(float(r["BOB_ACCEL." + c]) - want[k]), 0.02,
                                (r["time_s"], c, want))
                self.assertLess(abs(float(r["BOB_GYRO." + c])), 1e-3, r["time_s"])
        print("\nIMU at rest, worst error over 0.1..1 s: merged %.4f m/s^2, unmerged %.4f m/s^2"
              % (worst(self.rest[True][100:], "BOB_ACCEL", want),
                 worst(self.rest[False][100:], "BOB_ACCEL", want)))

    def test_range_finder_sees_a_link_of_its_own_body(self):
        # From the frame beside the rod straight down (PIVOT's -Z) onto the bob's sphere (r
        # 0.05 m): all three ride on one ODE body merged, and the scanner skips only its own
        # link's geoms. Rigid, so the same at any hinge angle.
        c = add(P_BOB, app(R_BOB, [0.03, 0, -0.05]))
        self.assertLess(math.hypot(c[0] - CAM[0], c[1] - CAM[1]), 1e-6)
        want = CAM[2] - (c[2] + 0.05)
        for merge in (True, False):
            for r in self.rest[merge][::100]:
                self.assertLess(abs(float(r["CAM_RANGE.r0"]) - want), 1e-4, (merge, r["time_s"]))

    def test_imu_reads_centripetal_acceleration_spinning(self):
        w = 5.0
        # In PIVOT's (rotating) frame the sensor point turns about the Y axis: its acceleration
        # is -w^2 times its distance from the axis, constant in the sensor frame.
        r_perp = [P_SENSOR[0], 0, P_SENSOR[2]]
        want_a = app(tr(R_SENSOR), [-w * w * x for x in r_perp])
        want_g = app(tr(R_SENSOR), [0, w, 0])
        mag = w * w * math.hypot(r_perp[0], r_perp[2])
        # From 0.1 s: the first steps ring the hinge's soft constraint (ERP, CFM) under the
        # sudden centripetal load, a few percent of it for some ms.
        rows = self.spin[True][100:]
        print("\nIMU spinning at %g rad/s, |a| = %.3f m/s^2, worst error: merged %.4f, "
              "unmerged %.4f m/s^2" % (w, mag, worst(rows, "BOB_ACCEL", want_a),
                                        worst(self.spin[False][100:], "BOB_ACCEL", want_a)))
        for r in rows:
            self.assertLess(abs(float(r["PIVOT.dq"]) - w), 2e-3 * w, r["time_s"])
            for k, c in enumerate("xyz"):
                self.assertLess(abs(float(r["BOB_ACCEL." + c]) - want_a[k]), 0.03 * mag,
                                (r["time_s"], c, want_a))
                self.assertLess(abs(float(r["BOB_GYRO." + c]) - want_g[k]), 2e-3 * w,
                                (r["time_s"], c, want_g))


if __name__ == "__main__":
    unittest.main()
