"""`hilsim sim --model` takes what `hilsim model` takes (issue 31.4): --package-path NAME=DIR or
DIR resolves a URDF's package:// meshes, and --mesh-collision sets the robot's collision meshes,
checked as the config key is (a typo is refused with the closest value named). Without the
package path the same URDF is refused naming the URI.

Stdlib only. Environment: HILSIM, HS_SOURCE_DIR."""
import os
import struct
import subprocess
import tempfile
import unittest

HILSIM = os.environ["HILSIM"]

ROBOT = """<?xml version="1.0"?>
<robot name="pkgbot">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>
    <collision><geometry><mesh filename="package://mypkg/meshes/cube.stl"/></geometry></collision>
  </link>
</robot>
"""


def write_cube_stl(path, half):
    v = [(sx * half, sy * half, sz * half) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]
    with open(path, "wb") as f:
        f.write(b"cube".ljust(80, b" ") + struct.pack("<I", len(tris)))
        for t in tris:
            f.write(struct.pack("<12fH", 0, 0, 0, *v[t[0]], *v[t[1]], *v[t[2]], 0))


class QuickLookFlags(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        root = self.tmp.name
        os.makedirs(os.path.join(root, "pkgs", "mypkg", "meshes"))
        write_cube_stl(os.path.join(root, "pkgs", "mypkg", "meshes", "cube.stl"), 0.05)
        self.urdf = os.path.join(root, "robot.urdf")
        with open(self.urdf, "w") as f:
            f.write(ROBOT)
        self.env = dict(os.environ)
        self.env.pop("HS_PACKAGE_PATH", None)
        self.env.pop("ROS_PACKAGE_PATH", None)

    def sim(self, *flags):
        return subprocess.run([HILSIM, "sim", "--model", self.urdf, "--duration", "0.05", *flags],
                              capture_output=True, text=True, timeout=120, env=self.env)

    def test_unresolved_package_is_refused(self):
        r = self.sim()
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("package://mypkg/meshes/cube.stl", r.stderr)

    def test_named_package_path(self):
        r = self.sim("--package-path", "mypkg=" + os.path.join(self.tmp.name, "pkgs", "mypkg"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_directory_of_packages(self):
        r = self.sim("--package-path", os.path.join(self.tmp.name, "pkgs"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_mesh_collision_value_checked_as_the_config_key(self):
        pkg = ["--package-path", os.path.join(self.tmp.name, "pkgs")]
        r = self.sim(*pkg, "--mesh-collision", "box")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.sim(*pkg, "--mesh-collision", "boxy")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("models[0].mesh_collision: 'boxy' is not one of", r.stderr)

    def test_summary_names_the_collision_cost_per_pair_class(self):
        # Issue 29: the summary ends with the solver health's collision cost per pair class, so
        # a slow model says which shapes make it slow: the cube's hull against the floor box is
        # a trimesh (ODE collides hulls as small trimeshes), its bounding box a box.
        floor = os.path.join(os.environ.get("HS_SOURCE_DIR", "."), "models", "floor.wrl")
        pkg = ["--package-path", os.path.join(self.tmp.name, "pkgs"), "--env", floor]
        r = self.sim(*pkg)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"collision box-trimesh +[0-9.e+-]+ us/step over [0-9.]+ "
                                   r"tests/step")
        r = self.sim(*pkg, "--mesh-collision", "box")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"collision box-box +[0-9.e+-]+ us/step")
        self.assertNotIn("trimesh", r.stdout)

    def test_flags_belong_to_the_quick_look(self):
        r = subprocess.run([HILSIM, "sim", "some.yaml", "--mesh-collision", "box"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("belong to the quick look", r.stderr)



def stool(effort):
    """A 50 kg body on four bent two-joint legs (hip +0.6 rad, knee -1.2 rad at the zero pose):
    each knee carries about 21 N·m. With EFFORT N·m the quick look holds it or not."""
    legs = ""
    for i, (x, y) in enumerate([(0.3, 0.2), (0.3, -0.2), (-0.3, 0.2), (-0.3, -0.2)]):
        lim = '<limit lower="-2.5" upper="2.5" effort="%g" velocity="10"/>' % effort
        legs += f"""
  <link name="thigh{i}"><inertial><origin xyz="0 0 -0.15"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.001"/></inertial>
    <collision><origin xyz="0 0 -0.15"/><geometry><box size="0.04 0.04 0.3"/></geometry></collision>
  </link>
  <joint name="hip{i}" type="revolute"><parent link="body"/><child link="thigh{i}"/>
    <origin xyz="{x} {y} 0" rpy="0 0.6 0"/><axis xyz="0 1 0"/>{lim}</joint>
  <link name="shank{i}"><inertial><origin xyz="0 0 -0.15"/><mass value="0.5"/>
    <inertia ixx="0.005" iyy="0.005" izz="0.001"/></inertial>
    <collision><origin xyz="0 0 -0.3"/><geometry><sphere radius="0.03"/></geometry></collision>
  </link>
  <joint name="knee{i}" type="revolute"><parent link="thigh{i}"/><child link="shank{i}"/>
    <origin xyz="0 0 -0.3" rpy="0 -1.2 0"/><axis xyz="0 1 0"/>{lim}</joint>"""
    return f"""<?xml version="1.0"?>
<robot name="stool">
  <link name="body"><inertial><mass value="50"/><inertia ixx="1" iyy="2" izz="2"/></inertial>
    <collision><geometry><box size="0.8 0.5 0.15"/></geometry></collision></link>{legs}
</robot>
"""


class QuickLookSaysWhenItDoesNotHold(unittest.TestCase):
    """ANYmal C sank to its knees under the quick look and only 'largest joint deviation
    1.67719' said so (measured since: root 0.631 -> 0.363 m, and the warning). A robot whose
    root sinks by a fifth of its height, or whose joint moves more than 0.5 rad, gets a warning
    naming what to do; one that stands does not."""

    def sim(self, effort):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "stool.urdf")
            with open(path, "w") as f:
                f.write(stool(effort))
            floor = os.path.join(os.environ.get("HS_SOURCE_DIR", "."), "models", "floor.wrl")
            return subprocess.run([HILSIM, "sim", "--model", path, "--env", floor, "--duration",
                                   "3"], capture_output=True, text=True, timeout=300)

    def test_weak_legs_warn(self):
        r = self.sim(8)  # 8 N·m knees under 21 N·m each: it sinks to the floor
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("quick look: the hold did not hold the robot (robot): its root sank", r.stderr)
        self.assertIn("controller.bandwidth_rad_s", r.stderr)

    def test_strong_legs_do_not(self):
        r = self.sim(80)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("did not hold", r.stderr)



class SaturatedTorque(unittest.TestCase):
    """A constant --torque the motor model bounds says what the joint got (issue 31.4)."""

    def sim(self, torque):
        cfg = os.path.join(os.environ.get("HS_SOURCE_DIR", "."), "config", "arm2-demo.yaml")
        return subprocess.run([HILSIM, "sim", cfg, "--torque", "ELBOW=" + torque, "--duration",
                               "0.2"], capture_output=True, text=True, timeout=120)

    def test_bounded_torque_warns(self):
        r = self.sim("1e9")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--torque ELBOW=1e+09: the drive delivered", r.stderr)

    def test_torque_within_limits_does_not(self):
        r = self.sim("0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("the drive delivered", r.stderr)


if __name__ == "__main__":
    unittest.main()
