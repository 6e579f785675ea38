#!/usr/bin/env python3
"""End to end: `hilsim run --clock lockstep` over shared memory, with real clients.

  identical     the biped (config/biped-shm.yaml) held by examples/lockstep_controller in
                lockstep: every tick answered exactly once, and the per-tick state log is
                byte-identical across two runs, and a third while stress-ng --cpu 2 loads the
                machine (skipped, and said so, when stress-ng is not installed)
  hold          no client: the bench holds tick 1 and warns at every timeout; a Python client
                attaching later gets the pending tick first, answers every tick with step() and
                the run ends normally
  tick clock    the controller writes every 40th tick but steps every tick: the 20 ms command
                timeout runs out after exactly 21 ticks, however fast it answers (with wall-clock
                timeouts the fast controller's commands would never go stale)
  step          no client, on_timeout step: every tick runs after one expired wait, the
                summary counts them exactly
  stop          no client, on_timeout stop: exit 1 after tick 0, the reason in the log
  sigterm       a hold ends on SIGTERM with the usual clean exit
  refused       a mistyped --clock, and lockstep without shm (nothing to release the ticks):
                both exit 2 with one clear line; --clock sync with no event source runs free

No timing is asserted: lockstep makes every count a function of the ticks, not of the machine.
Environment (set by ctest): HS_HILSIM, HILSIM_CLIENT_LIB, HS_LOCKSTEP_CONTROLLER, HS_SOURCE_DIR.
"""

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SRC = os.environ.get("HS_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_client as hc  # noqa: E402

HILSIM = os.environ.get("HS_HILSIM")
CONTROLLER = os.environ.get("HS_LOCKSTEP_CONTROLLER")
WALL_TIMEOUT_S = 300  # only against hangs; generous for a loaded machine


def bench_config(tmp, base, name, clock):
    """A copy of config/<base>.yaml named `name`, models resolved, rt.clock set to `clock`."""
    with open(os.path.join(SRC, "config", base + ".yaml")) as f:
        text = f.read()
    text = re.sub(r"(?m)^  name: %s$" % re.escape(base), "  name: " + name, text, count=1)
    text = text.replace("file: ../models/", "file: %s/models/" % SRC)
    if "\nrt:\n" not in text:
        raise RuntimeError("config/%s.yaml changed: no rt section to add the clock to" % base)
    text = text.replace("\nrt:\n", "\nrt:\n  clock: %s\n" % clock, 1)
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


class Run:
    def __init__(self, tmp, config, args):
        self.out_path = config + ".out"
        self.err_path = config + ".err"
        self.out = open(self.out_path, "w")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen([HILSIM, "run", config, "--no-rt"] + args, stdout=self.out,
                                     stderr=self.err)

    def wait(self, timeout=WALL_TIMEOUT_S):
        rc = self.proc.wait(timeout=timeout)
        self.out.close()
        self.err.close()
        return rc

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            self.out.close()
            self.err.close()


def expired_waits(summary):
    m = re.search(r"^clock lockstep: .* (\d+) waits? expired \(on_timeout (\w+)\)$", summary,
                  re.M)
    if not m:
        raise AssertionError("no lockstep clock line in the summary:\n" + summary)
    return int(m.group(1)), m.group(2)


@unittest.skipUnless(HILSIM and CONTROLLER, "HS_HILSIM and HS_LOCKSTEP_CONTROLLER not set")
class Lockstep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hs-lockstep-")
        self.runs = []
        self.stress = None

    def tearDown(self):
        for r in self.runs:
            r.kill()
        if self.stress and self.stress.poll() is None:
            self.stress.terminate()
            self.stress.wait()
        for f in os.listdir("/dev/shm"):
            if f.startswith("hilsim-ls%d-" % os.getpid()):
                os.unlink(os.path.join("/dev/shm", f))
        shutil.rmtree(self.tmp, ignore_errors=True)

    def name(self, tag):
        return "ls%d-%s" % (os.getpid(), tag)

    def start(self, config, *args):
        r = Run(self.tmp, config, list(args))
        self.runs.append(r)
        return r

    def biped_run(self, tag, ticks, *extra):
        """One lockstep run of the biped with the example controller; returns its log bytes."""
        name = self.name(tag)
        cfg = bench_config(self.tmp, "biped-shm", name,
                           "{mode: lockstep, lockstep_timeout_s: 60, on_timeout: stop}")
        run = self.start(cfg, "--duration", "%.3f" % (ticks / 1000.0))
        log = os.path.join(self.tmp, tag + ".log")
        ctl = subprocess.run([CONTROLLER, name, "--gains",
                              os.path.join(SRC, "config", "biped-shm.gains"), "--ticks",
                              str(ticks), "--log", log, "--timeout", "60"] + list(extra),
                             capture_output=True, text=True, timeout=WALL_TIMEOUT_S)
        rc = run.wait()
        self.assertEqual(ctl.returncode, 0, ctl.stdout + ctl.stderr)
        self.assertIn("result: ticks %d missed 0 out_of_order 0 " % ticks, ctl.stdout)
        self.assertEqual(rc, 0, run.stderr())
        out = run.stdout()
        self.assertIn("stopped: max ticks reached; ticks %d," % ticks, out)
        self.assertEqual(expired_waits(out), (0, "stop"))
        # Every joint was commanded by the controller on every tick after the first.
        self.assertIn(" 0 clients lost", run.stderr())
        with open(log, "rb") as f:
            data = f.read()
        lines = data.decode().splitlines()
        self.assertEqual([int(l.split()[0]) for l in lines], list(range(1, ticks + 1)))
        # Not a frozen state: the robot settles under its PD and the IMU and F/T readings carry
        # seeded noise, so (nearly) every tick's state differs from every other.
        self.assertGreater(len({l.split(None, 2)[2] for l in lines}), ticks * 9 // 10)
        return data

    def test_identical(self):
        ticks = 2000
        first = self.biped_run("a", ticks)
        second = self.biped_run("b", ticks)
        self.assertEqual(first, second, "two lockstep runs of the biped differ")
        if not shutil.which("stress-ng"):
            self.skipTest("stress-ng not installed (scripts/setup.sh): the loaded run is skipped")
        self.stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--timeout", "600", "--quiet"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # let the load start before the run does
        self.assertIsNone(self.stress.poll(), "stress-ng did not start")
        loaded = self.biped_run("c", ticks)
        self.assertEqual(first, loaded, "the lockstep run under stress-ng differs")

    def test_timeouts_on_tick_clock(self):
        """The controller writes every 40th tick only but answers every tick (an explicit step):
        the server's 20 ms command timeout runs out after exactly 21 ticks of simulated time,
        however fast the controller answers in wall time."""
        ticks, every, timeout_ticks, joints = 400, 40, 20, 17
        data = self.biped_run("t", ticks, "--write-every", str(every))
        stale = [int(l.split()[3]) for l in data.decode().splitlines()]
        expected = []
        for t in range(1, ticks + 1):
            # A command written after reading tick w is consumed by the tick published as w + 1.
            arrived = [w + 1 for w in range(1, t, every)]
            expected.append(joints if not arrived or t - arrived[-1] > timeout_ticks else 0)
        self.assertEqual(stale, expected)
        self.assertEqual(data, self.biped_run("t2", ticks, "--write-every", str(every)))

    def test_hold(self):
        name = self.name("hold")
        cfg = bench_config(self.tmp, "arm2-shm", name,
                           "{mode: lockstep, lockstep_timeout_s: 0.05, on_timeout: hold}")
        run = self.start(cfg, "--duration", "0.5")
        # Wait (by the log, not the clock) until the bench has held tick 1 twice.
        deadline = time.monotonic() + WALL_TIMEOUT_S
        while run.stderr().count("no release from the controller") < 2:
            self.assertIsNone(run.proc.poll(), run.stderr())
            self.assertLess(time.monotonic(), deadline, "the bench never held")
            time.sleep(0.05)
        with hc.Client(name) as c:
            self.assertTrue(c.lockstep)
            c.claim()
            seen = []
            while True:
                try:
                    tick, missed = c.wait_tick(timeout_s=30)
                    st = c.read_state()
                except hc.HilsimError as e:
                    self.assertEqual(e.errno, errno.ESHUTDOWN)
                    break  # the server stopped after its last tick
                self.assertEqual(missed, 0)
                if st.tick > 500:
                    break  # the safe stop's state, after the run
                seen.append(tick)
                c.write_commands([dict(mode=hc.MODE_POSITION_PD, q=0.1, kp=300.0, kd=20.0),
                                  dict(mode=hc.MODE_POSITION_PD, q=0.1, kp=120.0, kd=8.0)])
                c.step()
        self.assertEqual(run.wait(), 0, run.stderr())
        # The pending tick 1 first, then every tick once.
        self.assertEqual(seen, list(range(1, 501)))
        n, what = expired_waits(run.stdout())
        self.assertGreaterEqual(n, 2)
        self.assertEqual(what, "hold")
        self.assertIn("stopped: max ticks reached; ticks 500,", run.stdout())

    def test_step(self):
        name = self.name("step")
        cfg = bench_config(self.tmp, "arm2-shm", name,
                           "{mode: lockstep, lockstep_timeout_s: 0.01, on_timeout: step}")
        run = self.start(cfg, "--duration", "0.05")
        self.assertEqual(run.wait(), 0, run.stderr())
        out = run.stdout()
        self.assertIn("stopped: max ticks reached; ticks 50,", out)
        # Ticks 1..49 each waited out one timeout, and so did the last tick's answer.
        self.assertEqual(expired_waits(out), (50, "step"))
        self.assertEqual(run.stderr().count("no release from the controller"), 50)
        self.assertIn("clock lockstep: 0.050 s simulated", out)

    def test_stop(self):
        name = self.name("stop")
        cfg = bench_config(self.tmp, "arm2-shm", name,
                           "{mode: lockstep, lockstep_timeout_s: 0.02, on_timeout: stop}")
        run = self.start(cfg, "--duration", "10")
        self.assertEqual(run.wait(), 1, run.stderr())
        self.assertIn("loop stopped: lockstep wait expired (on_timeout stop)", run.stderr())
        self.assertIn("ticks 1,", run.stdout())
        self.assertEqual(expired_waits(run.stdout()), (1, "stop"))
        self.assertFalse(os.path.exists("/dev/shm/hilsim-" + name))

    def test_sigterm(self):
        name = self.name("term")
        cfg = bench_config(self.tmp, "arm2-shm", name,
                           "{mode: lockstep, lockstep_timeout_s: 3600, on_timeout: hold}")
        run = self.start(cfg)
        deadline = time.monotonic() + WALL_TIMEOUT_S
        while "running bench" not in run.stderr():
            self.assertIsNone(run.proc.poll(), run.stderr())
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        run.proc.send_signal(signal.SIGTERM)
        self.assertEqual(run.wait(), 0, run.stderr())
        self.assertIn("stopped: stop requested; ticks 1,", run.stdout())

    def test_refused(self):
        name = self.name("sync")
        cfg = bench_config(self.tmp, "arm2-shm", name, "{mode: wall}")
        # sync without an event source runs free on the wall clock (tests/canio covers the lock).
        r = subprocess.run([HILSIM, "run", cfg, "--no-rt", "--clock", "sync", "--duration", "0.2"],
                           capture_output=True, text=True, timeout=WALL_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([HILSIM, "run", cfg, "--no-rt", "--clock", "lock"],
                           capture_output=True, text=True, timeout=WALL_TIMEOUT_S)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--clock: 'lock' is not wall, lockstep or sync", r.stderr)
        stand = bench_config(self.tmp, "biped-stand", self.name("stand"), "{mode: lockstep}")
        r = subprocess.run([HILSIM, "run", stand, "--no-rt", "--duration", "0.1"],
                           capture_output=True, text=True, timeout=WALL_TIMEOUT_S)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("nothing can release the ticks", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
