"""`hilsim sim --model` takes what `hilsim model` takes (issue 31.4): --package-path NAME=DIR or
DIR resolves a URDF's package:// meshes, and --mesh-collision sets the robot's collision meshes,
checked as the config key is (a typo is refused with the closest value named). Without the
package path the same URDF is refused naming the URI.

Stdlib only. Environment: HILSIM."""
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

    def test_flags_belong_to_the_quick_look(self):
        r = subprocess.run([HILSIM, "sim", "some.yaml", "--mesh-collision", "box"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("belong to the quick look", r.stderr)


if __name__ == "__main__":
    unittest.main()
