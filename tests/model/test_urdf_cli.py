"""URDF through the hilsim binary, as a user drives it.

- Export end to end: `hilsim model SR1.wrl --urdf out.urdf`, then out.urdf loaded back by
  `hilsim model --json` has the same links, joint types and ids, masses, centres of mass and
  inertias (1e-9), joint axes (1e-12) and limits (1e-9), sensors; and `hilsim sim` of each, standing
  on the floor under the PD hold for 5 s, gives the same trajectory: joint positions and root
  pose within 1e-6 (rad, m; measured: bit-identical). Skipped when the workplace's shared SR1 is
  absent (HS_SHARED_DIR).
- package:// resolution: an unresolved URI is an error naming the URDF file and line and the
  URI; `--package-path NAME=DIR`, `--package-path DIR`, $ROS_PACKAGE_PATH and the config key
  models[].package_paths each resolve it; a config naming a missing directory is an error at
  its line.
- `--mesh-collision box` and models[].mesh_collision turn a mesh into its bounding box, VRML
  IndexedFaceSets too; convex warns naming the link when a mesh encloses no volume.
- models[].sensors declares sensors on a URDF's links; they read statics in `hilsim sim`.

Stdlib only. Environment: HILSIM, HS_SOURCE_DIR, HS_SHARED_DIR.
"""
import csv
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

HILSIM = os.environ["HILSIM"]
SHARED = os.environ.get("HS_SHARED_DIR", "")
SR1 = os.path.join(SHARED, "models", "openhrp", "SR1.wrl")
FLOOR = os.path.join(SHARED, "models", "openhrp", "floor.wrl")


def run(args, env=None):
    e = dict(os.environ)
    e.pop("HS_PACKAGE_PATH", None)
    e.pop("ROS_PACKAGE_PATH", None)
    e.update(env or {})
    return subprocess.run([HILSIM] + args, capture_output=True, text=True, timeout=300, env=e)


def model_json(path, *flags, env=None):
    r = run(["model", "--json"] + list(flags) + [path], env)
    if r.returncode != 0:
        raise AssertionError("hilsim model %s: exit %d: %s" % (path, r.returncode, r.stderr))
    return json.loads(r.stdout)


def close(a, b, tol):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol


def write_cube_stl(path, half):
    """A binary STL cube of the given half size, centred at (0.1, 0, 0)."""
    v = [(0.1 + sx * half, sy * half, sz * half) for sx in (-1, 1) for sy in (-1, 1)
         for sz in (-1, 1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]
    with open(path, "wb") as f:
        f.write(b"cube".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            f.write(struct.pack("<12fH", 0, 0, 0, *v[t[0]], *v[t[1]], *v[t[2]], 0))


ROBOT = """<?xml version="1.0"?>
<robot name="pkgbot">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial>
    <collision>
      <geometry><mesh filename="package://mypkg/meshes/cube.stl"/></geometry>
    </collision>
  </link>
</robot>
"""


class Export(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(SR1) or not os.path.exists(FLOOR):
            self.skipTest("no shared SR1 model (%s)" % SR1)
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "sr1.urdf")

    def tearDown(self):
        self.tmp.cleanup()

    def test_model_and_trajectory_survive_export(self):
        r = run(["model", SR1, "--urdf", self.out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("wrote " + self.out, r.stderr)
        self.assertTrue(os.path.isfile(self.out))
        a, b = model_json(SR1), model_json(self.out)
        self.assertEqual(len(a["links"]), len(b["links"]))
        self.assertEqual(a["njoint_ids"], b["njoint_ids"])
        for x, y in zip(a["links"], b["links"]):
            self.assertEqual(x["name"], y["name"])
            self.assertEqual(x["parent"], y["parent"])
            self.assertEqual(x["joint_type"], y["joint_type"], x["name"])
            self.assertEqual(x["joint_id"], y["joint_id"], x["name"])
            self.assertTrue(close(x["mass"], y["mass"], 1e-9), x["name"])
            for k in range(3):
                self.assertTrue(close(x["com"][k], y["com"][k], 1e-9), x["name"])
            for k in range(9):
                self.assertTrue(close(x["inertia"][k], y["inertia"][k], 1e-9), x["name"])
            if x["joint_type"] in ("rotate", "slide"):
                for k in range(3):
                    self.assertTrue(close(x["axis"][k], y["axis"][k], 1e-12), x["name"])
                for lim in ("llimit", "ulimit", "lvlimit", "uvlimit"):
                    self.assertTrue(close(x[lim], y[lim], 1e-9), (x["name"], lim, x[lim], y[lim]))
            self.assertEqual(len(x["geoms"]), len(y["geoms"]), x["name"])
        kept = [s["name"] for s in a["sensors"] if s["type"] in ("accel", "gyro", "force")]
        self.assertEqual(sorted(kept), sorted(s["name"] for s in b["sensors"]))
        self.assertGreater(len(kept), 0)

        # The same bench, robot from either file, standing 5 s on the floor.
        logs = []
        for i, robot in enumerate((SR1, self.out)):
            cfg = os.path.join(self.tmp.name, "b%d.yaml" % i)
            with open(cfg, "w") as f:
                f.write("bench: {name: urdf-e2e-%d}\nmodels:\n  - {name: robot, file: %s}\n"
                        "  - {name: floor, file: %s, static: true}\n"
                        "controller: {type: pd_hold, bandwidth_rad_s: 30}\n" % (i, robot, FLOOR))
            log = os.path.join(self.tmp.name, "b%d.csv" % i)
            r = run(["sim", cfg, "--duration", "5", "--out", log])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(log) as f:
                logs.append(list(csv.reader(f)))
        a_log, b_log = logs
        self.assertEqual(a_log[0], b_log[0])
        self.assertEqual(len(a_log), len(b_log))
        self.assertGreater(len(a_log), 5000)
        head = a_log[0]
        cols = [k for k, h in enumerate(head) if h.endswith(".q") or h.split(".")[-1] in
                ("x", "y", "z", "qw", "qx", "qy", "qz")]
        self.assertGreater(len(cols), 29)
        worst = 0.0
        for ra, rb in zip(a_log[1:], b_log[1:]):
            for k in cols:
                worst = max(worst, abs(float(ra[k]) - float(rb[k])))
        print("SR1 vs its URDF export, 5 s standing: worst joint/root difference %.3g" % worst)
        self.assertLessEqual(worst, 1e-6)


class Packages(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.pkgs = os.path.join(t, "pkgs")
        self.pkg = os.path.join(self.pkgs, "mypkg")
        os.makedirs(os.path.join(self.pkg, "meshes"))
        write_cube_stl(os.path.join(self.pkg, "meshes", "cube.stl"), 0.05)
        os.makedirs(os.path.join(t, "robot"))
        self.urdf = os.path.join(t, "robot", "r.urdf")
        with open(self.urdf, "w") as f:
            f.write(ROBOT)

    def tearDown(self):
        self.tmp.cleanup()

    def test_unresolved_names_file_line_and_uri(self):
        r = run(["model", self.urdf])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(self.urdf + ":6:", r.stderr)
        self.assertIn("package://mypkg/meshes/cube.stl", r.stderr)
        self.assertIn("--package-path", r.stderr)

    def test_named_package_directory_flag_and_environment(self):
        for flags, env in ((["--package-path", "mypkg=" + self.pkg], None),
                           (["--package-path", self.pkgs], None),
                           ([], {"ROS_PACKAGE_PATH": "/nonexistent:" + self.pkgs})):
            m = model_json(self.urdf, *flags, env=env)
            g = m["links"][0]["geoms"]
            self.assertEqual(len(g), 1, flags)
            self.assertEqual(g[0]["type"], "mesh")
            self.assertEqual(g[0]["ntriangles"], 12)

    def test_named_package_without_the_file_is_an_error(self):
        r = run(["model", "--package-path", "mypkg=" + self.tmp.name, self.urdf])
        self.assertEqual(r.returncode, 2)
        self.assertIn(self.urdf + ":6:", r.stderr)
        self.assertIn("package 'mypkg' is given as " + self.tmp.name, r.stderr)

    def test_mesh_collision_box(self):
        m = model_json(self.urdf, "--package-path", "mypkg=" + self.pkg, "--mesh-collision", "box")
        g = m["links"][0]["geoms"]
        self.assertEqual(g[0]["type"], "box")
        for k in range(3):
            self.assertAlmostEqual(g[0]["size"][k], 0.1, delta=1e-6)  # float STL
        self.assertAlmostEqual(g[0]["p"][0], 0.1, delta=1e-6)

    def test_mesh_collision_reaches_vrml(self):
        # Issue 29: mesh_collision applies to VRML IndexedFaceSets too (box did not before).
        wrl = os.path.join(os.environ.get("HS_SOURCE_DIR", "."),
                           "tests/model/corpus/ifs_nonconvex.wrl")
        types = {}
        for how in ("convex", "exact", "box", "auto"):
            m = model_json(wrl, "--mesh-collision", how)
            types[how] = [g["type"] for l in m["links"] for g in l["geoms"]]
            if how in ("convex", "auto"):  # an open mesh: its hull may not fit, said per link
                self.assertTrue(any("link 'JOINT0'" in w and "no volume" in w
                                    for w in m["warnings"]), m["warnings"])
            else:
                self.assertEqual(m["warnings"], [])
        self.assertEqual(types["box"], ["box"])
        self.assertEqual(types["exact"], ["mesh"])
        self.assertEqual(types["convex"], ["mesh"])

    def test_model_json_reports_hull_sizes(self):
        # Issue 29: each mesh geom says how it collides and, for a hull, its size.
        wrl = os.path.join(self.tmp.name, "cube.wrl")
        with open(wrl, "w") as f:  # a closed 0.1 m cube as an IndexedFaceSet of quads
            f.write('#VRML V2.0 utf8\nDEF ROOT Joint { jointType "free" children [\n'
                    '  Segment { mass 1 momentsOfInertia [0.01 0 0 0 0.01 0 0 0 0.01] }\n'
                    '  Shape { geometry IndexedFaceSet { coord Coordinate { point [\n'
                    '    0 0 0, 0.1 0 0, 0.1 0.1 0, 0 0.1 0, 0 0 0.1, 0.1 0 0.1, 0.1 0.1 0.1,'
                    ' 0 0.1 0.1 ] }\n'
                    '    coordIndex [ 0 3 2 1 -1, 4 5 6 7 -1, 0 1 5 4 -1, 1 2 6 5 -1,'
                    ' 2 3 7 6 -1, 3 0 4 7 -1 ] } }\n] }\n')
        convex = [g for l in model_json(wrl, "--mesh-collision", "convex")["links"]
                  for g in l["geoms"] if g["type"] == "mesh"]
        exact = [g for l in model_json(wrl, "--mesh-collision", "exact")["links"]
                 for g in l["geoms"] if g["type"] == "mesh"]
        self.assertTrue(convex)
        for g in convex:
            self.assertEqual(g["collision"], "convex")
            h = g["hull"]
            self.assertEqual((h["nvertices"], h["nfaces"], h["ntriangles"]), (8, 6, 12), g)
            self.assertAlmostEqual(h["volume_ratio"], 1.0, places=6)
        for g in exact:
            self.assertEqual(g["collision"], "exact")
            self.assertIsNone(g["hull"])

    def config(self, extra):
        cfg = os.path.join(self.tmp.name, "bench.yaml")
        with open(cfg, "w") as f:
            f.write("bench: {name: pkgs}\nmodels:\n  - name: bot\n    file: robot/r.urdf\n"
                    + extra)
        return cfg

    def test_config_package_paths(self):
        r = run(["config", "check", "--quiet", self.config("")])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("package://mypkg/meshes/cube.stl", r.stderr)
        cfg = self.config("    package_paths:\n      mypkg: {dir: pkgs/mypkg}\n"
                          "    mesh_collision: box\n")
        r = run(["config", "check", cfg])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(self.pkg, r.stdout)  # resolved to an absolute directory
        self.assertIn("mesh_collision: box", r.stdout)
        cfg = self.config("    package_paths:\n      mypkg: {dir: nowhere}\n")
        r = run(["config", "check", "--quiet", cfg])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("bench.yaml:6:", r.stderr)
        self.assertIn("package_paths.mypkg.dir", r.stderr)


class ConfigSensors(unittest.TestCase):
    """Sensors a URDF lacks, declared in the config on named links (models[].sensors), read
    statics on tests/model/urdf/ros2.urdf bolted to the world under the PD hold: an accelerometer
    on the base turned upside down reads -g on its z; a force sensor at joint j3 carries link l3
    (0.5 kg): fz = -m g."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        src = os.environ["HS_SOURCE_DIR"]
        self.robot = os.path.join(src, "tests", "model", "urdf", "ros2.urdf")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, link):
        cfg = os.path.join(self.tmp.name, "s.yaml")
        with open(cfg, "w") as f:
            f.write("bench: {name: sensors}\nmodels:\n  - name: arm\n    file: %s\n"
                    "    sensors:\n"
                    "      base_acc: {type: accel, link: %s, position: [0, 0, 0.1],\n"
                    "                 rotation: [1, 0, 0, 3.141592653589793]}\n"
                    "      l1_gyro: {type: gyro, link: l1}\n"
                    "      wrist_ft: {type: force, link: j3}\n"
                    "sensors:\n  imu:\n    base: {accel: base_acc, gyro: l1_gyro}\n"
                    "  force:\n    wrist_ft: {}\n" % (self.robot, link))
        return cfg

    def test_declared_sensors_read_statics(self):
        cfg = self.write("base")
        log = os.path.join(self.tmp.name, "s.csv")
        r = run(["sim", cfg, "--duration", "0.1", "--out", log])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            rows = list(csv.reader(f))
        last = dict(zip(rows[0], rows[-1]))
        g = 9.80665
        self.assertAlmostEqual(float(last["base_acc.z"]), -g, delta=1e-6)
        self.assertAlmostEqual(float(last["base_acc.x"]), 0, delta=1e-6)
        self.assertAlmostEqual(float(last["wrist_ft.fz"]), -0.5 * g, delta=1e-6)

    def test_unknown_link_is_an_error_at_its_line(self):
        r = run(["config", "check", "--quiet", self.write("nowhere")])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("s.yaml:6:", r.stderr)
        self.assertIn("models[0].sensors.base_acc.link: 'nowhere' is no link", r.stderr)


def every_model():
    """The project's bundled models and every VRML robot in the shared collection."""
    src = os.environ.get("HS_SOURCE_DIR", ".")
    found = [os.path.join(src, "models", f) for f in sorted(os.listdir(os.path.join(src, "models")))
             if f.endswith(".wrl")]
    top = os.path.join(SHARED, "models") if SHARED else ""
    if top and os.path.isdir(top):
        for d, dirs, files in os.walk(top):
            dirs[:] = sorted(x for x in dirs if x != "parts")  # Inline'd parts, not robots
            found += [os.path.join(d, f) for f in sorted(files) if f.endswith(".wrl")]
    return found


class ExportEveryModel(unittest.TestCase):
    """Each model exports to a URDF that names every joint once, that urdfdom's check_urdf accepts
    (when installed: liburdfdom-tools) and that loads back with the same links in the same order,
    the same masses (1e-9) and the same joints; a crawler joint comes back fixed, as written. The
    crawler sample once had its two track joints written twice."""

    def test_every_model_round_trips(self):
        models = every_model()
        self.assertGreaterEqual(len(models), 3)
        with tempfile.TemporaryDirectory() as tmp:
            for path in models:
                with self.subTest(model=os.path.relpath(path)):
                    a = model_json(path)
                    out = os.path.join(tmp, os.path.basename(path) + ".urdf")
                    r = run(["model", path, "--urdf", out])
                    self.assertEqual(r.returncode, 0, r.stderr)
                    with open(out) as f:
                        text = f.read()
                    names = [line.split('"')[1] for line in text.splitlines()
                             if line.lstrip().startswith("<joint name=") and ' type="' in line]
                    self.assertEqual(len(names), len(set(names)), "a joint written twice")
                    self.assertEqual(len(names), len(a["links"]), "one joint per link")
                    if shutil.which("check_urdf"):
                        c = subprocess.run(["check_urdf", out], capture_output=True, text=True,
                                           timeout=60)
                        self.assertEqual(c.returncode, 0, c.stdout + c.stderr)
                    b = model_json(out)
                    self.assertEqual([l["name"] for l in b["links"]], [l["name"] for l in a["links"]])
                    for x, y in zip(a["links"], b["links"]):
                        self.assertTrue(close(y["mass"], x["mass"], 1e-9), x["name"])
                        want = "fixed" if x["joint_type"] == "crawler" else x["joint_type"]
                        self.assertEqual(y["joint_type"], want, x["name"])


if __name__ == "__main__":
    unittest.main()
