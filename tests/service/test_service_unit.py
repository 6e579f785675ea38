"""The unit file and its drop-ins, checked offline with systemd-analyze (PID 1 need not be
systemd): verify, the security exposure score, and that the hardening still lets hilsim do what
it needs (real-time, locked memory, the shm segment, LTTng, the watchdog). Also the
hilsim-cpu-dropin script that writes the per-bench CPUAffinity drop-in."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

SRC = os.environ.get("HS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
HILSIM = os.environ.get("HILSIM", "")
UNIT = os.path.join(SRC, "systemd", "hilsim@.service")
NET_ADMIN = os.path.join(SRC, "systemd", "net-admin.conf")
CPU_DROPIN = os.path.join(SRC, "systemd", "hilsim-cpu-dropin")
ANALYZE = shutil.which("systemd-analyze")

# Exposure bound. Each remaining point in `systemd-analyze security` is a deliberate exception
# (systemd/README.md lists them): the host network namespace (CAN needs it), real-time
# scheduling, CAP_SYS_NICE/CAP_IPC_LOCK, /dev/cpu_dma_latency, AF_UNIX/AF_NETLINK/AF_CAN,
# no PrivateUsers (it would void the capabilities), group-writable files (shm clients).
# Those add up to about 1.7; 2.5 leaves room for systemd versions weighing them differently
# while still failing when a real protection (ProtectSystem, a capability, the syscall filter)
# goes missing, each of which costs 0.2 or more.
MAX_EXPOSURE = 2.5

# Syscalls hilsim itself needs under the unit's SystemCallFilter: RT set-up, the tick loop,
# the shm segment (fchown to its group), LTTng-UST (liburcu's membarrier), sd_notify.
NEEDED_SYSCALLS = ["sched_setscheduler", "sched_setaffinity", "sched_getaffinity",
                   "mlockall", "munlockall", "setrlimit", "getrlimit", "prlimit64",
                   "clock_nanosleep", "clock_gettime", "futex", "membarrier", "fchown",
                   "fchmod", "ftruncate", "mmap", "mlock", "openat", "socket", "sendmsg",
                   "recvmsg", "ioctl", "rt_sigtimedwait", "clone", "clone3", "prctl"]


def unit_lines(path):
    """(key, value) pairs of a unit file, in order, comments dropped."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", ";", "[")) and "=" in line:
                k, v = line.split("=", 1)
                out.append((k.strip(), v.strip()))
    return out


def values(path, key):
    return [v for k, v in unit_lines(path) if k == key]


def expand_group(name, cache={}):
    """Syscall names of a systemd syscall group, nested groups expanded."""
    if name in cache:
        return cache[name]
    txt = subprocess.run([ANALYZE, "syscall-filter", name], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in txt.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        names |= expand_group(item) if item.startswith("@") else {item}
    cache[name] = names
    return names


def expand(items):
    out = set()
    for item in items.split():
        out |= expand_group(item) if item.startswith("@") else {item}
    return out


def allowed_syscalls(lines):
    """systemd's rule: the first SystemCallFilter= line decides allow- or deny-list mode;
    later lines add (allow) or remove (~) names in order."""
    allowed = None
    for v in lines:
        deny = v.startswith("~")
        names = expand(v.lstrip("~"))
        if allowed is None:
            if deny:
                raise AssertionError("expected an allow list first")
            allowed = set(names)
        elif deny:
            allowed -= names
        else:
            allowed |= names
    return allowed


@unittest.skipUnless(ANALYZE, "systemd-analyze not installed")
@unittest.skipUnless(HILSIM, "HILSIM not set")
class Unit(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory(prefix="hs-unit-")
        self.dir = self.tmpdir.name
        with open(UNIT) as f:
            text = f.read()
        self.assertIn("ExecStart=/usr/bin/hilsim ", text)
        # /usr/bin/hilsim does not exist here and verify checks the binary: use the build's.
        self.text = text.replace("ExecStart=/usr/bin/hilsim ", f"ExecStart={HILSIM} ")
        self.write("hilsim@.service", self.text)
        self.instance = os.path.join(self.dir, "hilsim@test.service")

    def tearDown(self):
        self.tmpdir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def analyze(self, *args):
        env = dict(os.environ, SYSTEMD_UNIT_PATH=self.dir + ":", SYSTEMD_LOG_COLOR="0")
        return subprocess.run([ANALYZE, *args], capture_output=True, text=True, env=env,
                              cwd=self.dir)

    def verify(self):
        # The instance of the template, as `systemctl start hilsim@test` would load it.
        return self.analyze("verify", "hilsim@test.service")

    def security(self):
        r = self.analyze("security", "--offline=true", "--no-pager", "hilsim@test.service")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        m = re.search(r"Overall exposure level for hilsim@test\.service: (\d+\.\d+)", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        return float(m.group(1)), r.stdout

    def check_line(self, report, name):
        """The report's mark for one check: True for ✓ (protected), False for ✗."""
        for line in report.splitlines():
            if re.match(r"[✓✗] " + re.escape(name) + r"\s", line):
                return line.startswith("✓")
        self.fail(f"no '{name}' line in the security report")

    def assert_verify_clean(self):
        r = self.verify()
        ours = [l for l in (r.stdout + r.stderr).splitlines() if "hilsim" in l]
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(ours, [], "systemd-analyze verify warns about the unit")

    def test_verify(self):
        self.assert_verify_clean()

    def test_verify_catches_a_broken_unit(self):
        """The check above can fail: a misspelt key or a bad value is reported (systemd only
        warns about those, so the test reads the output), a missing binary fails verify."""
        for bad in (self.text.replace("Type=notify", "Type=bogus"),
                    self.text.replace("ProtectSystem=strict", "ProtectSystm=strict")):
            self.write("hilsim@.service", bad)
            r = self.verify()
            self.assertTrue([l for l in (r.stdout + r.stderr).splitlines() if "hilsim" in l])
        self.write("hilsim@.service", self.text.replace(HILSIM, "/nonexistent/hilsim"))
        self.assertNotEqual(self.verify().returncode, 0)

    def test_security_exposure(self):
        score, report = self.security()
        print(f"systemd-analyze security --offline=true hilsim@test.service: exposure {score}")
        self.assertLessEqual(score, MAX_EXPOSURE, report)
        # The default unit must not carry CAP_NET_ADMIN; it keeps only what RT needs.
        self.assertTrue(self.check_line(report, "CapabilityBoundingSet=~CAP_NET_ADMIN"))
        self.assertFalse(self.check_line(report, "CapabilityBoundingSet=~CAP_SYS_(NICE|RESOURCE)"))
        self.assertFalse(self.check_line(report, "CapabilityBoundingSet=~CAP_IPC_LOCK"))
        self.assertTrue(self.check_line(report, "CapabilityBoundingSet=~CAP_SYS_ADMIN"))
        self.assertTrue(self.check_line(report, "RestrictAddressFamilies=~AF_(INET|INET6)"))

    def test_net_admin_dropin_adds_only_net_admin(self):
        with open(NET_ADMIN) as f:
            self.write("hilsim@test.service.d/net-admin.conf", f.read())
        self.assert_verify_clean()
        score, report = self.security()
        print(f"with net-admin.conf: exposure {score}")
        self.assertFalse(self.check_line(report, "CapabilityBoundingSet=~CAP_NET_ADMIN"))
        # Merged, not replaced: the RT capabilities are still there.
        self.assertFalse(self.check_line(report, "CapabilityBoundingSet=~CAP_SYS_(NICE|RESOURCE)"))
        self.assertFalse(self.check_line(report, "CapabilityBoundingSet=~CAP_IPC_LOCK"))
        self.assertTrue(self.check_line(report, "CapabilityBoundingSet=~CAP_SYS_ADMIN"))
        self.assertLessEqual(score, MAX_EXPOSURE, report)

    def test_cpu_dropin_verifies(self):
        cfg = self.write("bench1.yaml", rt_cpu_config(1))
        r = run_dropin(cfg, "0-3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.write("hilsim@test.service.d/cpu.conf", r.stdout)
        self.assert_verify_clean()

    def test_execstart_is_a_valid_hilsim_command_line(self):
        """The unit's ExecStart, with the bench's config in place of /etc/hilsim/%i.yaml, is
        accepted by hilsim (run briefly, without real-time privileges)."""
        (cmd,) = values(UNIT, "ExecStart")
        argv = cmd.split()
        self.assertEqual(argv[:3], ["/usr/bin/hilsim", "run", "/etc/hilsim/%i.yaml"])
        cfg = self.write("bench1.yaml", rt_cpu_config(-1))
        argv = [HILSIM, "run", cfg, *argv[3:], "--duration", "0.3", "--no-rt"]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                           env={k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("stopped: ", r.stdout)

    def test_hardening_keeps_what_hilsim_needs(self):
        u = UNIT
        self.assertEqual(values(u, "Type"), ["notify"])
        self.assertEqual(values(u, "NotifyAccess"), ["main"])
        self.assertTrue(values(u, "WatchdogSec"))
        self.assertEqual(values(u, "RestrictRealtime"), ["no"])
        self.assertEqual(values(u, "LimitMEMLOCK"), ["infinity"])
        self.assertEqual(values(u, "LimitRTPRIO"), ["99"])
        for key in ("AmbientCapabilities", "CapabilityBoundingSet"):
            caps = set(" ".join(values(u, key)).split())
            self.assertEqual(caps, {"CAP_SYS_NICE", "CAP_IPC_LOCK"}, key)
        families = " ".join(values(u, "RestrictAddressFamilies")).split()
        for fam in ("AF_UNIX", "AF_CAN", "AF_NETLINK"):  # sd_notify + LTTng, buses, libsocketcan
            self.assertIn(fam, families)
        # /dev/shm: the segment and LTTng's buffers. PrivateDevices would hide
        # /dev/cpu_dma_latency; nothing may make /dev/shm read-only or inaccessible.
        self.assertNotIn("yes", values(u, "PrivateDevices"))
        for key in ("ReadOnlyPaths", "InaccessiblePaths", "TemporaryFileSystem"):
            self.assertFalse([v for v in values(u, key) if "/dev" in v], key)
        self.assertIn("/dev/cpu_dma_latency rw", values(u, "DeviceAllow"))
        # Group access to the segment: files are created group-readable/writable.
        self.assertEqual(values(u, "UMask"), ["0007"])
        allowed = allowed_syscalls(values(u, "SystemCallFilter"))
        missing = [s for s in NEEDED_SYSCALLS if s not in allowed]
        self.assertEqual(missing, [], "SystemCallFilter refuses syscalls hilsim needs")
        for s in ("mount", "reboot", "ptrace", "init_module", "settimeofday", "setuid"):
            self.assertNotIn(s, allowed)


def rt_cpu_config(cpu):
    """config/arm2-demo.yaml with absolute model paths and rt.cpu set."""
    demo = os.path.join(SRC, "config", "arm2-demo.yaml")
    with open(demo) as f:
        text = f.read()
    text = text.replace("file: ../models/", "file: " + os.path.join(SRC, "models") + "/")
    assert "  priority: 80\n" in text
    return text.replace("  priority: 80\n", f"  priority: 80\n  cpu: {cpu}\n")


def run_dropin(cfg, online=None, *extra):
    argv = ["/bin/sh", CPU_DROPIN, "--hilsim", HILSIM, *extra, cfg]
    if online is not None:
        argv[4:4] = ["--online", online]
    return subprocess.run(argv, capture_output=True, text=True)


@unittest.skipUnless(HILSIM, "HILSIM not set")
class CpuDropin(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory(prefix="hs-cpu-")

    def tearDown(self):
        self.tmpdir.cleanup()

    def config(self, cpu):
        path = os.path.join(self.tmpdir.name, f"bench-cpu{cpu}.yaml")
        with open(path, "w") as f:
            f.write(rt_cpu_config(cpu))
        return path

    def affinity(self, out):
        lines = [l for l in out.splitlines() if l.startswith("CPUAffinity=")]
        # An empty assignment first resets any CPUAffinity= from other drop-ins.
        self.assertEqual(lines[0], "CPUAffinity=", out)
        self.assertEqual(len(lines), 2, out)
        self.assertIn("[Service]", out)
        return lines[1].split("=", 1)[1]

    def test_other_cpus(self):
        cases = [(3, "0-7", "0-2 4-7"), (0, "0-3", "1-3"), (3, "0-3", "0-2"),
                 (2, "0-2,4,6-7", "0-1 4 6-7"), (1, "0-1", "0")]
        for cpu, online, want in cases:
            r = run_dropin(self.config(cpu), online)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.affinity(r.stdout), want, (cpu, online))
            self.assertIn(f"rt.cpu: {cpu}", r.stdout)

    def test_no_pinning_prints_nothing(self):
        r = run_dropin(os.path.join(SRC, "config", "arm2-demo.yaml"), "0-3")
        self.assertEqual((r.returncode, r.stdout), (0, ""))
        self.assertIn("rt.cpu is -1", r.stderr)

    def test_refusals(self):
        r = run_dropin(self.config(5), "0-3")
        self.assertEqual(r.returncode, 1)
        self.assertIn("rt.cpu 5 is not online", r.stderr)
        r = run_dropin(self.config(0), "0")
        self.assertEqual(r.returncode, 1)
        self.assertIn("only online CPU", r.stderr)
        r = run_dropin(self.config(0), "zero")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")

    def test_bad_config_is_hilsims_error(self):
        path = os.path.join(self.tmpdir.name, "bad.yaml")
        with open(path, "w") as f:
            f.write(rt_cpu_config(1).replace("period_ns: 1000000", "period_ns: 5"))
        r = run_dropin(path, "0-3")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertRegex(r.stderr, r"bad\.yaml:\d+:\d+: rt\.period_ns")

    def test_reads_this_machines_cpus(self):
        with open("/sys/devices/system/cpu/online") as f:
            online = f.read().strip()
        r = run_dropin(self.config(0))
        if online == "0":
            self.assertEqual(r.returncode, 1)
        else:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"online CPUs: {online}", r.stdout)

    @unittest.skipUnless(len(os.sched_getaffinity(0)) >= 2, "needs two usable CPUs")
    def test_tick_thread_leaves_the_inherited_mask(self):
        """The drop-in's premise: started on the other CPUs only (what CPUAffinity= does), the
        tick thread can still pin itself to rt.cpu."""
        cpus = sorted(os.sched_getaffinity(0))
        rt_cpu, others = cpus[-1], set(cpus[:-1])
        r = subprocess.run([HILSIM, "run", self.config(rt_cpu), "--no-rt", "--duration", "0.3"],
                           capture_output=True, text=True, timeout=120,
                           preexec_fn=lambda: os.sched_setaffinity(0, others))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"(?m)^\s*CPU affinity\s+granted", r.stdout)

    @unittest.skipUnless(shutil.which("shellcheck"), "shellcheck not installed")
    def test_shellcheck(self):
        r = subprocess.run(["shellcheck", CPU_DROPIN], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)


if __name__ == "__main__":
    unittest.main()
