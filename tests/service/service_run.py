"""Runs `hilsim run` the way systemd supervises it: a unix datagram socket stands in for
NOTIFY_SOCKET, WATCHDOG_USEC/WATCHDOG_PID are set, signals are sent to the main PID and stderr
is what the journal would get. Shared by the service tests (Python 3 stdlib only)."""
import os
import re
import signal
import socket
import subprocess
import threading
import time

HILSIM = os.environ.get("HILSIM", "")
SRC = os.environ.get("HS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(SRC, "config", "arm2-demo.yaml")

# READY=1 comes after model build and warm-up; ASan builds on a busy 2-core machine are slow.
READY_TIMEOUT_S = 60.0


def bench_config(tmp, edit=None):
    """config/arm2-demo.yaml in tmp with absolute model paths, a 2 ms period (the shared machine
    keeps up) and overrun handling that a noisy machine cannot trip."""
    cfg_dir = os.path.dirname(os.path.abspath(DEMO))
    with open(DEMO) as f:
        text = f.read()

    def absolute(m):
        path = m.group(2)
        return m.group(1) + (path if os.path.isabs(path) else os.path.join(cfg_dir, path))

    text = re.sub(r"^(\s*file:\s*)(\S+)\s*$", absolute, text, flags=re.M)
    for old, new in (("period_ns: 1000000", "period_ns: 2000000"),
                     ("step_s: 0.001", "step_s: 0.002"),
                     ("warmup_ticks: 200", "warmup_ticks: 200\n  histogram_max_us: 100000\n"
                      "  overrun_leaky: {threshold: 1000000000}")):
        if old not in text:
            raise AssertionError(f"{DEMO} no longer has '{old}': update bench_config()")
        text = text.replace(old, new)
    if edit:
        text = edit(text)
    # a name of its own unless edit gave one: the control socket (and any segment) is named for
    # the bench, and other checkouts' tests may run the demo bench at the same time
    text = text.replace("  name: arm2-demo\n", "  name: svc%d-demo\n" % os.getpid(), 1)
    path = os.path.join(tmp, "bench.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


class Notifications:
    """The fake NOTIFY_SOCKET: every datagram with its arrival time (monotonic seconds)."""

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.msgs = []  # (t, "KEY=value") one per line of each datagram
        self.lock = threading.Lock()
        self.stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while not self.stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            t = time.monotonic()
            with self.lock:
                for line in data.decode(errors="replace").splitlines():
                    self.msgs.append((t, line))

    def snapshot(self):
        with self.lock:
            return list(self.msgs)

    def times(self, key, since=0.0):
        return [t for t, m in self.snapshot() if m == key and t >= since]

    def status_ticks(self, since=0.0, until=float("inf")):
        out = []
        for t, m in self.snapshot():
            hit = re.match(r"STATUS=tick (\d+),", m)
            if hit and since <= t <= until:
                out.append((t, int(hit.group(1))))
        return out

    def wait_for(self, key, timeout, since=0.0, alive=lambda: True):
        """Arrival time of the first KEY message after since; None on timeout or once alive()
        turns false (the sender died: nothing more can come)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ts = self.times(key, since)
            if ts:
                return ts[0]
            if not alive():
                time.sleep(0.1)  # let the reader take what was sent before the exit
                ts = self.times(key, since)
                return ts[0] if ts else None
            time.sleep(0.02)
        return None

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


class Service:
    """hilsim run CONFIG --no-rt [extra] as the main process of a notify service."""

    def __init__(self, tmp, config, extra=(), env=None, watchdog_usec=None, notify=True,
                 watchdog_pid_other=False):
        self.notify = Notifications(tmp) if notify else None
        e = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM",
                  "HILSIM_TEST_HOOKS", "HILSIM_TEST_STALL_MS"):
            e.pop(k, None)
        if self.notify:
            e["NOTIFY_SOCKET"] = self.notify.path
        if watchdog_usec:
            e["WATCHDOG_USEC"] = str(watchdog_usec)
        e.update(env or {})
        self.out_path = os.path.join(tmp, "stdout.txt")
        self.err_path = os.path.join(tmp, "stderr.txt")
        self._out = open(self.out_path, "w")
        self._err = open(self.err_path, "w")
        argv = [HILSIM, "run", config, "--no-rt", *extra]
        if watchdog_usec and watchdog_pid_other:
            e["WATCHDOG_PID"] = "1"  # the watchdog belongs to another process: hilsim keeps out
        elif watchdog_usec:
            # systemd sets WATCHDOG_PID to the main PID: the shell's PID is hilsim's after exec.
            argv = ["/bin/sh", "-c", 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$@"', "sh",
                    *argv]
        self.proc = subprocess.Popen(argv, env=e, stdout=self._out, stderr=self._err,
                                     stdin=subprocess.DEVNULL)

    def wait_notify(self, key, timeout, since=0.0):
        return self.notify.wait_for(key, timeout, since, alive=lambda: self.proc.poll() is None)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stderr(self):
        self._err.flush()
        with open(self.err_path) as f:
            return f.read()

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()

    def wait_stderr(self, pattern, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pattern, self.stderr(), re.M):
                return True
            if self.proc.poll() is not None:
                return bool(re.search(pattern, self.stderr(), re.M))
            time.sleep(0.05)
        return False

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self._out.close()
        self._err.close()
        if self.notify:
            self.notify.close()
