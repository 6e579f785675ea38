"""`hilsim run` blocks SIGINT/SIGTERM from its first line to the supervisor (so a stop during
start-up is taken at a tick boundary and cleaned up): no call in between may wait on what a
local user can plant (issue 25). Each case puts something that waits where a file or socket is
expected and checks the run ends by itself, promptly, with the right exit status, or, where
it goes on, that SIGTERM ends it with 0:
  a FIFO as the config, the scenario, a scenario's path CSV -> refused, exit 2
  a FIFO at /dev/shm/hilsim-BENCH -> refused, exit 1
  a listener with a full backlog at the control socket's path -> the run goes on without live
    control (a blocking connect waited there for good before); SIGTERM -> exit 0
  the --junit file swapped for a FIFO during the run -> SIGTERM -> the verdict is refused,
    not waited on, exit 1
(The output being a full pipe: test_run_stuck_output.py.) Judged on events (the process
ending, log lines), with margins far above the bounds, so a loaded host passes."""
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
LIMIT_S = 60


class StartupWaits(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.name = "startwait%d" % os.getpid()
        self.env = dict(os.environ, HILSIM_CTL_DIR=self.tmp.name)
        self.fifo = self.path("fifo")
        os.mkfifo(self.fifo)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def config(self):
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            text = f.read().replace("../models/", os.path.join(SRC, "models") + "/")
        p = self.path("bench.yaml")
        with open(p, "w") as f:
            f.write(text.replace("name: arm2-shm", "name: " + self.name, 1))
        return p

    def start(self, *args):
        self.log = open(self.path("run.log"), "w+")
        self.addCleanup(self.log.close)
        p = subprocess.Popen([HILSIM, "run", *args, "--no-rt"], stdout=self.log,
                             stderr=subprocess.STDOUT, env=self.env)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def ends(self, p, rc, why):
        try:
            got = p.wait(LIMIT_S)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)  # stuck: does SIGTERM at least end it?
            try:
                p.wait(10)
                self.fail("%s: stuck until SIGTERM" % why)
            except subprocess.TimeoutExpired:
                self.fail("%s: stuck, and SIGTERM did not end it" % why)
        self.assertEqual(got, rc, self.text()[-2000:])

    def until_said(self, text):
        end = time.monotonic() + LIMIT_S
        while time.monotonic() < end:
            if text in self.text():
                return True
            time.sleep(0.1)
        return False

    def test_config_fifo(self):
        p = self.start(self.fifo)
        self.ends(p, 2, "config a FIFO")
        self.assertIn("not a regular file", self.text())

    def test_scenario_fifo(self):
        p = self.start(self.config(), "--scenario", self.fifo)
        self.ends(p, 2, "scenario a FIFO")
        self.assertIn("not a regular file", self.text())

    def test_path_csv_fifo(self):
        scen = self.path("path.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: path, duration_s: 0.5}\nsteps:\n"
                    "  - {at_s: 0, duration_s: 0.01, path: {file: %s}}\n" % self.fifo)
        p = self.start(self.config(), "--scenario", scen)
        self.ends(p, 2, "path CSV a FIFO")
        self.assertIn("not a regular file", self.text())

    def test_shm_name_fifo(self):
        shm = "/dev/shm/hilsim-" + self.name
        os.mkfifo(shm)
        self.addCleanup(os.unlink, shm)
        p = self.start(self.config())
        self.ends(p, 1, "a FIFO at the shm name")
        self.assertIn("not a regular file", self.text())

    def test_control_socket_with_a_full_backlog(self):
        where = self.path("hilsim-%s.ctl" % self.name)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(srv.close)
        srv.bind(where)
        srv.listen(0)
        fill = []
        for _ in range(8):  # never accepted: the backlog fills, a blocking connect would wait
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            try:
                c.connect(where)
            except OSError:
                pass
            fill.append(c)
            self.addCleanup(c.close)
        p = self.start(self.config())
        self.assertTrue(self.until_said("no live control for this run"), self.text()[-2000:])
        self.assertTrue(self.until_said("running bench"), self.text()[-2000:])
        p.send_signal(signal.SIGTERM)
        self.ends(p, 0, "a full backlog at the control socket's path")

    def test_junit_swapped_for_a_fifo(self):
        junit = self.path("v.xml")
        p = self.start(self.config(), "--scenario",
                       os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml"), "--junit", junit,
                       "--duration", "600")
        self.assertTrue(self.until_said("running bench"), self.text()[-2000:])
        os.unlink(junit)
        os.mkfifo(junit)
        p.send_signal(signal.SIGTERM)
        self.ends(p, 1, "the --junit file a FIFO at the end")
        self.assertIn("verdict: ERROR", self.text())  # the summary is there
        self.assertIn(junit + ": No such device or address", self.text())  # refused, not waited on


if __name__ == "__main__":
    unittest.main()
