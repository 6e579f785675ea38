"""The installed tree and the .deb: `cmake --install` into a staging prefix, `cpack -G DEB`
into a scratch folder, then what a bench PC would get: the binary, the unit, sysusers and
tmpfiles entries, configs that still find their models, the client library when it is built,
and package metadata (Depends from dpkg-shlibdeps, maintainer scripts)."""
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

SRC = os.environ.get("HS_SOURCE_DIR", "")
BUILD = os.environ.get("HS_BUILD_DIR", "")
HAVE_CLIENT = os.environ.get("HS_HAVE_CLIENT") == "1"


def cache_value(name):
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(rf"{re.escape(name)}:[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                return m.group(1)
    raise AssertionError(f"{name} not in CMakeCache.txt")


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)


def tree(root):
    """Every file and symlink under root, as paths relative to it."""
    out = set()
    for d, dirs, files in os.walk(root):
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            out.add(os.path.relpath(os.path.join(d, name), root))
    return out


def expected_files(libdir):
    want = ["bin/hilsim", "sbin/hilsim-cpu-dropin", "lib/systemd/system/hilsim@.service",
            "lib/sysusers.d/hilsim.conf", "lib/tmpfiles.d/hilsim.conf",
            "share/doc/hilsim/README.md", "share/doc/hilsim/systemd.md",
            "share/hilsim/systemd/net-admin.conf", "share/hilsim/config/arm2-demo.yaml",
            "share/hilsim/models/arm2.wrl", "share/hilsim/models/floor.wrl",
            # what the docs use (issue 31.10): scenarios, gains, the recording reader and notes,
            # the example controllers built and as sources
            "share/hilsim/scenarios/README.md", "share/hilsim/scenarios/arm-encoder-stuck.yaml",
            "share/hilsim/scenarios/biped-side-push.yaml", "share/hilsim/config/biped-shm.gains",
            "share/hilsim/python/hilsim_record.py", "share/doc/hilsim/python.md",
            "share/doc/hilsim/recording.md", "share/hilsim/examples/pd_controller.c",
            "share/hilsim/examples/logger.py"]
    if HAVE_CLIENT:
        want += ["lib/hilsim/examples/pd_controller", "lib/hilsim/examples/torque_controller",
                 "lib/hilsim/examples/lockstep_controller", "share/hilsim/python/hilsim_client.py"]
    if HAVE_CLIENT:
        want += [f"{libdir}/libhilsim-client.so", f"{libdir}/libhilsim-client.so.0",
                 "include/hilsim/client.h", f"{libdir}/pkgconfig/hilsim-client.pc"]
    return want


@unittest.skipUnless(BUILD and SRC, "HS_BUILD_DIR / HS_SOURCE_DIR not set")
class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpdir = tempfile.TemporaryDirectory(prefix="hs-install-")
        cls.stage = os.path.join(cls.tmpdir.name, "stage")
        r = run(["cmake", "--install", BUILD, "--prefix", cls.stage])
        if r.returncode != 0:
            raise AssertionError("cmake --install failed:\n" + r.stdout + r.stderr)
        cls.libdir = cache_value("CMAKE_INSTALL_LIBDIR")
        cls.files = tree(cls.stage)

    @classmethod
    def tearDownClass(cls):
        cls.tmpdir.cleanup()

    def path(self, rel):
        return os.path.join(self.stage, rel)

    def test_tree(self):
        missing = [f for f in expected_files(self.libdir) if f not in self.files]
        self.assertEqual(missing, [], sorted(self.files))
        for exe in ("bin/hilsim", "sbin/hilsim-cpu-dropin"):
            self.assertTrue(os.stat(self.path(exe)).st_mode & stat.S_IXUSR, exe)
        # Installed data is the repository's, unchanged.
        for src, dst in (("systemd/hilsim@.service", "lib/systemd/system/hilsim@.service"),
                         ("systemd/hilsim.sysusers.conf", "lib/sysusers.d/hilsim.conf"),
                         ("systemd/README.md", "share/doc/hilsim/systemd.md")):
            with open(os.path.join(SRC, src), "rb") as a, open(self.path(dst), "rb") as b:
                self.assertEqual(a.read(), b.read(), dst)
        models = sorted(f for f in os.listdir(os.path.join(SRC, "models")) if f.endswith(".wrl"))
        self.assertEqual(sorted(os.listdir(self.path("share/hilsim/models"))), models)
        # Only what the install rules name: no build output, no sources.
        self.assertFalse([f for f in self.files if f.endswith((".o", ".a", ".cmake")) or
                          f.endswith(".c") and not f.startswith("share/hilsim/examples/")])

    def test_installed_configs_find_their_models(self):
        """Configs name models as ../models/: the installed layout must keep that working."""
        cfg_dir = self.path("share/hilsim/config")
        configs = sorted(f for f in os.listdir(cfg_dir) if f.endswith(".yaml"))
        self.assertIn("arm2-demo.yaml", configs)
        for name in configs:
            r = run([self.path("bin/hilsim"), "config", "check", "--quiet",
                     os.path.join(cfg_dir, name)])
            self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
        r = run([self.path("bin/hilsim"), "config", "check", os.path.join(cfg_dir,
                 "arm2-demo.yaml")])
        self.assertIn(f'file: "{self.path("share/hilsim/models/arm2.wrl")}"', r.stdout)

    def test_installed_binary_runs(self):
        r = run([self.path("bin/hilsim"), "sim", self.path("share/hilsim/config/arm2-demo.yaml"),
                 "--duration", "0.2", "--out", os.path.join(self.tmpdir.name, "sim.csv")])
        self.assertEqual(r.returncode, 0, r.stderr)

    @unittest.skipUnless(HAVE_CLIENT, "hilsim-client is not built")
    def test_client_library_links_from_staging(self):
        self.assertTrue(os.path.islink(self.path(f"{self.libdir}/libhilsim-client.so")))
        if not shutil.which("pkg-config") or not shutil.which("cc"):
            self.skipTest("pkg-config or cc missing")
        env = dict(os.environ, PKG_CONFIG_PATH=self.path(f"{self.libdir}/pkgconfig"))
        r = run(["pkg-config", "--cflags", "--libs", "hilsim-client"], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        flags = r.stdout.split()
        # Relocatable .pc: it points into the staging tree, not at the configured prefix.
        incs = [os.path.normpath(f[2:]) for f in flags if f.startswith("-I")]
        self.assertIn(self.path("include"), incs)
        prog = os.path.join(self.tmpdir.name, "client_user.c")
        with open(prog, "w") as f:
            f.write("#include <hilsim/client.h>\n"
                    "int main(void) { hs_client_detach(0); return 0; }\n")
        exe = os.path.join(self.tmpdir.name, "client_user")
        # A sanitized library needs its runtime first in the program that loads it.
        san = []
        if cache_value("HS_SANITIZE") in ("ON", "TRUE", "1"):
            san = ["-fsanitize=address,undefined"]
        elif cache_value("HS_TSAN") in ("ON", "TRUE", "1"):
            san = ["-fsanitize=thread"]
        r = run(["cc", *san, "-o", exe, prog, *flags])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run([exe], env=dict(os.environ, LD_LIBRARY_PATH=self.path(self.libdir)))
        self.assertEqual(r.returncode, 0, r.stderr)


def deb_tools_missing():
    need = ["cpack", "dpkg-deb", "dpkg-shlibdeps", "dpkg"]
    return [t for t in need if not shutil.which(t)]


@unittest.skipUnless(BUILD and SRC, "HS_BUILD_DIR / HS_SOURCE_DIR not set")
@unittest.skipIf(deb_tools_missing(), f"missing: {deb_tools_missing()} (dpkg-dev)")
class Deb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpdir = tempfile.TemporaryDirectory(prefix="hs-deb-")
        # ctest's fixture service_deb (build-deb.sh) packaged it once for every test that needs
        # it; run by hand, package it here.
        out = os.environ.get("HS_DEB_DIR") or cls.tmpdir.name
        if not os.environ.get("HS_DEB_DIR"):
            # -B keeps the package and CPack's scratch tree out of the build directory.
            r = run(["cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"),
                     "-B", out], cwd=BUILD)
            if r.returncode != 0:
                raise AssertionError("cpack failed:\n" + r.stdout + r.stderr)
        debs = [f for f in os.listdir(out) if f.endswith(".deb")]
        if len(debs) != 1:
            raise AssertionError(f"expected one .deb in {out}: {os.listdir(out)}")
        cls.deb = os.path.join(out, debs[0])
        cls.libdir = cache_value("CMAKE_INSTALL_LIBDIR")
        listing = run(["dpkg-deb", "-c", cls.deb]).stdout
        cls.entries = {}  # path without "./" -> mode string
        for line in listing.splitlines():
            parts = line.split()
            path = parts[5][2:] if parts[5].startswith("./") else parts[5]
            cls.entries[path.rstrip("/")] = parts[0]

    @classmethod
    def tearDownClass(cls):
        cls.tmpdir.cleanup()

    def field(self, name):
        r = run(["dpkg-deb", "-f", self.deb, name])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def test_contents(self):
        prefix = "usr"  # CPack's DEB default CPACK_PACKAGING_INSTALL_PREFIX
        missing = [f for f in expected_files(self.libdir) if f"{prefix}/{f}" not in self.entries]
        self.assertEqual(missing, [], sorted(self.entries))
        self.assertTrue(self.entries["usr/bin/hilsim"].startswith("-rwx"))
        self.assertTrue(self.entries["usr/sbin/hilsim-cpu-dropin"].startswith("-rwx"))
        # Nothing under /etc: benches' configs are the admin's, never conffiles of ours.
        self.assertFalse([p for p in self.entries if p.startswith("etc")])

    def test_control(self):
        info = run(["dpkg-deb", "-I", self.deb]).stdout
        print(info)
        self.assertEqual(self.field("Package"), "hilsim")
        self.assertEqual(self.field("Version"), cache_value("CMAKE_PROJECT_VERSION"))
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        self.assertEqual(self.field("Architecture"), arch)
        depends = [d.strip() for d in self.field("Depends").split(",")]
        names = {re.split(r"[ (]", d)[0] for d in depends}
        self.assertIn("systemd", names)  # sysusers/tmpfiles in postinst, the unit itself
        self.assertIn("libc6", names)
        # Every library hilsim links directly must be depended on, by its package's name.
        owners = needed_packages(os.path.join(BUILD, "hilsim"))
        self.assertTrue(owners, "could not map hilsim's NEEDED libraries to packages")
        missing = sorted(set(owners.values()) - names)
        self.assertEqual(missing, [], f"Depends: {depends}; NEEDED: {owners}")

    def test_maintainer_scripts(self):
        ctl = os.path.join(self.tmpdir.name, "control")
        self.assertEqual(run(["dpkg-deb", "-e", self.deb, ctl]).returncode, 0)
        postinst = os.path.join(ctl, "postinst")
        self.assertTrue(os.stat(postinst).st_mode & stat.S_IXUSR)
        with open(postinst) as f:
            text = f.read()
        self.assertIn("systemd-sysusers hilsim.conf", text)
        self.assertIn("systemd-tmpfiles --create hilsim.conf", text)
        self.assertNotIn("enable", re.sub(r"#.*", "", text), "the package must not enable benches")
        if HAVE_CLIENT:
            with open(os.path.join(ctl, "triggers")) as f:
                self.assertIn("activate-noawait ldconfig", f.read())
            with open(os.path.join(ctl, "shlibs")) as f:
                self.assertRegex(f.read(), r"libhilsim-client 0 hilsim")


def needed_packages(binary):
    """{soname: package} for the binary's direct NEEDED entries that dpkg knows."""
    dyn = run(["readelf", "-d", binary]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    paths = dict(re.findall(r"^\s*(\S+) => (\S+) \(", run(["ldd", binary]).stdout, re.M))
    owners = {}
    for soname in needed:
        path = paths.get(soname)
        if not path:
            continue
        real = os.path.realpath(path)
        for candidate in {path, real, "/usr" + path if path.startswith("/lib") else path,
                          real.replace("/usr/lib/", "/lib/", 1)}:
            r = run(["dpkg", "-S", candidate])
            if r.returncode == 0:
                owners[soname] = r.stdout.split(":")[0]
                break
    return owners


if __name__ == "__main__":
    unittest.main()
