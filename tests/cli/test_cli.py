"""End-to-end checks of the hilsim command line, run the way a test engineer runs it.

No timing is asserted: the machines are shared and noisy. Behaviour, files and exit codes are.
"""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

HILSIM = os.environ["HILSIM"]
SRC = os.environ["HS_SOURCE_DIR"]
SHARED = os.environ.get("HS_SHARED_DIR", "")
DEMO = os.path.join(SRC, "config", "arm2-demo.yaml")


def run(*args, timeout=120, **kw):
    return subprocess.run([HILSIM, *args], capture_output=True, text=True, timeout=timeout, **kw)


def bench_config(tmp, extra=""):
    """arm2-demo with a relaxed period, budgets and leaky counter that a shared, noisy machine
    cannot trip, in tmp."""
    with open(DEMO) as f:
        text = f.read().replace("../models/", os.path.join(SRC, "models") + "/")
    # a name of its own: the control socket (and any segment) is named for the bench, and other
    # checkouts' tests may run the demo bench at the same time
    text = text.replace("  name: arm2-demo\n", "  name: cli%d-demo\n" % os.getpid(), 1)
    text = text.replace("period_ns: 1000000", "period_ns: 2000000")
    text = text.replace("step_s: 0.001", "step_s: 0.002")
    text = text.replace("warmup_ticks: 200", "warmup_ticks: 200\n  histogram_max_us: 100000\n"
                        "  overrun_leaky: {threshold: 1000000000}")
    text += ("budgets: {max_misses: 1000000, tick_p9999_fraction_of_period: 1.0,\n"
             "          tick_max_fraction_of_period: 10, wake_latency_p99_us: 100000,\n"
             "          wake_latency_max_us: 100000}\n") + extra
    path = os.path.join(tmp, "bench.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


class Usage(unittest.TestCase):
    def test_help_for_every_command(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        for cmd in ["model", "sim", "run", "bench", "bench-step", "config", "can"]:
            self.assertIn(cmd, r.stdout)
            h = run(cmd, "--help")
            self.assertEqual(h.returncode, 0, cmd + ": " + h.stderr)
            self.assertIn("usage", h.stdout.lower(), cmd)

    def test_unknown_command_is_usage_error(self):
        self.assertEqual(run("fly").returncode, 2)

    def test_bad_config_names_file_line_column(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.yaml")
            with open(path, "w") as f:
                f.write("bench: {name: x}\nmodels:\n  - {name: a, file: %s}\nrt:\n  period_ns: 5\n"
                        % os.path.join(SRC, "models", "arm2.wrl"))
            for cmd in ["sim", "run"]:
                r = run(cmd, path)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(path + ":5:", r.stderr)
                self.assertIn("period_ns", r.stderr)

    def test_missing_model_is_bad_input(self):
        r = run("sim", "--model", "/nonexistent/robot.wrl")
        self.assertEqual(r.returncode, 2)
        self.assertIn("/nonexistent/robot.wrl", r.stderr)


class BundledConfigs(unittest.TestCase):
    def test_every_bundled_config_is_valid_with_its_models(self):
        names = sorted(n for n in os.listdir(os.path.join(SRC, "config")) if n.endswith(".yaml"))
        self.assertIn("arm2-demo.yaml", names)
        for n in names:
            r = run("config", "check", "--quiet", os.path.join(SRC, "config", n))
            self.assertEqual(r.returncode, 0, n + ": " + r.stderr)


class Sim(unittest.TestCase):
    def test_same_input_same_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.csv"), os.path.join(tmp, "b.csv")
            for out in (a, b):
                r = run("sim", DEMO, "--duration", "2", "--out", out)
                self.assertEqual(r.returncode, 0, r.stderr)
            with open(a, "rb") as fa, open(b, "rb") as fb:
                self.assertEqual(fa.read(), fb.read())
            with open(a) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 2001)  # t = 0 plus one row per 1 ms tick
            for col in ["SHOULDER.q", "ELBOW.encoder_count", "TIP_ACCEL.z", "WRIST_FT.fz", "arm.z"]:
                self.assertIn(col, rows[0])
            # The demo trajectory swings the shoulder by 0.4 rad about 0.3 rad at 0.5 Hz.
            q = [float(r["SHOULDER.q"]) for r in rows]
            self.assertGreater(max(q), 0.3 + 0.3)
            self.assertLess(min(q), 0.3 - 0.3)

    def test_constant_torque_accelerates_the_joint(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.csv")
            r = run("sim", DEMO, "--duration", "0.2", "--torque", "ELBOW=2", "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
            self.assertAlmostEqual(float(rows[-1]["ELBOW.tau"]), 2.0, places=6)
            self.assertGreater(float(rows[-1]["ELBOW.dq"]), 0.1)
        r = run("sim", DEMO, "--duration", "0.1", "--torque", "NOPE=1")
        self.assertEqual(r.returncode, 2)

    @unittest.skipUnless(SHARED and os.path.isdir(os.path.join(SHARED, "models")),
                         "shared models absent")
    def test_sr1_stands_on_the_floor_for_10_s(self):
        model = os.path.join(SHARED, "models", "openhrp", "SR1.wrl")
        floor = os.path.join(SHARED, "models", "openhrp", "floor.wrl")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sr1.csv")
            r = run("sim", "--model", model, "--env", floor, "--duration", "10",
                    "--log-every", "10", "--out", out, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                z = [float(row["robot.z"]) for row in csv.DictReader(f)]
            settled = z[100:]  # after the first second
            # Requirement: the waist stays within 5 mm for 10 s under the PD hold.
            self.assertLess(max(settled) - min(settled), 0.005)
            self.assertGreater(min(settled), 0.6)


class Run(unittest.TestCase):
    def test_duration_runs_every_tick_and_reports(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run("run", bench_config(tmp), "--duration", "1", "--no-rt")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("stopped: max ticks reached; ticks 500,", r.stdout)
            self.assertIn("preemption model", r.stdout)
            for phase in ["wake", "inputs", "actuation", "physics", "sensors", "outputs", "tick"]:
                self.assertRegex(r.stdout, r"\n%s +500 " % phase)

    def test_sigterm_stops_at_a_tick_boundary(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.Popen([HILSIM, "run", bench_config(tmp), "--no-rt"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("SIGTERM", err)
            self.assertIn("stopped: stop requested", out)

    def test_require_rt_refuses_a_non_rt_host(self):
        with open("/proc/sys/kernel/version") as f:
            if "PREEMPT_RT" in f.read():
                self.skipTest("this host is PREEMPT_RT")
        with tempfile.TemporaryDirectory() as tmp:
            r = run("run", bench_config(tmp), "--duration", "1", "--require-rt")
            self.assertEqual(r.returncode, 1)
            self.assertIn("not real-time capable", r.stderr)

    def test_sighup_applies_budgets_and_refuses_physics(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = bench_config(tmp)
            p = subprocess.Popen([HILSIM, "run", path, "--no-rt"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("max_misses: 1000000", "max_misses: 999")
                        .replace("iterations: 20", "iterations: 25"))
            p.send_signal(signal.SIGHUP)
            time.sleep(1.0)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("refused changes to physics", err)
            self.assertIn("applied new budgets", err)


def stats_table(text):
    """The per-phase table: from the 'ticks ... period' line through the 'tick' row."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("ticks ") and "period" in l)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("tick "))
    return lines[start:end + 1]


@unittest.skipUnless(shutil.which("lttng") and shutil.which("babeltrace2")
                     and shutil.which("lttng-sessiond"), "lttng-tools or babeltrace2 absent")
class Trace(unittest.TestCase):
    def test_trace_of_a_run_agrees_with_its_own_stats(self):
        with open(DEMO) as f:
            self.assertIn("trace:\n  enabled: true", f.read())  # events only when enabled
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "trace")
            r = subprocess.run([os.path.join(SRC, "scripts", "trace-run.sh"), "-o", trace, "--",
                                HILSIM, "run", bench_config(tmp), "--duration", "1", "--no-rt"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            if "ticks 500 " not in r.stdout:
                self.fail(r.stdout)
            a = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "scripts",
                                "trace-analyze.py"), trace, "--range-ns", "100000000", "--json"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(a.returncode, 0, a.stderr)
            j = json.loads(a.stdout)
            self.assertEqual(j["ticks"], 500)  # every executed tick is in the trace
            t = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "scripts",
                                "trace-analyze.py"), trace, "--range-ns", "100000000"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(stats_table(t.stdout), stats_table(r.stdout))


    def test_trace_disabled_in_the_config_records_no_tick(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = bench_config(tmp)
            with open(cfg) as f:
                text = f.read().replace("trace:\n  enabled: true", "trace:\n  enabled: false")
            with open(cfg, "w") as f:
                f.write(text)
            trace = os.path.join(tmp, "trace")
            r = subprocess.run([os.path.join(SRC, "scripts", "trace-run.sh"), "-o", trace, "--",
                                HILSIM, "run", cfg, "--duration", "0.5", "--no-rt"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True,
                                timeout=120)
            self.assertNotIn("hilsim:tick", bt.stdout)


def no_core():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class RunSignals(unittest.TestCase):
    """Every way `hilsim run` can be told to stop. Behaviour only: which lines, which status."""

    def start(self, cfg, env=None):
        e = dict(os.environ, **(env or {}))
        p = subprocess.Popen([HILSIM, "run", cfg, "--no-rt"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=e, preexec_fn=no_core)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p

    def wait_line(self, p, text, err):
        """Reads stderr until a line contains text (keeping what was read in err)."""
        for line in p.stderr:
            err.append(line)
            if text in line:
                return
        self.fail("no line with %r in:\n%s" % (text, "".join(err)))

    def finish(self, p, err):
        # Not communicate(): it reads the raw pipes and would skip what wait_line's file object
        # already buffered past the line it waited for (a "safe stop:" written in the same
        # burst as "SIGINT: stopping" was lost that way, about one run in five).
        box = {}
        reader = threading.Thread(target=lambda: box.setdefault("out", p.stdout.read()))
        reader.start()
        rest = p.stderr.read()
        reader.join(120)
        p.wait(timeout=120)
        return box.get("out", ""), "".join(err) + rest

    def test_sigterm_cuts_a_long_warm_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = bench_config(tmp)
            with open(cfg) as f:
                text = f.read().replace("warmup_ticks: 200", "warmup_ticks: 1000000")
            with open(cfg, "w") as f:
                f.write(text)
            p, err = self.start(cfg), []
            self.wait_line(p, "warming up: 1000000 ticks", err)
            p.send_signal(signal.SIGTERM)
            out, err = self.finish(p, err)
            self.assertEqual(p.returncode, 0, err)
            cut = re.search(r"cut at tick (\d+) of 1000000", err)
            self.assertIsNotNone(cut, err)
            self.assertLess(int(cut.group(1)), 1000000)
            self.assertIn("safe stop:", err)
            self.assertIn("stopped: stop requested; ticks 0,", out)
            self.assertNotIn("running bench", err)  # never announced READY

    def test_second_sigint_still_stops_safely_with_the_summary(self):
        with tempfile.TemporaryDirectory() as tmp:
            p, err = self.start(bench_config(tmp)), []
            self.wait_line(p, "running bench", err)
            p.send_signal(signal.SIGINT)
            self.wait_line(p, "SIGINT: stopping", err)
            p.send_signal(signal.SIGINT)
            out, err = self.finish(p, err)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("safe stop:", err)
            self.assertIn("stopped: stop requested", out)
            self.assertIn("\ntick ", out)  # the per-phase table

    def test_second_signal_with_a_stuck_tick_stops_the_io_without_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            # The test hook stalls one tick for 10 minutes: only the second signal ends it.
            p, err = self.start(bench_config(tmp), {"HILSIM_TEST_HOOKS": "1",
                                                     "HILSIM_TEST_STALL_MS": "600000"}), []
            self.wait_line(p, "running bench", err)
            p.send_signal(signal.SIGUSR1)
            self.wait_line(p, "injected stall", err)
            p.send_signal(signal.SIGINT)
            self.wait_line(p, "SIGINT: stopping", err)
            p.send_signal(signal.SIGTERM)
            out, err = self.finish(p, err)
            self.assertEqual(p.returncode, 1, err)
            self.assertIn("SIGTERM again", err)
            self.assertIn("emergency stop", err)
            self.assertIn("stopped: abandoned inside a tick (second signal); ticks ", out)

    def test_watchdog_and_fatal_signals_die_of_the_signal_after_the_emergency_stop(self):
        for sig in (signal.SIGQUIT, signal.SIGABRT, signal.SIGUSR2, signal.SIGALRM,
                    signal.SIGSEGV):
            with self.subTest(sig=sig.name), tempfile.TemporaryDirectory() as tmp:
                p, err = self.start(bench_config(tmp)), []
                self.wait_line(p, "running bench", err)
                p.send_signal(sig)
                out, err = self.finish(p, err)
                self.assertEqual(p.returncode, -sig, err)  # systemd sees the real cause
                self.assertIn("hilsim: %s: no I/O to stop; exiting with the signal" % sig.name,
                              err)

    def test_sigpipe_is_ignored(self):
        with tempfile.TemporaryDirectory() as tmp:
            p, err = self.start(bench_config(tmp)), []
            self.wait_line(p, "running bench", err)
            p.send_signal(signal.SIGPIPE)
            p.send_signal(signal.SIGTERM)
            out, err = self.finish(p, err)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("stopped: stop requested", out)

    def test_reload_of_a_config_turned_fifo_keeps_running(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = bench_config(tmp)
            p, err = self.start(cfg), []
            self.wait_line(p, "running bench", err)
            os.rename(cfg, cfg + ".old")
            os.mkfifo(cfg)  # a reload that opened it would wait for a writer forever
            p.send_signal(signal.SIGHUP)
            self.wait_line(p, "SIGHUP: keeping the running config", err)
            p.send_signal(signal.SIGTERM)
            out, err = self.finish(p, err)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("not a regular file", err)
            self.assertIn("stopped: stop requested", out)

    def test_duration_shorter_than_a_tick_is_refused(self):
        r = run("run", DEMO, "--duration", "1e-7", "--no-rt", timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("shorter than half a tick", r.stderr)


class HostileFiles(unittest.TestCase):
    def test_fifo_or_directory_config_is_refused_without_hanging(self):
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "bench.yaml")
            os.mkfifo(fifo)
            for path, why in ((fifo, "not a regular file"), (tmp, "Is a directory")):
                for args in (["run", path, "--no-rt"], ["sim", path], ["config", "check", path]):
                    r = run(*args, timeout=60)  # a hang is a failure, not a slow pass
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(path + ": cannot open: " + why, r.stderr)

    def test_fifo_or_directory_model_is_refused_without_hanging(self):
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "robot.wrl")
            os.mkfifo(fifo)
            for path, why in ((fifo, "not a regular file"), (tmp, "Is a directory")):
                for args in (["model", path], ["sim", "--model", path, "--duration", "0.01"]):
                    r = run(*args, timeout=60)  # a hang is a failure, not a slow pass
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(path, r.stderr)
                    # the quick look's config check says "not a regular file" for both
                    self.assertTrue(why in r.stderr or "not a regular file" in r.stderr, r.stderr)

    def test_nesting_deeper_than_64_is_refused_at_its_position(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "deep.yaml")
            for depth, refused in ((64, False), (65, True), (200000, True)):
                with open(path, "w") as f:  # the root mapping is level 1
                    f.write("bench:\n  x: " + "[" * (depth - 2) + "]" * (depth - 2) + "\n")
                r = run("config", "check", path, timeout=60)
                self.assertEqual(r.returncode, 2, r.stderr)
                if refused:  # at the 63rd "[" after "  x: ": level 65
                    self.assertIn(path + ":2:%d: nested deeper than 64" % (6 + 63 - 1),
                                  r.stderr)
                else:
                    self.assertNotIn("nested deeper", r.stderr)
                    self.assertIn("unknown key 'x'", r.stderr)


class SimEdges(unittest.TestCase):
    def test_empty_torque_value_is_refused(self):
        r = run("sim", DEMO, "--torque", "ELBOW=")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--torque ELBOW", r.stderr)

    def test_duration_shorter_than_a_tick_is_refused(self):
        r = run("sim", DEMO, "--duration", "1e-7")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("shorter than half a tick", r.stderr)

    def test_full_device_names_the_errno(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        r = run("sim", DEMO, "--duration", "0.5", "--out", "/dev/full")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("/dev/full: write failed: No space left on device", r.stderr)

    def test_failed_write_leaves_no_partial_file(self):
        import resource

        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))

        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "log.csv")
            r = subprocess.run([HILSIM, "sim", DEMO, "--duration", "2", "--out", out],
                               capture_output=True, text=True, timeout=120,
                               preexec_fn=small_files)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("write failed: File too large; the partial file was removed",
                          r.stderr)
            self.assertFalse(os.path.exists(out))

    def test_sigterm_finishes_the_row_and_reports(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "log.csv")
            p = subprocess.Popen([HILSIM, "sim", DEMO, "--duration", "1000000", "--out", out],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.addCleanup(lambda: p.poll() is None and p.kill())
            while not os.path.exists(out) or os.path.getsize(out) < 100000:
                self.assertIsNone(p.poll(), "sim ended before it was signalled")
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            so, se = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 1, se)
            m = re.search(r"stopped by SIGTERM after tick (\d+)", so)
            self.assertIsNotNone(m, so + se)
            with open(out) as f:
                text = f.read()
            self.assertTrue(text.endswith("\n"))
            rows = list(csv.reader(text.splitlines()))
            self.assertTrue(all(len(row) == len(rows[0]) for row in rows))
            self.assertEqual(len(rows), 1 + 1 + int(m.group(1)))  # header, t = 0, every tick
            self.assertAlmostEqual(float(rows[-1][0]), int(m.group(1)) * 1e-3, places=9)


class Bench(unittest.TestCase):
    def test_report_files_and_verdict(self):
        with tempfile.TemporaryDirectory() as tmp:
            rep = os.path.join(tmp, "report")
            r = run("bench", bench_config(tmp), "--duration", "1", "--report", rep, "--no-rt")
            self.assertIn(r.returncode, (0, 1), r.stderr + r.stdout)
            with open(os.path.join(rep, "report.json")) as f:
                j = json.load(f)
            # The budgets are generous, but a loaded machine may still break the tick budget
            # (at most one period): what must hold is that the verdict follows the checks and
            # the exit code follows the verdict.
            for b in j["budgets"]:
                self.assertEqual(b["pass"], b["measured"] <= b["limit"], b)
            verdict = "pass" if all(b["pass"] for b in j["budgets"]) else "fail"
            self.assertEqual(j["verdict"], verdict)
            self.assertEqual(r.returncode, 0 if verdict == "pass" else 1)
            self.assertEqual(j["stats"]["ticks"], 500)
            self.assertEqual(j["baseline_wake"]["count"], 500)
            self.assertEqual(len(j["budgets"]), 6)
            # the layout the hand-written writer had (keys in order), now written by jansson
            self.assertEqual(list(j), ["bench", "duration_s", "audit", "stats", "baseline_wake",
                                       "wake_p9999_ratio_to_baseline", "solver_health",
                                       "budgets", "verdict"])
            # the physics' own health beside the timing (config/README.md, physics.health)
            self.assertEqual(list(j["solver_health"]), ["steps", "weight_n", "penetration_m",
                                                        "joint_error_m", "contact_force_jump_n",
                                                        "contacts_reserved", "contacts_dropped"])
            self.assertEqual(j["solver_health"]["contacts_dropped"], 0)
            self.assertEqual(j["solver_health"]["steps"], 500)
            self.assertEqual(list(j["stats"]), ["period_ns", "ticks", "overruns",
                                                "missed_periods", "range_ns", "pct_rel_err",
                                                "phases"])
            self.assertEqual(list(j["stats"]["phases"]), ["wake", "inputs", "actuation",
                                                          "physics", "sensors", "outputs", "tick"])
            self.assertEqual(list(j["baseline_wake"]),
                             ["count", "overflow", "min_ns", "mean_ns", "max_ns", "p50_ns",
                              "p99_ns", "p99_9_ns", "p99_99_ns"])
            self.assertEqual(list(j["budgets"][0]), ["name", "measured", "limit", "unit", "pass"])
            self.assertIn("preempt_model", json.dumps(j["audit"]))
            with open(os.path.join(rep, "report.txt")) as f:
                txt = f.read()
            self.assertIn("verdict: " + verdict.upper(), txt)
            self.assertIn("baseline", txt)
            with open(os.path.join(rep, "latency.svg")) as f:
                svg = f.read()
            self.assertTrue(svg.startswith("<svg") and svg.rstrip().endswith("</svg>"))
            # the time budgets are drawn as labelled limits
            for name in ("tick p99.99", "tick max", "wake latency p99", "wake latency max"):
                self.assertIn(">budget %s " % name, svg)

    def test_failed_budget_fails_the_verdict(self):
        with tempfile.TemporaryDirectory() as tmp:
            rep = os.path.join(tmp, "report")
            # No tick takes zero time, so a zero tick budget must fail.
            cfg = bench_config(tmp)
            with open(cfg) as f:
                text = f.read().replace("tick_max_fraction_of_period: 10",
                                        "tick_max_fraction_of_period: 0.000001").replace(
                                        "tick_p9999_fraction_of_period: 1.0",
                                        "tick_p9999_fraction_of_period: 0.000001")
            with open(cfg, "w") as f:
                f.write(text)
            r = run("bench", cfg, "--duration", "0.5", "--report", rep, "--no-rt")
            self.assertEqual(r.returncode, 1, r.stderr)
            with open(os.path.join(rep, "report.json")) as f:
                self.assertEqual(json.load(f)["verdict"], "fail")


if __name__ == "__main__":
    unittest.main()
