"""Real robots' URDFs, used in place from HS_ROBOTS_DIR (see tests/model/README.md: extracted from
the `fetch` mirrors of Gepetto/example-robot-data and unitreerobotics/unitree_ros, never copied
into the repository). Every robot is skipped when its files are absent.

For each robot, against the file itself read independently with Python's XML parser:
- `hilsim model --json` loads it (package:// through ROS_PACKAGE_PATH, package:///, relative
  mesh paths, STL and COLLADA collision meshes);
- the total mass is the sum of the file's <mass> values (1e-9 relative);
- the joint ids are the movable joints less the mimic ones; every mimic joint is coupled to the
  joint it names, with its multiplier and offset;
- a movable joint's limits are the file's <limit> (1e-8: --json prints 9 digits);
and the quick look `hilsim sim --model` runs 0.2 s without the world stopping (Panda, UR5,
Go2, Talos), and Go2 stands 3 s on the workplace's floor (--env): its calves rest at 0 in the
file, outside their limits, and its base sits at the origin, so it must start inside its limits
and above the floor.

Stdlib only. Environment: HILSIM, HS_ROBOTS_DIR.
"""
import csv
import json
import math
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

HILSIM = os.environ["HILSIM"]
ROBOTS = os.environ.get("HS_ROBOTS_DIR", "/tmp/hs-robots")
ERD = os.path.join(ROBOTS, "Gepetto+example-robot-data")
UNITREE = os.path.join(ROBOTS, "unitreerobotics+unitree_ros")

CASES = [
    # (what, path, expected joint ids, expected mimic joints)
    ("Franka Panda", os.path.join(ERD, "robots/panda_description/urdf/panda.urdf"), 8, 1),
    ("UR5", os.path.join(ERD, "robots/ur_description/urdf/ur5_robot.urdf"), 6, 0),
    ("Unitree Go2", os.path.join(ERD, "robots/go2_description/urdf/go2.urdf"), 12, 0),
    ("PAL Talos", os.path.join(ERD, "robots/talos_data/robots/talos_full_v2.urdf"), 32, 12),
    ("Unitree G1 with hands",
     os.path.join(UNITREE, "robots/g1_description/g1_29dof_with_hand.urdf"), 43, 0),
]


def env():
    e = dict(os.environ)
    e.pop("HS_PACKAGE_PATH", None)
    e["ROS_PACKAGE_PATH"] = ERD  # its package.xml names the package example-robot-data
    return e


def file_facts(path):
    root = ET.parse(path).getroot()
    mass = sum(float(l.find("inertial/mass").get("value")) for l in root.findall("link")
               if l.find("inertial/mass") is not None)
    movable = [j for j in root.findall("joint")
               if j.get("type") in ("revolute", "continuous", "prismatic")]
    return root, mass, movable


class RealRobots(unittest.TestCase):
    def check(self, what, path, ids, mimics):
        if not os.path.exists(path):
            self.skipTest("%s: %s absent" % (what, path))
        r = subprocess.run([HILSIM, "model", "--json", path], capture_output=True, text=True,
                           timeout=300, env=env())
        self.assertEqual(r.returncode, 0, "%s: %s" % (what, r.stderr))
        m = json.loads(r.stdout)
        root, mass, movable = file_facts(path)
        self.assertLessEqual(abs(m["total_mass"] - mass), 1e-9 * mass, what)
        links = {l["name"]: l for l in m["links"]}
        in_file = sum(1 for j in movable if j.find("mimic") is not None)
        self.assertEqual(in_file, mimics, what)
        self.assertEqual(m["njoint_ids"], ids, what)
        self.assertEqual(len(movable) - in_file, ids, what)
        self.assertEqual(sum(1 for l in m["links"] if l["mimic"]), mimics, what)
        for j in movable:
            l = links[j.get("name")]
            mim = j.find("mimic")
            if mim is not None:
                self.assertEqual(l["mimic"]["joint"], mim.get("joint"))
                self.assertEqual(l["mimic"]["multiplier"], float(mim.get("multiplier", "1")))
                self.assertEqual(l["mimic"]["offset"], float(mim.get("offset", "0")))
                self.assertEqual(l["joint_id"], -1)
            else:
                self.assertGreaterEqual(l["joint_id"], 0, j.get("name"))
            lim = j.find("limit")
            if lim is not None and j.get("type") != "continuous" and lim.get("lower"):
                self.assertLessEqual(abs(l["llimit"] - float(lim.get("lower"))), 1e-8)
                self.assertLessEqual(abs(l["ulimit"] - float(lim.get("upper"))), 1e-8)
        print("%s: %d links, %d joint ids, %.4f kg, %d geoms, %d warnings" %
              (what, len(m["links"]), m["njoint_ids"], m["total_mass"],
               sum(len(l["geoms"]) for l in m["links"]), len(m["warnings"])))
        return m

    def test_panda(self):
        self.check(*CASES[0])

    def test_ur5(self):
        m = self.check(*CASES[1])
        self.assertTrue(any("libgazebo_ros_control.so" in w for w in m["warnings"]))

    def test_go2(self):
        self.check(*CASES[2])

    def test_talos(self):
        self.check(*CASES[3])

    def test_g1(self):
        self.check(*CASES[4])

    def test_quick_look_runs(self):
        for what, path, _, _ in (CASES[0], CASES[1], CASES[2], CASES[3]):
            if not os.path.exists(path):
                continue
            r = subprocess.run([HILSIM, "sim", "--model", path, "--duration", "0.2"],
                               capture_output=True, text=True, timeout=300, env=env())
            self.assertEqual(r.returncode, 0, "%s: %s" % (what, r.stderr))

    def test_go2_stands_on_the_floor(self):
        what, path, _, _ = CASES[2]
        floor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "shared", "models", "openhrp", "floor.wrl")
        if not os.path.exists(path) or not os.path.exists(floor):
            self.skipTest("Go2 or ../shared's floor absent")
        r = subprocess.run([HILSIM, "sim", "--model", path, "--env", floor, "--duration", "3"],
                           capture_output=True, text=True, timeout=300, env=env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("starts at the nearest limit", r.stderr)
        # The root ends above the floor (it crouches under the PD hold at the calves' limit).
        z = float(r.stdout.split("robot root at (")[1].split(")")[0].split(",")[2])
        self.assertGreater(z, 0.1)

    def test_unitree_quadrupeds_rest_on_the_floor(self):
        """Unitree's A1, Go1 and Aliengo (unitree_ros, <kp value="..."/> Gazebo surfaces) in the
        quick look: placed on the floor before the first step (the base starts at the origin,
        the feet would be 0.3 m inside it), no guard trip, and they end standing on it."""
        floor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "shared", "models", "openhrp", "floor.wrl")
        for name in ("a1", "go1", "aliengo"):
            path = os.path.join(UNITREE, "robots/%s_description/urdf/%s.urdf" % (name, name))
            if not os.path.exists(path) or not os.path.exists(floor):
                continue
            with self.subTest(robot=name), tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "log.csv")
                r = subprocess.run([HILSIM, "sim", "--model", path, "--env", floor, "--duration",
                                    "3", "--log-every", "100", "--out", out],
                                   capture_output=True, text=True, timeout=300, env=env())
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                self.assertNotIn("inside models[1]", r.stderr)  # no overlap left at start
                with open(out) as f:
                    rows = list(csv.reader(f))
                z = rows[0].index("robot.z")
                z0, z1 = float(rows[1][z]), float(rows[-1][z])
                self.assertGreater(z0, 0.3)  # raised from the origin onto the floor
                self.assertGreater(z1, 0.15)  # standing, crouched under the PD hold

    def test_h1_stands_on_the_floor(self):
        """Unitree H1 (a 59 kg biped on 3 cm wide feet) in the quick look stands 10 s on the
        floor: it fell backwards when its knees were sized on what they move (~200 N·m/rad), so
        the quick look's stance gains hold a biped's knees and hips at four times their share
        of the load's gravity moment (src/bench/quick_look_gains.c). The criterion is
        test_quick_look_robots': no guard trip, the root no more than 10 % lower and within
        15 degrees of its start, at rest over the last second (every joint under 5 rad/s)."""
        floor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "shared", "models", "openhrp", "floor.wrl")
        path = os.path.join(UNITREE, "robots/h1_description/urdf/h1.urdf")
        if not os.path.exists(path) or not os.path.exists(floor):
            self.skipTest("H1 or ../shared's floor absent")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "log.csv")
            r = subprocess.run([HILSIM, "sim", "--model", path, "--env", floor, "--duration", "10",
                                "--log-every", "10", "--out", out],
                               capture_output=True, text=True, timeout=600, env=env())
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertNotIn("plant fault", r.stdout + r.stderr)
            with open(out) as f:
                rows = list(csv.reader(f))
        head, rows = rows[0], [[float(v) for v in row] for row in rows[1:]]
        x = head.index("robot.x")
        self.assertAlmostEqual(rows[-1][0], 10.0, places=6)
        self.assertGreater(rows[-1][x + 2], 0.9 * rows[0][x + 2])
        dot = abs(sum(a * b for a, b in zip(rows[0][x + 3:x + 7], rows[-1][x + 3:x + 7])))
        self.assertLess(math.degrees(2 * math.acos(min(1.0, dot))), 15.0)
        last = [row for row in rows if row[0] >= 9.0 - 1e-9]
        for i in (i for i, n in enumerate(head) if n.endswith(".dq")):
            self.assertLess(max(abs(row[i]) for row in last), 5.0, head[i])


if __name__ == "__main__":
    unittest.main()
