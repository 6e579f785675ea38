"""hilsim run under a fake systemd: READY/STATUS/WATCHDOG/STOPPING notifications, the watchdog
going quiet while the RT loop stalls, signals, SIGHUP reloads and journal priority prefixes.

Timing is only checked with wide margins: the test machine is shared and noisy.
"""
import os
import re
import signal
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service_run  # noqa: E402
from service_run import READY_TIMEOUT_S, Service, bench_config  # noqa: E402

WATCHDOG_USEC = 400000
WD_S = WATCHDOG_USEC / 1e6
STALL_MS = 2000


def max_gap(times):
    return max((b - a for a, b in zip(times, times[1:])), default=0.0)


@unittest.skipUnless(service_run.HILSIM, "HILSIM not set")
class ServiceLifecycle(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.TemporaryDirectory(prefix="hs-svc-")
        self.tmp = self.tmpdir.name
        self.svc = None

    def tearDown(self):
        if self.svc:
            self.svc.close()
        self.tmpdir.cleanup()

    def start(self, **kw):
        self.svc = Service(self.tmp, bench_config(self.tmp, kw.pop("edit", None)), **kw)
        ready = self.svc.wait_notify("READY=1", READY_TIMEOUT_S)
        self.assertIsNotNone(ready, "no READY=1; stderr:\n" + self.svc.stderr())
        return ready

    def test_notify_watchdog_stall_and_stop(self):
        """The full life of a supervised run: ready, status, watchdog, a stall, SIGTERM."""
        svc_env = {"HILSIM_TEST_HOOKS": "1", "HILSIM_TEST_STALL_MS": str(STALL_MS)}
        ready = self.start(extra=["--systemd"], env=svc_env, watchdog_usec=WATCHDOG_USEC)
        n = self.svc.notify
        time.sleep(2.5)

        status = n.status_ticks(since=ready)
        self.assertGreaterEqual(len(status), 2, n.snapshot())
        ticks = [k for _, k in status]
        self.assertTrue(all(b > a for a, b in zip(ticks, ticks[1:])),
                        f"STATUS tick counts must increase while running: {ticks}")
        pings = n.times("WATCHDOG=1", since=ready)
        # Pinged every WATCHDOG_USEC/2 = 0.2 s: at least 5 in 2.5 s even on a slow machine.
        self.assertGreaterEqual(len(pings), 5, f"too few WATCHDOG=1 in 2.5 s: {len(pings)}")
        # systemd's contract is one ping per WATCHDOG_USEC; 2x leaves room for a busy host and
        # stays well apart from the stall's silence checked below.
        self.assertLess(max_gap(pings), 2 * WD_S, f"watchdog gaps: {pings}")

        # The stall: the RT loop sleeps STALL_MS once; the supervisor must stop pinging.
        t_usr1 = time.monotonic()
        self.svc.signal(signal.SIGUSR1)
        self.assertTrue(self.svc.wait_stderr(r"injected stall", 10), self.svc.stderr())
        time.sleep(STALL_MS / 1000 + 2.0)
        pings = n.times("WATCHDOG=1", since=t_usr1 - 1.0)
        gap = max_gap(pings)
        print(f"longest watchdog silence around the {STALL_MS} ms stall: {gap:.2f} s "
              f"(WATCHDOG_USEC {WD_S:.1f} s)")
        # Nearly the whole stall without a ping (at most one ping interval of it can be
        # covered by the last ping for ticks made before it), far longer than systemd allows.
        self.assertGreater(gap, 2 * WD_S, f"pings went on during the stall: {pings}")
        self.assertGreater(gap, STALL_MS / 1000 - 2 * WD_S, f"pings during the stall: {pings}")
        resumed = n.times("WATCHDOG=1", since=t_usr1 + STALL_MS / 1000 + 0.5)
        self.assertGreaterEqual(len(resumed), 3, f"pings did not resume after the stall: {pings}")
        status_after = n.status_ticks(since=t_usr1 + STALL_MS / 1000 + 0.5)
        self.assertGreaterEqual(len(status_after), 1)
        self.assertGreater(status_after[-1][1], ticks[-1], "ticks did not advance after stall")

        t_term = time.monotonic()
        self.svc.signal(signal.SIGTERM)
        rc = self.svc.wait(30)
        self.assertEqual(rc, 0, self.svc.stderr())
        self.assertTrue(n.times("STOPPING=1", since=t_term), n.snapshot())
        err, out = self.svc.stderr(), self.svc.stdout()
        self.assertRegex(err, r"(?m)^<6>SIGTERM: stopping at the next tick boundary$")
        self.assertRegex(err, r"(?m)^<6>safe stop: 2 joints set to their safe behaviour$")
        # --systemd: every log line carries a syslog priority; the NOT-A-RT-HOST banner is <4>.
        lines = [l for l in err.splitlines() if l]
        self.assertTrue(all(re.match(r"<[0-7]>", l) for l in lines), err)
        self.assertRegex(err, r"(?m)^<4>\*\*\* NOT A REAL-TIME HOST")
        # The summary on stdout: the per-phase table and the stop line.
        self.assertRegex(out, r"(?m)^phase \[us\]")
        stop = re.search(r"(?m)^stopped: stop requested; ticks (\d+)", out)
        self.assertIsNotNone(stop, out)
        self.assertGreaterEqual(int(stop.group(1)), ticks[-1])

    def test_lockstep_hold_keeps_the_watchdog_fed(self):
        """Lockstep with no controller yet: the loop waits by design, so the watchdog pings go
        on while ticks do not, and STATUS= says what the bench waits for."""
        name = "svc-ls-%d" % os.getpid()

        def lockstep(text):
            text = text.replace("  name: arm2-demo", "  name: " + name)
            text = text.replace("\nrt:\n", "\nrt:\n  clock: {mode: lockstep, "
                                "lockstep_timeout_s: 0.3, on_timeout: hold}\n", 1)
            return text + "\nshm: {enabled: true}\n"

        ready = self.start(edit=lockstep, watchdog_usec=WATCHDOG_USEC)
        n = self.svc.notify
        time.sleep(2.5)
        status = [m for t, m in n.snapshot() if m.startswith("STATUS=tick") and t >= ready]
        self.assertTrue(status, n.snapshot())
        self.assertIn("lockstep: waiting for the controller", status[-1])
        self.assertEqual([k for _, k in n.status_ticks(since=ready)][-1], 1)  # tick 0 only
        pings = n.times("WATCHDOG=1", since=ready)
        self.assertGreaterEqual(len(pings), 5, f"the watchdog starved while holding: {pings}")
        self.assertTrue(self.svc.wait_stderr(r"no release from the controller", 10),
                        self.svc.stderr())
        self.svc.signal(signal.SIGTERM)
        self.assertEqual(self.svc.wait(30), 0, self.svc.stderr())

    def test_watchdog_of_another_pid_is_left_alone(self):
        """WATCHDOG_PID naming another process: no WATCHDOG=1 (sd_watchdog_enabled's rule)."""
        ready = self.start(watchdog_usec=WATCHDOG_USEC, watchdog_pid_other=True)
        time.sleep(1.5)
        self.assertTrue(self.svc.notify.status_ticks(since=ready), self.svc.notify.snapshot())
        self.assertEqual(self.svc.notify.times("WATCHDOG=1"), [], self.svc.notify.snapshot())
        self.svc.signal(signal.SIGTERM)
        self.assertEqual(self.svc.wait(30), 0, self.svc.stderr())

    def test_second_signal_exits_at_once(self):
        """A stalled loop cannot reach a tick boundary: the second SIGTERM must exit now (1)."""
        stall_ms = 8000
        self.start(env={"HILSIM_TEST_HOOKS": "1", "HILSIM_TEST_STALL_MS": str(stall_ms)})
        time.sleep(0.5)
        self.svc.signal(signal.SIGUSR1)
        self.assertTrue(self.svc.wait_stderr(r"injected stall", 10), self.svc.stderr())
        self.svc.signal(signal.SIGTERM)
        self.assertTrue(self.svc.wait_stderr(r"SIGTERM: stopping", 5), self.svc.stderr())
        self.assertIsNone(self.svc.proc.poll(), "exited during the stall on the first SIGTERM")
        t0 = time.monotonic()
        self.svc.signal(signal.SIGTERM)
        rc = self.svc.wait(stall_ms / 1000)
        took = time.monotonic() - t0
        print(f"second SIGTERM: exit code {rc} after {took:.2f} s (stall {stall_ms} ms)")
        self.assertEqual(rc, 1, self.svc.stderr())
        self.assertLess(took, stall_ms / 1000 / 2, "the second signal waited for the stall")
        err = self.svc.stderr()
        # It waits a short grace for a tick boundary, then stops the I/O without the loop.
        self.assertIn("emergency stop", err)
        # No --systemd and no JOURNAL_STREAM: plain lines for a terminal.
        self.assertFalse([l for l in err.splitlines() if re.match(r"<[0-7]>", l)], err)

    def test_signals_before_ready_are_not_fatal(self):
        """SIGHUP during model build / warm-up (before READY=1) must not kill the service: the
        signals should be blocked from the start and taken by the supervisor once it runs.
        Today SIGHUP's default action ends the process. When runner.c is fixed this test
        passes and unittest reports an unexpected success: remove the decorator then."""
        cfg = bench_config(self.tmp, lambda t: t.replace("warmup_ticks: 200",
                                                         "warmup_ticks: 100000"))
        self.svc = Service(self.tmp, cfg)
        time.sleep(0.3)
        if self.svc.notify.times("READY=1"):
            self.skipTest("warm-up finished before the signal: nothing tested")
        self.svc.signal(signal.SIGHUP)
        ready = self.svc.wait_notify("READY=1", READY_TIMEOUT_S)
        self.assertIsNotNone(ready, f"died before READY: {self.svc.proc.poll()}")
        self.svc.signal(signal.SIGTERM)
        self.assertEqual(self.svc.wait(30), 0, self.svc.stderr())

    def test_reload_and_journal_prefixes(self):
        """SIGHUP: budgets applied, a frozen section refused with its reason; under journald
        (JOURNAL_STREAM set, no --systemd) lines carry <6>/<4>. SIGUSR1 without the test hooks
        does nothing."""
        self.start(env={"JOURNAL_STREAM": "8:12345"})
        n = self.svc.notify
        self.svc.signal(signal.SIGUSR1)  # hooks off: must be ignored
        cfg = os.path.join(self.tmp, "bench.yaml")
        with open(cfg) as f:
            text = f.read()
        self.assertIn("kp: 300", text)
        with open(cfg, "w") as f:
            f.write(text.replace("kp: 300", "kp: 310") + "budgets: {max_misses: 7}\n")
        t_hup = time.monotonic()
        self.svc.signal(signal.SIGHUP)
        self.assertIsNotNone(self.svc.wait_notify("RELOADING=1", 10, since=t_hup), n.snapshot())
        self.assertIsNotNone(self.svc.wait_notify("READY=1", 10, since=t_hup), n.snapshot())
        self.assertTrue(self.svc.wait_stderr(r"^<6>SIGHUP: applied new budgets$", 10),
                        self.svc.stderr())
        self.assertTrue(self.svc.wait_stderr(r"^<4>SIGHUP: refused changes to controller", 10),
                        self.svc.stderr())
        time.sleep(0.5)
        self.assertIsNone(self.svc.proc.poll(), "SIGHUP or SIGUSR1 ended the run")
        self.svc.signal(signal.SIGINT)
        self.assertEqual(self.svc.wait(30), 0, self.svc.stderr())
        err = self.svc.stderr()
        self.assertRegex(err, r"(?m)^<6>SIGINT: stopping")
        self.assertRegex(err, r"(?m)^<6>safe stop: \d+ joints")
        self.assertNotIn("injected stall", err)


if __name__ == "__main__":
    unittest.main()
