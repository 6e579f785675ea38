"""Record and replay from the outside: hilsim run --record and hilsim replay as a user runs
them, the recording test_record leaves (HS_RECORD_KEEP) read by python-can's candump reader and
by the Python reader in python/hilsim_record.py, and damaged recordings refused by both with
the file and byte offset. Debian's python3 (python3-can)."""
import csv
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

SRC = os.environ.get("HS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("HS_BUILD_DIR", os.path.join(SRC, "build"))
HILSIM = os.path.join(BUILD, "hilsim")
KEPT = os.environ.get("HS_RECORD_KEEP")
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_record  # noqa: E402

try:
    import can
except ImportError:
    can = None


def read_png(path):
    """The PNG's width, height and rows of (r, g, b): a small decoder for what cairo writes
    (8-bit RGB or RGBA, not interlaced), after checking the signature and every chunk's CRC."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: no PNG signature")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise AssertionError(f"{path}: bad CRC in chunk {kind}")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise AssertionError(f"{path}: unexpected IHDR {ihdr}")
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, rows, o = zlib.decompress(idat), w * bpp, bytearray(w * bpp), [], 0
    for _ in range(h):
        f, line = raw[o], bytearray(raw[o + 1:o + 1 + stride])
        o += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def curve_pixels(rows, x0, x1, y0, y1):
    """Pixels (x, y) of columns x0..x1-1, rows y0..y1-1 that are blue (the recorded curve) and
    red (the replayed one). Over ten columns both show: the red dashes leave gaps."""
    blue, red = [], []
    for x in range(x0, x1):
        for y in range(y0, y1):
            r, g, b = rows[y][x]
            if b > 120 and b > r + 60:
                blue.append((x, y))
            elif r > 140 and r > g + 50 and r > b + 40:
                red.append((x, y))
    return blue, red


def hilsim(*args, check=None):
    p = subprocess.run([HILSIM, *args], capture_output=True, text=True, timeout=300)
    if check is not None and p.returncode != check:
        raise AssertionError(f"hilsim {' '.join(args)}: exit {p.returncode}, want {check}\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


class CliRecordReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hs-rec-cli-")
        cls.rec = os.path.join(cls.tmp, "demo")
        # the arm's demo trajectory in the real loop (warm-up included), recorded
        p = hilsim("run", os.path.join(SRC, "config", "arm2-demo.yaml"), "--no-rt",
                   "--duration", "0.5", "--record", cls.rec, check=0)
        cls.run_out = p.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_summary_names_the_recording(self):
        self.assertRegex(self.run_out, r"recording: .*demo: \d+ ticks.*dropped 0 states, 0 items")

    def test_replay_is_bit_exact(self):
        p = hilsim("replay", self.rec, check=0)
        self.assertIn("BIT-EXACT", p.stdout)

    def test_what_if_diverges(self):
        text = open(os.path.join(self.rec, "config.yaml")).read()
        self.assertIn("physics:", text)
        changed = os.path.join(self.tmp, "heavier.yaml")
        with open(changed, "w") as fh:  # ten times the world's gravity
            fh.write(text.replace("physics:", "physics:\n  gravity: [0, 0, -98.1]", 1))
        shutil.copy(os.path.join(SRC, "models", "arm2.wrl"), self.tmp)
        shutil.copy(os.path.join(SRC, "models", "floor.wrl"), self.tmp)
        with open(changed) as fh:
            t = fh.read().replace("../models/", "")
        with open(changed, "w") as fh:
            fh.write(t)
        p = hilsim("replay", self.rec, "--config", changed, "--tolerance", "1e-6", check=4)
        self.assertRegex(p.stdout, r"DIVERGED at tick \d+, t = [0-9.]+ s: \S+\.")

    def test_replay_builds_the_config_the_recording_hilsim_resolved(self):
        # The run keeps its config as its hilsim resolved it (every default filled in): a later
        # hilsim whose defaults changed replays the bench the run had. Shown here by changing a
        # value in that file, as a build with another default would differ: the replay follows
        # it (diverges), not config.yaml.
        m = json.load(open(os.path.join(self.rec, "manifest.json")))
        self.assertEqual(m["config"]["resolved"], "config-resolved.yaml")
        drift = os.path.join(self.tmp, "drift")
        shutil.copytree(self.rec, drift)
        path = os.path.join(drift, "config-resolved.yaml")
        text = open(path).read()
        self.assertRegex(text, r"\n  gravity: \[0, 0, -9.80665\]\n")
        with open(path, "w") as fh:
            fh.write(text.replace("gravity: [0, 0, -9.80665]", "gravity: [0, 0, -98.1]"))
        # the copy changed since the run: refused, as the manifest hashed the one it wrote
        p = hilsim("replay", drift, check=2)
        self.assertIn("config-resolved.yaml: its SHA-256", p.stderr)
        # as another build would have written it (its own bytes, its own hash): followed
        with open(path, "rb") as fh:
            m["config"]["resolved_sha256"] = hashlib.sha256(fh.read()).hexdigest()
        with open(os.path.join(drift, "manifest.json"), "w") as fh:
            json.dump(m, fh)
        hilsim("replay", drift, check=4)
        # A recording made before the resolved config was kept: config.yaml with this build's
        # defaults (bit-exact here, the same build), and a warning when another commit made it.
        os.remove(path)
        del m["config"]["resolved"]
        m["hilsim_commit"] = "0" * 40
        with open(os.path.join(drift, "manifest.json"), "w") as fh:
            json.dump(m, fh)
        p = hilsim("replay", drift, check=0)
        self.assertIn("BIT-EXACT", p.stdout)
        self.assertRegex(p.stderr, r"recorded by hilsim 0{40}, which kept no resolved config: "
                                   r"what its config leaves out takes this build's \(\w+\) "
                                   r"defaults")

    def test_set_what_if_diverges_at_a_named_tick(self):
        # the same recording replayed with the key changed on the command line, no file edited
        p = hilsim("replay", self.rec, "--set", "physics.gravity=[0, 0, -98.1]", check=4)
        self.assertRegex(p.stdout, r"DIVERGED at tick \d+, t = [0-9.]+ s: "
                                   r"(SHOULDER|ELBOW)\.\w+ recorded")
        p = hilsim("replay", self.rec, "--set", "controller.defaults.kp=50", check=4)
        self.assertIn("DIVERGED at tick", p.stdout)

    def test_set_to_the_recorded_value_is_bit_exact(self):
        # the default gravity and the file's own step, spelled out: nothing changes
        p = hilsim("replay", self.rec, "--set", "physics.gravity=[0, 0, -9.80665]",
                   "--set", "physics.step_s=0.001", check=0)
        self.assertIn("BIT-EXACT", p.stdout)

    def test_set_bad_key_or_value_is_named(self):
        p = hilsim("replay", self.rec, "--set", "physics.frictio=0.3", check=2)
        self.assertIn("--set: physics.frictio=0.3: physics: unknown key 'frictio'", p.stderr)
        p = hilsim("replay", self.rec, "--set", "physics.friction=abc", check=2)
        self.assertIn("physics.friction=abc: physics.friction: expected a number", p.stderr)
        p = hilsim("replay", self.rec, "--set", "physics.friction=-1", check=2)
        self.assertIn("physics.friction=-1: physics.friction", p.stderr)
        p = hilsim("replay", self.rec, "--set", "physics.step_s.x=1", check=2)
        self.assertIn("physics.step_s is not a mapping", p.stderr)
        p = hilsim("replay", self.rec, "--set", "physics", check=2)
        self.assertIn("--set KEY=VALUE", p.stderr)

    def test_run_set_is_recorded_and_replayed(self):
        # run --set: the recording keeps the override beside the unchanged config copy, and
        # the replay applies it (bit-exact); the default back as a replay --set diverges
        rec = os.path.join(self.tmp, "run-set")
        hilsim("run", os.path.join(SRC, "config", "arm2-demo.yaml"), "--no-rt", "--duration",
               "0.2", "--record", rec, "--set", "physics.gravity=[0, 0, -5]", check=0)
        with open(os.path.join(rec, "manifest.json")) as fh:
            self.assertEqual(json.load(fh)["config"]["sets"], ["physics.gravity=[0, 0, -5]"])
        self.assertIn("BIT-EXACT", hilsim("replay", rec, check=0).stdout)
        hilsim("replay", rec, "--set", "physics.gravity=[0, 0, -9.80665]", check=4)
        p = hilsim("sim", os.path.join(SRC, "config", "arm2-demo.yaml"), "--duration", "0.01",
                   "--set", "physics.nope=1", check=2)
        self.assertIn("--set: physics.nope=1: physics: unknown key 'nope'", p.stderr)

    def test_free_root_robot_replays_from_a_checkpoint(self):
        # the standing biped (a free root), rotation set on the command line: the replay of
        # its last two segments places the root at its recorded pose (velocity zero, as it
        # stands) and stays within 5e-3 rad on every joint
        rec = os.path.join(self.tmp, "biped")
        hilsim("run", os.path.join(SRC, "config", "biped-stand.yaml"), "--no-rt", "--duration",
               "1.5", "--record", rec, "--set", "record.rotate_mib=0.2", "--set",
               "record.keep_segments=2", check=0)
        p = hilsim("replay", rec)
        # (the accelerometers differentiate velocity: their first tick after it is off, and
        # the replay says DIVERGED, exit 4)
        self.assertIn(p.returncode, (0, 4), p.stderr)
        self.assertIn("started from the first kept state", p.stdout)
        err = float(re.search(r"max \|q error\| (\S+)", p.stdout).group(1))
        self.assertLess(err, 5e-3)

    def test_csv_and_plot(self):
        out, svg = os.path.join(self.tmp, "r.csv"), os.path.join(self.tmp, "r.svg")
        hilsim("replay", self.rec, "--out", out, "--plot", svg, "--signal", "SHOULDER.q",
               "--signal", "ELBOW.q", check=0)
        with open(out) as fh:
            rows = list(csv.reader(fh))
        self.assertEqual(rows[0], ["time_s", "SHOULDER.q", "SHOULDER.q.replay", "ELBOW.q",
                                   "ELBOW.q.replay"])
        rec = hilsim_record.open_recording(self.rec)
        self.assertEqual(len(rows) - 1, len(rec.rows))
        # the Python reader and the C reader agree on every recorded value, exactly
        self.assertEqual([float(r[1]) for r in rows[1:]], rec.column("SHOULDER.q"))
        self.assertEqual([r[1] for r in rows[1:]], [r[2] for r in rows[1:]])  # bit-exact
        with open(svg) as fh:
            s = fh.read()
        # per signal: recorded, replayed and their difference; the axes labelled
        self.assertTrue(s.startswith("<svg") and s.count("<polyline") == 6)
        self.assertEqual(s.count(">replayed − recorded: 0</text>"), 2)  # bit-exact here
        self.assertEqual(s.count(">rad (slide: m)</text>"), 2)
        self.assertIn(">time since the first recorded tick (s)</text>", s)

    def test_png_plot_decodes_and_differs_where_the_replay_diverges(self):
        same, diverged = os.path.join(self.tmp, "same.png"), os.path.join(self.tmp, "div.png")
        hilsim("replay", self.rec, "--plot", same, "--signal", "SHOULDER.q", "--signal",
               "ELBOW.q", check=0)
        hilsim("replay", self.rec, "--set", "physics.gravity=[0, 0, -30]", "--plot", diverged,
               "--signal", "SHOULDER.q", "--signal", "ELBOW.q", check=4)
        for path in (same, diverged):
            w, h, rows = read_png(path)
            # two panels, each with its difference strip, and the time axis
            self.assertEqual((w, h), (900, 30 + 2 * (180 + 40) + 44))
        # the first panel (SHOULDER.q): the plot area is x 80..880, y 40..190
        gaps = {}
        for path in (same, diverged):
            _, _, rows = read_png(path)
            per_col = []
            for x in range(90, 870, 10):
                blue, red = curve_pixels(rows, x, x + 10, 41, 190)
                self.assertTrue(blue and red, f"{path}: no curve at x {x}")
                per_col.append(min(max(abs(r[0] - b[0]), abs(r[1] - b[1]))
                                   for r in red for b in blue))
            gaps[path] = per_col
        # bit-exact: the dashed replay lies on the recorded curve in every column
        self.assertLessEqual(max(gaps[same]), 2, gaps[same])
        # 3x gravity: together at the start (same initial state), far apart later
        self.assertLessEqual(max(gaps[diverged][:2]), 2, gaps[diverged])
        self.assertGreater(max(gaps[diverged]), 15, gaps[diverged])
        # the difference strip under the first panel (y 204..244): the green trace is flat on
        # the middle line when bit-exact, and leaves it when the replay diverges
        for path, flat in ((same, True), (diverged, False)):
            _, _, rows = read_png(path)
            ys = {y for x in range(300, 870) for y in range(205, 244)
                  if rows[y][x][1] > 120 and rows[y][x][1] > rows[y][x][0] + 50
                  and rows[y][x][1] > rows[y][x][2] + 50}  # right of the label
            self.assertTrue(ys, path)
            if flat:
                self.assertLessEqual(max(ys) - min(ys), 2, (path, sorted(ys)))
            else:
                self.assertGreater(max(ys) - min(ys), 8, (path, sorted(ys)))

    def test_unknown_signal_is_a_usage_error(self):
        p = hilsim("replay", self.rec, "--signal", "NOPE.q", check=2)
        self.assertIn("NOPE.q", p.stderr)

    def test_python_reader_matches_manifest(self):
        rec = hilsim_record.open_recording(self.rec)
        self.assertEqual(len(rec.rows), rec.manifest["ticks"])
        self.assertTrue(rec.manifest["complete"])
        warm = sum(1 for f in rec.flags if f & hilsim_record.STATE_WARMUP)
        self.assertEqual(warm, rec.manifest["warmup_ticks"])
        self.assertTrue(any(e["kind"] == "stop" for e in rec.events))

    def test_existing_folder_is_never_overwritten(self):
        p = hilsim("run", os.path.join(SRC, "config", "arm2-demo.yaml"), "--no-rt",
                   "--duration", "0.05", "--record", self.rec)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("not empty", p.stderr)

    def test_config_key_records_every_run(self):
        parent = os.path.join(self.tmp, "always")
        cfg = os.path.join(self.tmp, "always.yaml")
        with open(os.path.join(SRC, "config", "arm2-demo.yaml")) as fh:
            text = fh.read().replace("../models/", os.path.join(SRC, "models") + "/")
        with open(cfg, "w") as fh:
            fh.write(text + f"\nrecord:\n  enabled: true\n  dir: {parent}\n")
        hilsim("run", cfg, "--no-rt", "--duration", "0.05", check=0)
        runs = os.listdir(parent)
        self.assertEqual(len(runs), 1)
        self.assertRegex(runs[0], r"^arm2-demo-\d{8}T\d{6}Z$")
        hilsim("replay", os.path.join(parent, runs[0]), check=0)

    def test_damaged_state_is_named(self):
        bad = os.path.join(self.tmp, "bad")
        shutil.copytree(self.rec, bad)
        path = os.path.join(bad, "state.bin")
        size = os.path.getsize(path)
        os.truncate(path, size - 3)
        p = hilsim("replay", bad, check=2)
        self.assertRegex(p.stderr, r"state\.bin.*truncated block at byte offset \d+")
        with self.assertRaisesRegex(hilsim_record.RecordingError,
                                    r"state\.bin: truncated block at byte offset \d+"):
            hilsim_record.open_recording(bad)


class SimRecord(unittest.TestCase):
    """`hilsim sim --record`: an offline run (a campaign's run without a controller) is recorded
    whole, however much faster than real time it runs, and replays bit for bit."""

    def test_offline_run_waits_for_the_writer_and_replays_bit_exact(self):
        tmp = tempfile.mkdtemp(prefix="hs-simrec-")
        self.addCleanup(shutil.rmtree, tmp, True)
        rec = os.path.join(tmp, "r")
        # 4000 ticks through a 64-tick ring: the writer naps up to 5 ms when it finds the rings
        # empty, long enough for an offline run to fill 64 slots, so without the run waiting
        # for room ticks would be dropped.
        p = hilsim("sim", os.path.join(SRC, "config", "biped-stand.yaml"), "--scenario",
                   os.path.join(SRC, "scenarios", "biped-side-push.yaml"), "--record", rec,
                   "--set", "record.ring_states=64", "--set", "record.ring_items=1024", check=0)
        self.assertRegex(p.stdout, r"recording: .*/r: 4000 ticks, \d+ frames/commands/events")
        self.assertNotIn("DROPPED", p.stdout)
        r = hilsim_record.open_recording(rec)
        self.assertEqual(len(r.rows), 4000)
        self.assertEqual(r.manifest["clock_mode"], "offline")
        self.assertTrue(r.manifest["complete"])
        q = hilsim("replay", rec, check=0)
        self.assertIn("replayed 4000 ticks", q.stdout)
        self.assertIn("3 of 3 expectations passed", q.stdout)
        self.assertIn("BIT-EXACT", q.stdout)

    def test_what_a_replay_cannot_rebuild_is_refused(self):
        cfg = os.path.join(SRC, "config", "biped-stand.yaml")
        for extra in (["--free"], ["--torque", "R_KNEE=1"]):
            p = hilsim("sim", cfg, "--duration", "0.01", "--record",
                       os.path.join(tempfile.gettempdir(), "hs-never"), *extra, check=2)
            self.assertIn("--record takes a CONFIG run", p.stderr)


CONTROLLER = os.environ.get("HS_LOCKSTEP_CONTROLLER")


@unittest.skipUnless(CONTROLLER and os.path.exists(CONTROLLER or ""), "no lockstep_controller")
class LockstepShm(unittest.TestCase):
    """A lockstep shm run (examples/lockstep_controller commands every joint every tick): it
    does not depend on the host's speed, and its replay is bit-exact."""

    def lockstep_run(self, tmp, *extra, ticks=1000, cfg_extra="", before=None, during=None):
        """A lockstep run of config/arm2-shm.yaml recorded into tmp/ls, the lockstep
        controller commanding every joint every tick; returns (recording, summary).
        before(bench, env): called once the bench is up, before the controller starts (its
        control socket is in tmp: HILSIM_CTL_DIR in env); during(bench, env): once the
        controller runs."""
        rec = os.path.join(tmp, "ls")
        bench = f"arm2-shm-rec-{os.getpid()}"  # its own segment, beside other tests' benches
        env = dict(os.environ, HILSIM_CTL_DIR=tmp)
        cfg = os.path.join(tmp, "arm2-shm.yaml")
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as fh:
            text = fh.read().replace("../models/", os.path.join(SRC, "models") + "/")
        with open(cfg, "w") as fh:
            fh.write(text.replace("name: arm2-shm", f"name: {bench}", 1) + cfg_extra)
        hs = subprocess.Popen([HILSIM, "run", cfg, "--clock", "lockstep", "--no-rt",
                               "--record", rec, *extra], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(600):  # the segment exists once the bench is built
            if os.path.exists(f"/dev/shm/hilsim-{bench}") or hs.poll() is not None:
                break
            time.sleep(0.1)
        if before:
            sock = os.path.join(tmp, f"hilsim-{bench}.ctl")
            for _ in range(600):
                if os.path.exists(sock) or hs.poll() is not None:
                    break
                time.sleep(0.1)
            before(bench, env)
        ctl = subprocess.Popen([CONTROLLER, bench, "--ticks", str(ticks), "--timeout", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if during:
            during(bench, env)
        ctl.stdout, ctl.stderr = ctl.communicate(timeout=300)
        out, err = hs.communicate(timeout=300)
        # with a scenario the run ends with it, and the controller finds the bench gone
        if not extra:
            self.assertEqual(ctl.returncode, 0, ctl.stdout + ctl.stderr)
        self.assertIn(hs.returncode, (0, 5), err)  # 5: the scenario's verdict is FAIL
        self.assertRegex(out, r"recording: .*dropped 0 states, 0 items")
        return rec, out

    def test_lockstep_shm_run_replays_bit_exact(self):
        tmp = tempfile.mkdtemp(prefix="hs-rec-ls-")
        try:
            rec, _ = self.lockstep_run(tmp, "--duration", "1")
            p = hilsim("replay", rec, check=0)
            self.assertRegex(p.stdout, r"\(0 frames, (\d{4,}) shm commands fed\)")
            self.assertIn("BIT-EXACT", p.stdout)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_rotated_away_start_replays_from_a_checkpoint(self):
        """record.keep_segments deleted the run's first segments: the replay starts from the
        first kept state (every joint's q and dq as the initial state) and stays within
        1e-3 rad of the recording on every joint, every tick (what the state records do not
        hold starts afresh: ODE's joint drift, encoder windows, noise streams)."""
        tmp = tempfile.mkdtemp(prefix="hs-rec-rot-")
        try:
            rec, out = self.lockstep_run(tmp, "--duration", "3", ticks=3000,
                                         cfg_extra="record:\n  rotate_mib: 0.1\n"
                                                   "  keep_segments: 2\n")
            self.assertRegex(out, r"in 2 segments")
            self.assertFalse(os.path.exists(os.path.join(rec, "state.bin")))
            with open(os.path.join(rec, "manifest.json")) as fh:
                first = json.load(fh)["segments"][0]
            self.assertGreater(first["index"], 0)
            p = hilsim("replay", rec, check=4)  # not bit-exact, and it says why
            self.assertRegex(p.stdout, r"first \d+ segment\(s\) were deleted .*started from "
                                       rf"the first kept state, tick {first['first_tick']}")
            err = float(re.search(r"max \|q error\| (\S+)", p.stdout).group(1))
            self.assertLess(err, 1e-3)
            # a 0.1 MiB segment holds about 180 ticks here (state, two commands)
            n = int(re.search(r"replayed (\d+) ticks", p.stdout).group(1))
            self.assertGreater(n, 150)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_lockstep_scenario_run_replays_bit_exact(self):
        """scenarios/arm-encoder-stuck.yaml (the elbow encoder stuck for 1 s, 0.5 s after the
        first command) under lockstep: the replay plays the recording's copy of it again, its
        step events match the recorded ones tick for tick, and the state is bit-exact."""
        tmp = tempfile.mkdtemp(prefix="hs-rec-lss-")
        try:
            scen = os.path.join(tmp, "stuck.yaml")  # a copy: the recording must not need it
            shutil.copy(os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml"), scen)
            rec, out = self.lockstep_run(tmp, "--scenario", scen, ticks=4000)
            os.remove(scen)
            with open(os.path.join(rec, "manifest.json")) as fh:
                man = json.load(fh)
            self.assertEqual(man["clock_mode"], "lockstep")
            self.assertEqual(man["scenario"]["copy"], "scenario.yaml")
            self.assertEqual(man["scenario"]["original"]["path"], scen)
            events = [e for e in hilsim_record.open_recording(rec).events
                      if e["kind"] == "scenario"]
            self.assertGreaterEqual(len(events), 2)  # encoder_stuck began and ended, ...
            verdict = re.search(r"verdict: \w+ \((\d+) of (\d+)", out).groups()
            p = hilsim("replay", rec, check=0)
            self.assertIn(f"scenario played again: {verdict[0]} of {verdict[1]} expectations "
                          f"passed; {len(events)} scenario events recorded, {len(events)} "
                          "replayed, identical", p.stdout)
            self.assertIn("BIT-EXACT", p.stdout)
            # without the scenario the replay misses the stuck encoder: the readings part on
            # the step's second tick (its first repeats the reading of that very tick)
            stuck = next(e for e in events if e["text"] == "encoder_stuck")
            p = hilsim("replay", rec, "--no-scenario", check=4)
            # the line names the run's tick only, and the time as the CSV shows it
            m = re.search(r"DIVERGED at tick (\d+), t = ([0-9.]+) s: ", p.stdout)
            r = hilsim_record.open_recording(rec)
            self.assertEqual(int(m.group(1)), r.ticks[stuck["ord"] + 1], p.stdout)
            self.assertAlmostEqual(float(m.group(2)), r.times()[stuck["ord"] + 1], places=6)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_lockstep_live_control_replays_bit_exact(self):
        """Live control during a lockstep run (hilsim ctl): a noise step on the elbow reading
        that starts 0.2 s after the tick that took it, a push on the forearm, and a scenario
        file started live. The recording keeps each step's text and the file (live-step-N.yaml,
        live-scenario-N.yaml) and the tick each was applied at; the replay injects them again
        there and is bit-exact, with the scenario file gone from where it was started. Without
        them (--no-live) the replay diverges: the injections did change the run."""
        tmp = tempfile.mkdtemp(prefix="hs-rec-live-")
        scen = os.path.join(tmp, "stuck.yaml")  # a copy: the recording must not need it
        shutil.copy(os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml"), scen)

        def inject(bench, env):
            for words in (["inject", "{sensor_fault: {kind: noise, joint: ELBOW, value: 0.01}, "
                                     "after_s: 0.2, duration_s: 0.3}"],
                          ["push", "ELBOW", "0", "0", "20", "0.1"],
                          ["scenario", "start", scen]):
                p = subprocess.run([HILSIM, "ctl", bench, *words], capture_output=True,
                                   text=True, env=env, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        try:
            rec, _ = self.lockstep_run(tmp, "--duration", "2", ticks=2000, before=inject)
            os.remove(scen)
            with open(os.path.join(rec, "live-step-1.yaml")) as fh:
                self.assertIn("kind: noise, joint: ELBOW, value: 0.01", fh.read())
            with open(os.path.join(rec, "live-step-2.yaml")) as fh:
                self.assertIn("push:", fh.read())
            # each copy's first line names the run; the scenario's bytes follow as they were
            with open(os.path.join(rec, "manifest.json")) as fh:
                mark = "# hilsim recording, run_id %s: " % json.load(fh)["run_id"]
            with open(os.path.join(rec, "live-step-1.yaml")) as fh:
                self.assertEqual(fh.readline(),
                                 mark + "the step injected by live control\n")
            with open(os.path.join(rec, "live-scenario-3.yaml")) as fh, \
                    open(os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml")) as orig:
                self.assertEqual(fh.readline(),
                                 mark + "the scenario file injected by live control\n")
                self.assertEqual(fh.read(), orig.read())
            live = [e for e in hilsim_record.open_recording(rec).events if e["kind"] == "live"]
            self.assertEqual([(e["a"], e["b"]) for e in live], [(1, 1), (2, 1), (3, 3)])
            # one step starts per tick: the push is applied a tick after the noise step
            self.assertEqual(live[1]["ord"], live[0]["ord"] + 1)
            p = hilsim("replay", rec, check=0)
            self.assertIn("live control: 3 command(s) recorded, 3 injected again", p.stdout)
            self.assertIn("BIT-EXACT", p.stdout)
            # the negative control: the same replay without them parts from the recording
            p = hilsim("replay", rec, "--no-live", check=4)
            self.assertIn("DIVERGED", p.stdout)
            # another run's step put in its place is refused, naming it and both runs
            step2 = os.path.join(rec, "live-step-2.yaml")
            with open(step2) as fh:
                text = fh.read()
            with open(step2, "w") as fh:
                fh.write(text.replace(mark[:-2], mark[:-34] + "0123456789abcdef" * 2, 1))
            p = hilsim("replay", rec, check=2)
            self.assertRegex(p.stderr, r"live-step-2\.yaml:1: run_id 0123456789abcdef0123456789"
                                       r"abcdef in its first line is not the manifest's run_id "
                                       r"[0-9a-f]{32}: a copy of another run")
            with open(step2, "w") as fh:
                fh.write(text)
            # a recording that lost a step's text says which file, rather than diverging
            os.remove(os.path.join(rec, "live-step-1.yaml"))
            p = hilsim("replay", rec, check=2)
            self.assertIn("live-step-1.yaml", p.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_lockstep_live_clear_and_stop_replay_bit_exact(self):
        """Every kind of live command in one run: a stuck elbow reading (the short `fault
        sensor` command), a scenario file started and stopped, and `clear`. Each is recorded
        at the tick that applied it, in the order sent, and the replay, which applies each
        there, is bit-exact. Sent before the controller starts, they all land on the first
        tick and undo each other there (the effect of live steps on a replay is
        test_lockstep_live_control_replays_bit_exact's): this checks every kind's record and
        its path through the replay's control stage."""
        tmp = tempfile.mkdtemp(prefix="hs-rec-livemix-")
        scen = os.path.join(tmp, "stuck.yaml")
        shutil.copy(os.path.join(SRC, "scenarios", "arm-encoder-stuck.yaml"), scen)

        def commands(bench, env):
            for words in (["fault", "sensor", "ELBOW", "stuck"], ["scenario", "start", scen],
                          ["scenario", "stop"], ["clear"]):
                p = subprocess.run([HILSIM, "ctl", bench, *words], capture_output=True,
                                   text=True, env=env, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        try:
            rec, _ = self.lockstep_run(tmp, "--duration", "1", ticks=1000, before=commands)
            live = [e for e in hilsim_record.open_recording(rec).events if e["kind"] == "live"]
            self.assertEqual([(e["a"], e["b"]) for e in live], [(1, 1), (2, 3), (0, 4), (0, 2)])
            self.assertTrue(all(a["ord"] <= b["ord"] for a, b in zip(live, live[1:])))
            p = hilsim("replay", rec, check=0)
            self.assertIn("live control: 4 command(s) recorded, 4 injected again", p.stdout)
            self.assertIn("BIT-EXACT", p.stdout)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


@unittest.skipUnless(KEPT and os.path.isdir(KEPT or ""), "test_record's recording not kept")
class CanRecording(unittest.TestCase):
    """The CAN recording of test_record (an MIT node on a socketpair bus)."""

    def test_python_can_reads_the_log(self):
        if can is None:
            self.skipTest("python3-can not installed")
        path = os.path.join(KEPT, "can-main.log")
        msgs = list(can.CanutilsLogReader(path))
        rec = hilsim_record.open_recording(KEPT)
        mine = rec.frames("main")
        self.assertEqual(len(msgs), len(mine))
        self.assertGreater(len(msgs), 1000)
        for m, f in zip(msgs, mine):
            self.assertEqual(m.arbitration_id, f["id"])
            self.assertEqual(m.is_rx, f["rx"])
            self.assertEqual(bytes(m.data), f["data"])
            self.assertEqual(m.channel, "vcan0")
        self.assertEqual(msgs[0].data[7], 0xFC)  # the boards' MIT "enter" came first
        rx = sum(1 for m in msgs if m.is_rx)
        self.assertTrue(0 < rx < len(msgs))  # both directions, marked
        times = [m.timestamp for m in msgs]
        self.assertEqual(times, sorted(times))

    def test_log_is_tied_to_the_run(self):
        # The log carries no comment line (python-can reads none, above): the manifest holds
        # its size and SHA-256 as written, and both readers check them. Another log put in its
        # place, even one of the same length, is refused naming the file and the field.
        with open(os.path.join(KEPT, "manifest.json")) as fh:
            seg = json.load(fh)["segments"][0]
        path = os.path.join(KEPT, "can-main.log")
        with open(path, "rb") as fh:
            data = fh.read()
        self.assertEqual(seg["can_bytes"]["main"], len(data))
        self.assertEqual(seg["can_sha256"]["main"], hashlib.sha256(data).hexdigest())
        tmp = tempfile.mkdtemp(prefix="hs-rec-log-")
        try:
            d = os.path.join(tmp, "rec")
            shutil.copytree(KEPT, d)
            log = os.path.join(d, "can-main.log")
            # one frame more, as if a later capture were appended
            with open(log, "ab") as fh:
                fh.write(data.split(b"\n")[-2] + b"\n")
            p = hilsim("replay", d, check=2)
            self.assertIn("can-main.log: larger than the %d bytes the manifest's "
                          "segments[0].can_bytes.main says" % len(data), p.stderr)
            with self.assertRaisesRegex(hilsim_record.RecordingError, "can_bytes.main"):
                hilsim_record.open_recording(d)
            # the same length, one data digit changed
            k = data.index(b"#") + 1
            digit = b"0" if data[k:k + 1] != b"0" else b"1"
            with open(log, "wb") as fh:
                fh.write(data[:k] + digit + data[k + 1:])
            pattern = (r"can-main\.log: its SHA-256 [0-9a-f]{64} is not the manifest's "
                       r"segments\[0\]\.can_sha256\.main [0-9a-f]{64}: not the log this run "
                       r"wrote")
            self.assertRegex(hilsim("replay", d, check=2).stderr, pattern)
            with self.assertRaisesRegex(hilsim_record.RecordingError, pattern):
                hilsim_record.open_recording(d)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_import_drives_a_bench_open_loop(self):
        # the kept log as if recorded elsewhere: its MIT commands act on another bench's node
        out = os.path.join(tempfile.mkdtemp(prefix="hs-import-"), "open-loop.csv")
        p = hilsim("replay", "--import", os.path.join(KEPT, "can-main.log"), "--config",
                   os.path.join(SRC, "tests", "canio", "arm2-can-guest.yaml"), "--out", out,
                   "--signal", "SHOULDER.q", check=0)
        self.assertRegex(p.stdout, r"imported .*: \d+ ticks driven open loop")
        with open(out) as fh:
            q = [float(r[1]) for r in list(csv.reader(fh))[1:]]
        self.assertGreater(max(q) - min(q), 0.1)  # the commands moved the shoulder
        shutil.rmtree(os.path.dirname(out))

    def test_reader_agrees_with_manifest(self):
        rec = hilsim_record.open_recording(KEPT)
        self.assertEqual(len(rec.rows), rec.manifest["ticks"])
        self.assertEqual(len(rec.shm), 300)
        # every received frame is counted at the tick that took it
        rx = sum(1 for f in rec.frames("main") if f["rx"])
        self.assertEqual(sum(c[0] for c in rec.rx_counts), rx)
        self.assertTrue(all(c["joint"] == rec.joints.index("ELBOW") for c in rec.shm))


if __name__ == "__main__":
    unittest.main()
