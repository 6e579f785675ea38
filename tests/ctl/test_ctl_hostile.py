#!/usr/bin/env python3
"""End to end: the control socket against hostile and careless clients.

`hilsim run --no-rt` serves config/arm2-shm.yaml (renamed per test; free-running, no
controller: the joints keep their safe behaviour). Clients are raw Unix sockets and the
`hilsim ctl` binary. Every check waits for an event (an answer, a close, an exit), with
generous limits, so a loaded machine (stress-ng --cpu 2) changes nothing.

  trickle        a client sending one byte every 2 s holds no one: `hilsim ctl status`
                 answers meanwhile, and the trickler is dropped
  pipeline       a client that pipelines 20,000 `status` lines and never reads is dropped
                 (its socket closes) while `status` keeps being answered
  connections    past 32 open connections a new one gets one "error: busy" line; once they
                 close, `status` answers again; a user other than root holds at most 8, and
                 root and other users are served meanwhile
  no deputy      `scenario start FILE` and an injected path step sent without their files
                 are refused and nothing is opened by name; hilsim ctl passes the files
                 (a scenario whose path CSV the client opened plays); an unwritable or FIFO
                 --junit is refused at once (exit 2), before the bench sees the line;
                 a raw client naming --junit without passing it, or passing a FIFO or a
                 read-only descriptor, is refused and the named file is left alone
  refused user   `hilsim ctl` as a user the bench refuses prints the refusal (exit 2) every
                 time, never "no answer: Broken pipe"
  bounds         inject force 1e308, torque 1e308 or gravity 1e308 is refused (exit 2) with
                 the limit named; the bench runs on
  protocol       200 seeded hostile lines (random bytes, control characters, NULs, overlong
                 words): each whole line gets exactly one answer starting "ok" or "error: ",
                 and the bench still answers `status`
  sigterm        with a trickler and a non-reading pipeliner connected, SIGTERM ends the run
                 with exit 0 and its socket is gone
  stale socket   a bench killed with SIGKILL leaves its .ctl socket; `hilsim shm remove`
                 removes it with the segment, and a new run over a stale one starts
  hard link      a default verdict file that is a hard link to another file is refused

Environment (set by ctest): HS_HILSIM, HS_SOURCE_DIR.
"""

import json
import os
import random
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HS_HILSIM"]
LIMIT = 60  # seconds for any event; a loaded machine stays far below


class Bench:
    def __init__(self, tmp, tag):
        self.name = "ctlh%d-%s" % (os.getpid(), tag)
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as f:
            cfg = f.read().replace("../models/", SRC + "/models/")
        self.cfg = os.path.join(tmp, self.name + ".yaml")
        with open(self.cfg, "w") as f:
            f.write(cfg.replace("name: arm2-shm", "name: " + self.name))
        self.env = dict(os.environ, HILSIM_CTL_DIR=tmp)
        self.sock = os.path.join(tmp, "hilsim-%s.ctl" % self.name)
        self.tmp = tmp

    def start(self):
        self.proc = subprocess.Popen([HILSIM, "run", self.cfg, "--no-rt"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=self.env)
        deadline = time.monotonic() + LIMIT
        while self.ctl("status")[0] != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("bench did not come up: %s" % self.stop())
            time.sleep(0.1)
        return self

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.communicate(timeout=LIMIT)[0]

    def ctl(self, *words, cwd=None):
        p = subprocess.run([HILSIM, "ctl", self.name] + [str(w) for w in words],
                           capture_output=True, text=True, env=self.env, timeout=LIMIT, cwd=cwd)
        return p.returncode, p.stdout, p.stderr

    def raw(self):
        deadline = time.monotonic() + LIMIT
        while True:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                c.connect(self.sock)  # blocking: waits while the backlog is full
                c.settimeout(LIMIT)
                return c
            except BlockingIOError:  # the backlog is full: the server accepts soon
                c.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


# Run as another user by Debian's python (a user's own interpreter, e.g. pyenv's under /root,
# is out of another uid's reach): opens N connections to the socket (argv 1) and asks `status`
# on each; every one gets exactly one line, its answer or the "busy" line it was refused with.
# Prints one JSON line (how many were answered, the busy lines), then holds the served
# connections until its stdin closes.
HOLDER = r"""
import json, socket, sys
path, n = sys.argv[1], int(sys.argv[2])
conns = []
for _ in range(n):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(60)
    c.connect(path)
    conns.append(c)
answered, busy = [], []
for c in conns:
    try:
        c.sendall(b"status\n")
    except OSError:  # refused and closed already: its busy line is still there to read
        pass
    line = c.makefile().readline().strip()
    (busy if line.startswith("error: busy") else answered).append(line)
print(json.dumps({"answered": answered, "busy": busy}), flush=True)
sys.stdin.read()
"""


def closed_by_server(c):
    """True once the server closed c: reads hit EOF or a reset (what it sent is drained)."""
    try:
        while c.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


class Trickler(threading.Thread):
    """Sends one byte every 2 s, never a newline, until stopped or dropped."""

    def __init__(self, bench):
        super().__init__(daemon=True)
        self.c, self.stop, self.dropped = bench.raw(), threading.Event(), threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.c.send(b"s")
            except OSError:
                self.dropped.set()
                return
            self.stop.wait(2.0)


class Hostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpdir = tempfile.TemporaryDirectory()
        cls.tmp = cls.tmpdir.name
        cls.bench = Bench(cls.tmp, "main").start()

    @classmethod
    def tearDownClass(cls):
        cls.bench.stop()
        cls.tmpdir.cleanup()

    def status_ok(self):
        rc, out, err = self.bench.ctl("status")
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("ok bench "), out)

    def test_trickle(self):
        t = Trickler(self.bench)
        t.start()
        try:
            for _ in range(3):  # the trickler's bytes keep coming; others are served
                self.status_ok()
            self.assertTrue(t.dropped.wait(LIMIT) or closed_by_server(t.c),
                            "a client that never completes a line is never dropped")
        finally:
            t.stop.set()
            t.c.close()

    def test_pipeline(self):
        c = self.bench.raw()
        c.setblocking(False)
        sent, line = 0, b"status\n"
        data = line * 20000
        deadline = time.monotonic() + LIMIT
        while sent < len(data) and time.monotonic() < deadline:
            try:
                sent += c.send(data[sent:])
            except BlockingIOError:
                time.sleep(0.01)
            except (BrokenPipeError, ConnectionResetError):
                break  # dropped already
        self.status_ok()  # the socket thread is not stuck in a send
        c.settimeout(LIMIT)
        self.assertTrue(closed_by_server(c), "a client that never reads is never dropped")
        c.close()
        self.status_ok()

    def test_connections(self):
        conns = [self.bench.raw() for _ in range(40)]
        try:
            busy = 0
            for c in conns[32:]:
                c.settimeout(LIMIT)
                line = c.makefile().readline()
                self.assertTrue(line.startswith("error: busy: 32 control connections"), line)
                busy += 1
            self.assertEqual(busy, 8)
        finally:
            for c in conns:
                c.close()
        deadline = time.monotonic() + LIMIT
        while self.bench.ctl("status")[0] != 0:  # the slots free as the server sees the closes
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)

    def test_connect_burst_is_queued(self):
        # 100 connects at once, none waiting (as a flood does): the kernel queues them all
        # (listen backlog 128) instead of refusing the 17th with EAGAIN, and every one gets its
        # one line or is served; status answers afterwards.
        conns, refused = [], 0
        try:
            for _ in range(100):
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.setblocking(False)
                conns.append(c)
                try:
                    c.connect(self.bench.sock)
                except BlockingIOError:
                    refused += 1
            self.assertEqual(refused, 0, "connects refused with EAGAIN: the queue was full")
        finally:
            for c in conns:
                c.close()
        deadline = time.monotonic() + LIMIT
        while self.bench.ctl("status")[0] != 0:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)

    def test_connections_per_user(self):
        # Another user in the socket's group (a uid with no passwd entry will do: the kernel
        # records its credentials at connect) opens 10 connections and holds them: 8 are
        # served, the 9th and 10th get one "busy" line naming the per-user limit, and root's
        # `status` and another user's are answered meanwhile.
        gid = os.stat(self.bench.sock).st_gid
        os.chmod(self.tmp, 0o711)  # the others may reach the socket, not list the folder
        holder = subprocess.Popen(
            ["/usr/bin/python3", "-c", HOLDER, self.bench.sock, "10"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, user=4242, group=gid, extra_groups=[gid])
        try:
            ready, _, _ = select.select([holder.stdout], [], [], LIMIT)
            self.assertTrue(ready, "the other user's client said nothing in %d s" % LIMIT)
            got = json.loads(holder.stdout.readline() or "{}")
            self.assertEqual(len(got.get("answered", [])), 8, got)
            self.assertTrue(all(a.startswith("ok bench ") for a in got["answered"]), got)
            self.assertEqual(len(got["busy"]), 2, got)
            self.assertTrue(got["busy"][0].startswith(
                "error: busy: uid 4242 holds 8 control connections (at most 8 per user)"), got)
            self.status_ok()  # root, while the other user holds its 8
            other = subprocess.run(["/usr/bin/python3", "-c", HOLDER, self.bench.sock, "1"],
                                   input="", capture_output=True, text=True, timeout=LIMIT,
                                   user=4343, group=gid, extra_groups=[gid])
            got = json.loads(other.stdout or "{}")
            self.assertEqual(got.get("busy"), [], other.stdout + other.stderr)
            self.assertTrue(got["answered"][0].startswith("ok bench "), got)
        finally:
            holder.kill()
            holder.communicate(timeout=LIMIT)

    def ask(self, line, fds=()):
        c = self.bench.raw()
        if fds:
            socket.send_fds(c, [line], list(fds))
        else:
            c.sendall(line)
        answer = c.makefile().readline()
        c.close()
        return answer

    def test_no_deputy(self):
        secret = os.path.join(self.tmp, "secret.yaml")
        with open(secret, "w") as f:
            f.write("scenario: {name: SECRET-CONTENT, duration_s: 1}\n")
        a = self.ask(b"scenario start %s\n" % secret.encode())
        self.assertTrue(a.startswith("error: scenario start needs its files passed"), a)
        self.assertNotIn("SECRET", a)
        a = self.ask(b"inject {path: {file: %s}}\n" % secret.encode())
        self.assertTrue(a.startswith("error: "), a)
        self.assertIn("not passed by the client", a)
        self.assertNotIn("SECRET", a)
        # a FIFO passed as the scenario is refused without reading it
        fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(fifo)
        r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        a = self.ask(b"scenario start %s\n" % fifo.encode(), [r, r, r])
        os.close(r)
        self.assertIn("not a regular file", a)
        # through hilsim ctl: the client opens the scenario and its CSV, the bench plays them
        with open(os.path.join(self.tmp, "p.csv"), "w") as f:
            f.write("time_s,ELBOW\n0,0.1\n0.05,0.2\n")
        with open(os.path.join(self.tmp, "p.yaml"), "w") as f:
            f.write("scenario: {name: passed-files, duration_s: 0.1}\nsteps:\n"
                    "  - {at_s: 0, path: {file: p.csv}}\n")
        rc, out, err = self.bench.ctl("scenario", "start", "p.yaml", "--junit", "p.xml",
                                      cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        deadline = time.monotonic() + LIMIT
        while "ended" not in self.bench.ctl("scenario", "status")[1]:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        with open(os.path.join(self.tmp, "p.xml")) as f:
            self.assertIn("<testsuite name=\"passed-files\"", f.read())
        # unwritable --junit: refused by the client at once, before the bench sees the line
        for junit in ("/proc/nonexistent/j.xml", fifo):
            rc, out, err = self.bench.ctl("scenario", "start", "p.yaml", "--junit", junit,
                                          cwd=self.tmp)
            self.assertEqual(rc, 2, (junit, out, err))
            self.assertIn(junit, err)
        self.assertIn("scenario idle", self.bench.ctl("status")[1])

    def test_verdict_files_only_as_passed(self):
        # A raw client names --junit but passes only the scenario's descriptor, or passes a
        # FIFO or a read-only descriptor as the verdict file: each is refused at once, and the
        # file the line names (root's 0600 file here) is neither opened, created nor changed.
        victim = os.path.join(self.tmp, "victim.xml")
        with open(victim, "w") as f:
            f.write("precious\n")
        os.chmod(victim, 0o600)
        scen = os.path.join(self.tmp, "v.yaml")
        with open(scen, "w") as f:
            f.write("scenario: {name: v, duration_s: 0.1}\nsteps: []\n")
        created = os.path.join(self.tmp, "created.xml")
        sfd = os.open(scen, os.O_RDONLY)
        fifo = os.path.join(self.tmp, "vfifo")
        os.mkfifo(fifo)
        r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        ro = os.open(victim, os.O_RDONLY)
        try:
            for target, fds, why in (
                    (victim, [sfd], "needs its files passed"),
                    (created, [sfd], "needs its files passed"),
                    (fifo, [sfd, w], "not a regular file"),
                    (victim, [sfd, ro], "not opened for writing")):
                a = self.ask(b"scenario start %s --junit %s\n" % (scen.encode(), target.encode()),
                             fds)
                self.assertTrue(a.startswith("error: "), (target, a))
                self.assertIn(why, a)
        finally:
            for fd in (sfd, r, w, ro):
                os.close(fd)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertFalse(os.path.exists(created))
        self.assertIn("scenario idle", self.bench.ctl("status")[1])

    def test_refused_user_reads_the_refusal(self):
        # `hilsim ctl` run by a user the bench does not authorise (the socket's mode widened by
        # hand) printed "no answer: Broken pipe", exit 1, 2 times in 7: the server's refusal
        # and close raced the client's send. The client reads the answer even when its send
        # failed: every one of 20 tries, each with a line long enough to still be in flight,
        # prints the refusal with exit 2.
        if os.geteuid() != 0:
            self.skipTest("needs root to run hilsim ctl as another user")
        mode_sock = os.stat(self.bench.sock).st_mode
        os.chmod(self.tmp, 0o711)
        os.chmod(self.bench.sock, 0o666)
        step = "{push: {link: ELBOW, force_n: [0, 0, 1]}, duration_s: 0.01, name: %s}" % (
            "x" * 900)
        try:
            for k in range(20):
                p = subprocess.run([HILSIM, "ctl", self.bench.name, "inject", step],
                                   capture_output=True, text=True, env=self.bench.env,
                                   timeout=LIMIT, user=65534, group=65534, extra_groups=[])
                self.assertEqual(p.returncode, 2, (k, p.stderr))
                self.assertIn("error: not authorised: uid 65534", p.stderr)
                self.assertNotIn("no answer", p.stderr)
        finally:
            os.chmod(self.bench.sock, mode_sock & 0o7777)

    def test_bounds(self):
        for step, what in (("{push: {link: ELBOW, force_n: [1e308, 0, 0]}, duration_s: 0.1}",
                            "push.force_n"),
                           ("{push: {link: ELBOW, torque_nm: [0, 1e308, 0]}, duration_s: 0.1}",
                            "push.torque_nm"),
                           ("{gravity: {vector_m_s2: [0, 0, -1e308]}, duration_s: 0.1}",
                            "gravity.vector_m_s2")):
            rc, out, err = self.bench.ctl("inject", step)
            self.assertEqual(rc, 2, (step, out, err))
            self.assertIn(what, err)
            self.assertIn("above the live limit", err)
        rc, out, err = self.bench.ctl("push", "ELBOW", 1e308, 0, 0, 0.1)
        self.assertEqual(rc, 2, err)
        self.status_ok()
        self.assertIsNone(self.bench.proc.poll(), "the bench stopped")

    def test_protocol_hostile_lines(self):
        rng = random.Random(25)
        alphabet = (b"status scenario start stop inject push fault sensor actuator clear "
                    b"{}[]:,'\"\\/.-+eE0123456789 nan inf \t\r\x00\x01\x1b\x7f\xff\xc3")
        c = self.bench.raw()
        f = c.makefile("rb")
        lines = 0
        for _ in range(200):
            n = rng.choice((0, 1, 5, 40, 300, 1000))
            body = bytes(rng.choice(alphabet) for _ in range(n)).replace(b"\n", b"")
            if b"stop" in body.split(b"\x00")[0].split(b"\r")[0].strip().split(b" ")[:1]:
                continue  # a line that is exactly `stop` would end the bench
            c.sendall(body + b"\n")
            answer = f.readline()
            self.assertTrue(answer.startswith(b"ok") or answer.startswith(b"error: "),
                            (body, answer))
            self.assertTrue(answer.endswith(b"\n"))
            lines += 1
        c.close()
        self.assertGreater(lines, 150)
        self.status_ok()


    def test_line_length_boundary(self):
        # A line of exactly HS_CTL_LINE_MAX (1024) bytes, newline included, is a command (an
        # unknown one); one byte more, its newline in the buffer's spare last byte, is refused
        # as too long by the framing (test_ctl_parse test_frame_limit; it used to be handed
        # out, its NUL written one byte past the server's line buffer, and then refused by the
        # parser with the same words: fuzz_ctl_stream found it).
        c = self.bench.raw()
        c.sendall(b"x" * 1023 + b"\n")
        answer = c.makefile("rb").readline()
        self.assertTrue(answer.startswith(b"error: ") and b"longer than" not in answer, answer)
        c.close()
        c = self.bench.raw()
        c.sendall(b"x" * 1024 + b"\n")
        answer = c.makefile("rb").readline()
        self.assertEqual(answer, b"error: line longer than 1024 bytes\n")
        c.close()
        self.status_ok()


class Lifecycle(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmpdir.cleanup)

    def test_sigterm_with_hostile_clients(self):
        bench = Bench(self.tmpdir.name, "term").start()
        t = Trickler(bench)
        t.start()
        p = bench.raw()
        p.setblocking(False)
        try:
            for _ in range(2000):
                p.send(b"status\n")
        except (BlockingIOError, BrokenPipeError, ConnectionResetError):
            pass
        bench.proc.send_signal(signal.SIGTERM)
        out = bench.proc.communicate(timeout=LIMIT)[0]
        t.stop.set()
        self.assertEqual(bench.proc.returncode, 0, out[-2000:])
        self.assertFalse(os.path.exists(bench.sock))

    def test_stale_socket(self):
        bench = Bench(self.tmpdir.name, "stale").start()
        bench.proc.kill()
        bench.proc.wait(LIMIT)
        self.assertTrue(os.path.exists(bench.sock), "SIGKILL leaves the socket")
        # a new run takes the dead one's socket over
        bench.start()
        bench.proc.kill()
        bench.proc.wait(LIMIT)
        p = subprocess.run([HILSIM, "shm", "remove", bench.name], capture_output=True,
                           text=True, env=bench.env, timeout=LIMIT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("removed %s" % bench.sock, p.stdout)
        self.assertFalse(os.path.exists(bench.sock))

    def test_default_verdict_file_hard_linked(self):
        # The default verdict files sit next to the socket, in a directory others may write
        # (/tmp): one that is a hard link to a file of the bench's user (planted where
        # fs.protected_hardlinks is off) is refused, and that file is left as it was.
        bench = Bench(self.tmpdir.name, "link").start()
        try:
            victim = os.path.join(self.tmpdir.name, "victim.txt")
            with open(victim, "w") as f:
                f.write("precious\n")
            base = bench.sock[:-len(".ctl")]
            os.link(victim, base + ".scenario-1.junit.xml")
            scen = os.path.join(self.tmpdir.name, "s.yaml")
            with open(scen, "w") as f:
                f.write("scenario: {name: s, duration_s: 0.1}\nsteps: []\n")
            rc, out, err = bench.ctl("scenario", "start", scen)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("scenario-1.junit.xml: cannot write the verdict there: it has other "
                          "hard links", err)
            with open(victim) as f:
                self.assertEqual(f.read(), "precious\n")
        finally:
            out = bench.stop()
        self.assertEqual(bench.proc.returncode, 0, out[-2000:])

    def test_full_backlog_bounds_the_client(self):
        # A listener that never accepts, its backlog filled: `hilsim ctl` gives up after its
        # 10 s answer deadline with exit 1 and says why, instead of hanging in connect().
        tmp = self.tmpdir.name
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lst.bind(os.path.join(tmp, "hilsim-full.ctl"))
        lst.listen(0)
        fillers = []
        try:
            while True:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.setblocking(False)
                fillers.append(c)
                c.connect(os.path.join(tmp, "hilsim-full.ctl"))
        except BlockingIOError:
            pass
        try:
            p = subprocess.run([HILSIM, "ctl", "full", "status"], capture_output=True, text=True,
                               env=dict(os.environ, HILSIM_CTL_DIR=tmp), timeout=LIMIT)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("accepted no connection within 10 s", p.stderr)
        finally:
            for c in fillers:
                c.close()
            lst.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
