"""`hilsim run` whose output nobody reads (issue 25): its standard output and error a pipe
that is already full (a paused pager, a collector that stopped). The bench must still start,
serve its control socket, stop on SIGTERM and end within its documented bounds (a log line
waits at most 1 s for room, then later lines are dropped without waiting; the end-of-run
summary waits at most 5 s in all) with exit status 0. Before, the supervisor thread, the only
one taking SIGTERM, sat in write(2) for good and only SIGKILL ended the process. Judged on
events (the control socket answering, the process ending), with margins far above the bounds
so a loaded host passes."""
import fcntl
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
F_SETPIPE_SZ = 1031
END_WITHIN_S = 60  # the bounds add up to about 6 s; the margin is for a loaded host


def config(tmp, name):
    path = os.path.join(tmp, name + ".yaml")
    with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
        text = f.read().replace("../models/", os.path.join(SRC, "models") + "/")
    with open(path, "w") as f:
        f.write(text.replace("name: arm2-shm", "name: " + name, 1))
    return path


def full_pipe():
    """A pipe whose write end takes no more bytes: its reader never reads."""
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    fl = fcntl.fcntl(w, fcntl.F_GETFL)
    fcntl.fcntl(w, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    try:
        while True:
            os.write(w, b"x" * 512)
    except BlockingIOError:
        pass
    fcntl.fcntl(w, fcntl.F_SETFL, fl)  # the bench gets it blocking, as a shell gives it
    return r, w


def status(sock):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.settimeout(5)
            c.connect(sock)
            c.sendall(b"status\n")
            return c.makefile("rb").readline().decode()
    except OSError:
        return ""


def wait_running(proc, sock, limit_s=120):
    end = time.monotonic() + limit_s
    while time.monotonic() < end and proc.poll() is None:
        if "loop running" in status(sock):
            return True
        time.sleep(0.1)
    return False


class StuckOutput(unittest.TestCase):
    def run_stuck(self, extra_args=()):
        with tempfile.TemporaryDirectory() as tmp:
            name = "stuck-out-%d" % os.getpid()
            r, w = full_pipe()
            env = dict(os.environ, HILSIM_CTL_DIR=tmp)
            proc = subprocess.Popen([HILSIM, "run", config(tmp, name), "--no-rt", *extra_args],
                                    stdout=w, stderr=w, env=env)
            os.close(w)
            try:
                sock = os.path.join(tmp, "hilsim-%s.ctl" % name)
                self.assertTrue(wait_running(proc, sock),
                                "the bench did not come up with its output stuck")
                t0 = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                try:
                    rc = proc.wait(timeout=END_WITHIN_S)
                except subprocess.TimeoutExpired:
                    self.fail("SIGTERM did not end a bench whose output is not read "
                              "(still running after %d s)" % END_WITHIN_S)
                took = time.monotonic() - t0
                self.assertEqual(rc, 0)
                # what did get out is whole lines after the filler
                os.set_blocking(r, False)
                data = b""
                try:
                    while True:
                        chunk = os.read(r, 65536)
                        if not chunk:
                            break
                        data += chunk
                except BlockingIOError:
                    pass
                return took, data
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                os.close(r)

    def test_sigterm_ends_a_bench_whose_output_is_full(self):
        took, data = self.run_stuck()
        print("ended %.2f s after SIGTERM; %d bytes in the pipe" % (took, len(data)))
        self.assertTrue(data.startswith(b"x" * 4096))


if __name__ == "__main__":
    unittest.main()
