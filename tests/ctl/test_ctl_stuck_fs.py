"""A live scenario's verdict files on a file system that stops answering (issue 25): a real
ext4 image, loop-mounted and frozen with fsfreeze(8) once the scenario started, so the bench's
write of the verdict waits in the kernel (uninterruptibly: no signal ends that thread). The
control socket still answers `status`; SIGTERM still stops the run, prints the summary, removes
the shm segment and the socket, and says the worker was left writing (after
HS_CTL_WORKER_STOP_MS, 2 s); once the file system is thawed the process ends with exit 0.
Needs root (mount, fsfreeze); skipped otherwise. Judged on events, with margins for a loaded
host."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
LIMIT_S = 60

SCENARIO = """scenario: {name: stuck-fs, duration_s: 2}
steps:
  - {name: still_there, at_s: 0.1, expect: {kind: joint_near, joint: ELBOW, value: 0.6,
     tolerance: 3}}
"""


def status(sock):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.settimeout(5)
            c.connect(sock)
            c.sendall(b"status\n")
            return c.makefile("rb").readline().decode()
    except OSError:
        return ""


def until(what, limit_s=LIMIT_S):
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if what():
            return True
        time.sleep(0.1)
    return False


def blocked_threads(pid):
    """Threads of PID waiting uninterruptibly (state D)."""
    n = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                n += f.read().rsplit(")", 1)[1].split()[0] == "D"
    except OSError:
        pass
    return n


def blocked_names(pid):
    """Names of PID's threads waiting uninterruptibly (state D)."""
    names = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
            if stat.rsplit(")", 1)[1].split()[0] == "D":
                names.append(stat[stat.index("(") + 1:stat.rindex(")")])
    except OSError:
        pass
    return names


class StuckFileSystem(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0 or not shutil.which("fsfreeze") or not shutil.which("mkfs.ext4"):
            self.skipTest("needs root, fsfreeze and mkfs.ext4")
        self.tmp = tempfile.TemporaryDirectory()
        self.mnt = os.path.join(self.tmp.name, "mnt")
        os.mkdir(self.mnt)
        img = os.path.join(self.tmp.name, "fs.img")
        subprocess.run(["truncate", "-s", "8M", img], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", img], check=True)
        if subprocess.run(["mount", "-o", "loop", img, self.mnt]).returncode != 0:
            self.tmp.cleanup()
            self.skipTest("cannot loop-mount an image here")
        self.frozen = False
        self.proc = None

    def tearDown(self):
        if self.frozen:
            subprocess.run(["fsfreeze", "-u", self.mnt])
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        subprocess.run(["umount", self.mnt])
        self.tmp.cleanup()

    def test_sigterm_with_the_verdict_write_stuck(self):
        tmp, name = self.tmp.name, "stuckfs%d" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        cfg_path = os.path.join(tmp, "bench.yaml")
        with open(cfg_path, "w") as f:
            f.write(cfg.replace("name: arm2-shm", "name: " + name, 1))
        scen = os.path.join(tmp, "scen.yaml")
        with open(scen, "w") as f:
            f.write(SCENARIO)
        junit, js = os.path.join(self.mnt, "v.xml"), os.path.join(self.mnt, "v.json")
        env = dict(os.environ, HILSIM_CTL_DIR=tmp)
        log = open(os.path.join(tmp, "bench.log"), "w+")
        self.addCleanup(log.close)
        self.proc = subprocess.Popen([HILSIM, "run", cfg_path, "--no-rt"], stdout=log,
                                     stderr=subprocess.STDOUT, env=env)
        sock = os.path.join(tmp, "hilsim-%s.ctl" % name)
        self.assertTrue(until(lambda: "loop running" in status(sock)))
        p = subprocess.run([HILSIM, "ctl", name, "scenario", "start", scen, "--junit", junit,
                            "--result-json", js], capture_output=True, text=True, env=env,
                           timeout=LIMIT_S)
        self.assertEqual(p.returncode, 0, p.stderr)
        subprocess.run(["fsfreeze", "-f", self.mnt], check=True)
        self.frozen = True
        # the scenario ends (2 s of ticks) and the worker's verdict write waits on the disk
        self.assertTrue(until(lambda: blocked_threads(self.proc.pid) > 0),
                        "no bench thread waits on the frozen file system")
        self.assertIn("ok bench", status(sock))  # the socket thread does not wait with it
        self.proc.send_signal(signal.SIGTERM)

        def said(text):
            log.seek(0)
            return text in log.read()
        self.assertTrue(until(lambda: said("the control worker is still writing")),
                        "the stop waited for the stuck write")
        self.assertTrue(until(lambda: said("stopped: ")))
        self.assertTrue(until(lambda: not os.path.exists("/dev/shm/hilsim-" + name)),
                        "the shm segment was not removed")
        self.assertFalse(os.path.exists(sock))
        subprocess.run(["fsfreeze", "-u", self.mnt], check=True)
        self.frozen = False
        rc = self.proc.wait(LIMIT_S)
        log.seek(0)
        self.assertEqual(rc, 0, log.read()[-3000:])

    def test_sigterm_with_the_recording_stuck(self):
        # The recording's folder on the file system that stops: the writer thread and the
        # worker's copy of a live push (kept for replay) both wait on it. SIGTERM still stops
        # the run (summary, segment removed); once thawed the recording is finished with the
        # push's copy in it, and the process ends with exit 0.
        tmp, name = self.tmp.name, "stuckrec%d" % os.getpid()
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        cfg_path = os.path.join(tmp, "bench.yaml")
        with open(cfg_path, "w") as f:
            f.write(cfg.replace("name: arm2-shm", "name: " + name, 1))
        rec = os.path.join(self.mnt, "rec")
        env = dict(os.environ, HILSIM_CTL_DIR=tmp)
        log = open(os.path.join(tmp, "bench.log"), "w+")
        self.addCleanup(log.close)
        self.proc = subprocess.Popen([HILSIM, "run", cfg_path, "--no-rt", "--record", rec],
                                     stdout=log, stderr=subprocess.STDOUT, env=env)
        sock = os.path.join(tmp, "hilsim-%s.ctl" % name)
        self.assertTrue(until(lambda: "loop running" in status(sock)))
        subprocess.run(["fsfreeze", "-f", self.mnt], check=True)
        self.frozen = True
        push = subprocess.Popen([HILSIM, "ctl", name, "push", "ELBOW", "0", "0", "1", "0.01"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
        self.assertTrue(until(lambda: {"hs-ctl-work", "hs-rec-writer"} <= set(
            blocked_names(self.proc.pid))), "the worker and the writer do not both wait on "
            "the frozen disk: %s" % blocked_names(self.proc.pid))
        self.assertIn("ok bench", status(sock))
        self.proc.send_signal(signal.SIGTERM)

        def said(text):
            log.seek(0)
            return text in log.read()
        self.assertTrue(until(lambda: said("stopped: ")), "SIGTERM did not stop the loop")
        subprocess.run(["fsfreeze", "-u", self.mnt], check=True)
        self.frozen = False
        rc = self.proc.wait(LIMIT_S)
        out, err = push.communicate(timeout=LIMIT_S)
        log.seek(0)
        text = log.read()
        self.assertEqual(rc, 0, text[-3000:])
        self.assertTrue(os.path.exists(os.path.join(rec, "live-step-1.yaml")), text[-3000:])
        self.assertIn("recording: %s" % rec, text)
        self.assertTrue(out.startswith("ok step queued") or "the run stopped" in err,
                        (out, err))


if __name__ == "__main__":
    unittest.main()
