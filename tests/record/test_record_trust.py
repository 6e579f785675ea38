"""Recordings a crash or a hostile file cannot take away or wedge (issue 25), from the outside:
a recording run killed with SIGKILL is replayed up to the crash (C and Python readers); files
that are not files (a FIFO, a link to /dev/zero), names that leave the folder, fields out of
range and another run's manifest are refused in bounded time with the field named; a FIFO
planted at a bench's /dev/shm name neither hangs `hilsim run` nor `hilsim shm list/remove`.
Every wait is on an event (a file's growth, a process's exit) with a generous timeout that
only a hang reaches."""
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

SRC = os.environ.get("HS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("HS_BUILD_DIR", os.path.join(SRC, "build"))
HILSIM = os.path.join(BUILD, "hilsim")
sys.path.insert(0, os.path.join(SRC, "python"))
import hilsim_record  # noqa: E402

HANG = 60  # s: only a hang takes this long, even beside stress-ng --cpu 2


def hilsim(*args, check=None, timeout=HANG):
    p = subprocess.run([HILSIM, *args], capture_output=True, text=True, timeout=timeout)
    if check is not None and p.returncode != check:
        raise AssertionError(f"hilsim {' '.join(args)}: exit {p.returncode}, want {check}\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


BLOCK = struct.Struct("<IIII")  # a version 3 block: magic, records, stored bytes, CRC


def blocks(path):
    """(offset, records) of each whole block of a version 3 binary file (80-byte header)."""
    with open(path, "rb") as fh:
        data = fh.read()
    out, off = [], 80
    while off + BLOCK.size <= len(data):
        _, nrec, stored, _ = BLOCK.unpack_from(data, off)
        if off + BLOCK.size + stored > len(data):
            break
        out.append((off, nrec))
        off += BLOCK.size + stored
    return out


def salvaged(path):
    """The Python reader's recovered recording, warnings kept."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rec = hilsim_record.open_recording(path)
    return rec, [str(x.message) for x in w
                 if issubclass(x.category, hilsim_record.RecordingWarning)]


def csv_rows(path):
    """The recorded columns of `hilsim replay --out` (every other column is .replay)."""
    with open(path) as fh:
        head = fh.readline().rstrip("\n").split(",")
        cols = [i for i, h in enumerate(head) if i and not h.endswith(".replay")]
        return [[float(v[i]) for i in cols] for v in (ln.rstrip("\n").split(",") for ln in fh)]


def kill_mid_run(rec, *sets, ticks=1500):
    """`hilsim run --record` killed with SIGKILL once the writer has flushed `ticks` ticks
    (the event: the Python reader recovers that many; the run goes on meanwhile)."""
    args = [HILSIM, "run", os.path.join(SRC, "config", "arm2-demo.yaml"), "--no-rt",
            "--record", rec]
    for kv in sets:
        args += ["--set", kv]
    hs = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline and hs.poll() is None:
        time.sleep(0.1)
        try:
            if len(salvaged(rec)[0].ticks) >= ticks:
                break
        except (hilsim_record.RecordingError, OSError, KeyError, ValueError):
            pass  # the manifest is being written: not yet
    os.kill(hs.pid, signal.SIGKILL)
    hs.wait(timeout=HANG)


class CrashedRecording(unittest.TestCase):
    """`hilsim run --record` killed with SIGKILL mid-run: every whole tick is replayed, by C and
    Python alike (compressed blocks, the default)."""

    SETS = ()

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hs-rec-crash-")
        cls.rec = os.path.join(cls.tmp, "crash")
        kill_mid_run(cls.rec, *cls.SETS)
        cls.py, cls.warns = salvaged(cls.rec)
        cls.whole = len(cls.py.ticks)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_manifest_says_incomplete(self):
        with open(os.path.join(self.rec, "manifest.json")) as fh:
            m = json.load(fh)
        self.assertIs(m["complete"], False)
        self.assertEqual(m["format_version"], 3)
        self.assertEqual(m["compression"]["codec"], "none" if self.SETS else "zstd")
        self.assertGreaterEqual(self.whole, 1500)

    def test_replay_recovers_every_whole_tick_bit_exact(self):
        out = os.path.join(self.tmp, "rows.csv")
        p = hilsim("replay", self.rec, "--out", out, check=0)
        self.assertIn("INCOMPLETE", p.stdout)
        m = re.search(r"replayed (\d+) ticks", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual(int(m.group(1)), self.whole)
        self.assertIn("BIT-EXACT", p.stdout)
        # the Python reader recovered the same ticks, value for value
        self.assertEqual(csv_rows(out), self.py.rows)
        if self.py.damage:
            self.assertRegex(p.stderr, rf"{self.whole} whole ticks recovered")

    def test_half_written_block_is_salvaged_with_a_warning(self):
        # what a crash in the middle of a write leaves: the last block cut short
        cut = os.path.join(self.tmp, "cut")
        shutil.rmtree(cut, ignore_errors=True)
        shutil.copytree(self.rec, cut)
        state = os.path.join(cut, "state.bin")
        blks = blocks(state)
        self.assertGreaterEqual(len(blks), 2)
        last_off, last_n = blks[-1]
        os.truncate(state, os.path.getsize(state) - 5)
        n = sum(k for _, k in blks) - last_n
        p = hilsim("replay", cut, check=0)
        self.assertRegex(p.stderr, rf"WARNING: recording .*: {n} whole ticks recovered "
                                   rf"\(up to tick \d+\); the damage starts at .*state\.bin: "
                                   rf"truncated block at byte offset {last_off}")
        self.assertIn(f"replayed {n} ticks", p.stdout)
        self.assertIn("BIT-EXACT", p.stdout)
        rec, warns = salvaged(cut)
        self.assertEqual(len(rec.ticks), n)
        self.assertTrue(any(f"{n} whole ticks recovered" in w for w in warns), warns)
        self.assertIn(f"byte offset {last_off}", rec.damage)
        self.assertEqual(rec.rows, self.py.rows[:n])

    def test_a_finished_recording_cut_short_is_an_error(self):
        done = os.path.join(self.tmp, "done")
        shutil.rmtree(done, ignore_errors=True)
        shutil.copytree(self.rec, done)
        mpath = os.path.join(done, "manifest.json")
        with open(mpath) as fh:
            m = json.load(fh)
        m["complete"] = True
        with open(mpath, "w") as fh:
            json.dump(m, fh)
        p = hilsim("replay", done, check=2)
        # the crash left the segment's header open: a complete run's never is
        self.assertRegex(p.stderr, r"state\.bin: never closed \(records at byte offset 56")
        with self.assertRaisesRegex(hilsim_record.RecordingError, "never closed"):
            hilsim_record.open_recording(done)


class CrashedUncompressedRecording(CrashedRecording):
    """The same with record.compression: none (the blocks hold the records as they are)."""

    SETS = ("record.compression=none",)


class CrashedBeforeTheManifest(unittest.TestCase):
    """A crash between the writer creating a segment's files and rewriting the manifest: the
    segment is found by the naming rule and the run id, with a warning; a file of another run
    put there is not taken."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hs-rec-unlisted-")
        cls.rec = os.path.join(cls.tmp, "rot")
        kill_mid_run(cls.rec, "record.rotate_s=0.3", ticks=1000)
        cls.py, _ = salvaged(cls.rec)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def unlist_last(self, name):
        d = os.path.join(self.tmp, name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.rec, d)
        mpath = os.path.join(d, "manifest.json")
        with open(mpath) as fh:
            m = json.load(fh)
        self.assertGreaterEqual(len(m["segments"]), 3)
        last = m["segments"].pop()
        with open(mpath, "w") as fh:
            json.dump(m, fh)
        return d, last

    def test_unlisted_segment_is_read_with_a_warning(self):
        d, last = self.unlist_last("unlisted")
        p = hilsim("replay", d, check=0)
        self.assertIn(f"WARNING: recording {d}: segment {last['index']} ({last['state']}) is "
                      f"not in the manifest", p.stderr)
        self.assertIn(f"replayed {len(self.py.ticks)} ticks", p.stdout)
        self.assertIn("BIT-EXACT", p.stdout)
        rec, warns = salvaged(d)
        self.assertEqual(rec.rows, self.py.rows)
        self.assertTrue(any("is not in the manifest" in w for w in warns), warns)

    def test_another_runs_segment_is_refused(self):
        d, last = self.unlist_last("foreign")
        other = os.path.join(self.tmp, "other")
        hilsim("run", os.path.join(SRC, "config", "arm2-demo.yaml"), "--no-rt", "--duration",
               "0.2", "--record", other, check=0, timeout=300)
        shutil.copy(os.path.join(other, "state.bin"), os.path.join(d, last["state"]))
        p = hilsim("replay", d, check=2)
        self.assertRegex(p.stderr, rf"{re.escape(last['state'])}: run_id [0-9a-f]{{32}} at byte "
                                   rf"offset 32 is not the manifest's run_id")
        with self.assertRaisesRegex(hilsim_record.RecordingError, "a file of another run"):
            hilsim_record.open_recording(d)


class CopiesCarryTheRunId(unittest.TestCase):
    """The config and scenario copies a recording keeps begin with a YAML comment naming the run
    (its manifest's run_id); the manifest holds the SHA-256 of each copy's bytes as written and
    of each file as the run read it. Read back here; another run's copy or an edited one is
    refused by `hilsim replay`, naming the file, rather than replayed as the run's."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hs-rec-copies-")
        cls.scen = os.path.join(cls.tmp, "s.yaml")
        with open(cls.scen, "w") as fh:
            fh.write("scenario: {name: copies, duration_s: 0.2}\nsteps:\n"
                     "  - {name: near, at_s: 0.1,\n"
                     "     expect: {kind: joint_near, joint: ELBOW, value: 0.6, tolerance: 0.2}}\n")
        cls.cfg = os.path.join(SRC, "config", "arm2-demo.yaml")
        cls.recs = []
        for name in ("one", "two"):
            rec = os.path.join(cls.tmp, name)
            hilsim("sim", cls.cfg, "--scenario", cls.scen, "--record", rec, check=0, timeout=300)
            cls.recs.append(rec)
        with open(os.path.join(cls.recs[0], "manifest.json")) as fh:
            cls.m = json.load(fh)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def read(self, name, rec=None):
        with open(os.path.join(rec or self.recs[0], name), "rb") as fh:
            return fh.read()

    def test_first_lines_name_the_run(self):
        mark = "# hilsim recording, run_id %s: " % self.m["run_id"]
        for name, what in (("config.yaml", "the config file as the run read it"),
                           ("config-resolved.yaml", "the config as this run resolved it"),
                           ("scenario.yaml", "the scenario file as the run read it")):
            with self.subTest(name=name):
                first = self.read(name).split(b"\n", 1)[0].decode()
                self.assertEqual(first, mark + what + " (manifest.json says the rest)")

    def test_manifest_hashes_the_bytes_written(self):
        c, sc = self.m["config"], self.m["scenario"]
        for name, sha in (("config.yaml", c["copy_sha256"]),
                          ("config-resolved.yaml", c["resolved_sha256"]),
                          ("scenario.yaml", sc["copy_sha256"])):
            self.assertEqual(hashlib.sha256(self.read(name)).hexdigest(), sha, name)
        # after its first line, a copy is the file as the run read it, whose hash is kept too
        for name, entry, orig in (("config.yaml", c, self.cfg), ("scenario.yaml", sc, self.scen)):
            with open(orig, "rb") as fh:
                data = fh.read()
            self.assertEqual(self.read(name).split(b"\n", 1)[1], data)
            self.assertEqual(entry["original"]["sha256"], hashlib.sha256(data).hexdigest())

    def test_the_recording_replays(self):
        p = hilsim("replay", self.recs[0], check=0)
        self.assertIn("BIT-EXACT", p.stdout)

    def test_another_runs_copy_is_refused(self):
        d = os.path.join(self.tmp, "swapped")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.recs[0], d)
        shutil.copy(os.path.join(self.recs[1], "scenario.yaml"), os.path.join(d, "scenario.yaml"))
        p = hilsim("replay", d, check=2)
        self.assertRegex(p.stderr, r"scenario\.yaml:1: run_id [0-9a-f]{32} in its first line is "
                                   r"not the manifest's run_id %s: a copy of another run"
                         % self.m["run_id"])
        self.assertNotIn("BIT-EXACT", p.stdout)

    def test_an_edited_copy_is_refused(self):
        for name, key in (("config.yaml", "config.copy_sha256"),
                          ("config-resolved.yaml", "config.resolved_sha256"),
                          ("scenario.yaml", "scenario.copy_sha256")):
            with self.subTest(name=name):
                d = os.path.join(self.tmp, "edited")
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(self.recs[0], d)
                with open(os.path.join(d, name), "ab") as fh:
                    fh.write(b"# edited after the run\n")
                p = hilsim("replay", d, check=2)
                self.assertRegex(p.stderr, r"%s: its SHA-256 [0-9a-f]{64} is not the "
                                           r"manifest's %s [0-9a-f]{64}: the copy changed since "
                                           r"the run" % (re.escape(name), re.escape(key)))


class HostileRecording(unittest.TestCase):
    """Files and manifests a curious user could plant in a recording folder."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hs-rec-hostile-")
        cls.rec = os.path.join(cls.tmp, "good")
        cls.other = os.path.join(cls.tmp, "other")
        cfg = os.path.join(SRC, "config", "arm2-demo.yaml")
        hilsim("run", cfg, "--no-rt", "--duration", "0.3", "--record", cls.rec, check=0,
               timeout=300)
        hilsim("run", cfg, "--no-rt", "--duration", "0.3", "--record", cls.other, check=0,
               timeout=300)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def copy(self, name):
        d = os.path.join(self.tmp, name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.rec, d)
        return d

    def edit_manifest(self, d, fn):
        mpath = os.path.join(d, "manifest.json")
        with open(mpath) as fh:
            m = json.load(fh)
        fn(m)
        with open(mpath, "w") as fh:
            json.dump(m, fh)

    def refused(self, d, pattern):
        t0 = time.monotonic()
        p = hilsim("replay", d, check=2)
        self.assertLess(time.monotonic() - t0, HANG)
        self.assertRegex(p.stderr, pattern)
        self.assertNotIn("BIT-EXACT", p.stdout)
        return p

    def test_the_good_one_replays(self):
        self.assertIn("BIT-EXACT", hilsim("replay", self.rec, check=0).stdout)

    def test_fifos_in_place_of_files(self):
        for f in ("state.bin", "manifest.json", "config.yaml", "config-resolved.yaml",
                  "events.bin"):
            d = self.copy("fifo")
            os.remove(os.path.join(d, f))
            os.mkfifo(os.path.join(d, f))
            self.refused(d, rf"{re.escape(f)}.*not a regular file")
            if f.endswith((".bin", ".json")):  # the Python reader reads no config
                with self.assertRaises(hilsim_record.RecordingError):
                    hilsim_record.open_recording(d)

    def test_link_to_dev_zero(self):
        d = self.copy("zero")
        os.remove(os.path.join(d, "state.bin"))
        os.symlink("/dev/zero", os.path.join(d, "state.bin"))
        self.refused(d, r"state\.bin.*symbolic link")
        with self.assertRaises(hilsim_record.RecordingError):
            hilsim_record.open_recording(d)

    def test_segment_names_stay_in_the_folder(self):
        d = self.copy("escape")
        self.edit_manifest(d, lambda m: m["segments"][0].update(state="../../../../etc/passwd"))
        self.refused(d, r"segments\[0\]\.state: '\.\./\.\./\.\./\.\./etc/passwd' is not this "
                        r"segment's file")
        with self.assertRaisesRegex(hilsim_record.RecordingError, "not a file name"):
            hilsim_record.open_recording(d)
        d = self.copy("escape2")
        self.edit_manifest(d, lambda m: m["config"].update(resolved="../../../etc/passwd"))
        self.refused(d, r"config\.resolved: not a file name in the recording's folder")

    def test_fields_out_of_range(self):
        cases = [
            (lambda m: m.update(period_ns=0), r"period_ns: not an integer"),
            (lambda m: m["segments"][0].update(first_tick=1e308),
             r"segments\[0\]\.first_tick: not a non-negative integer"),
            (lambda m: m["segments"][0].update(first_tick=7),
             r"segments\[0\]\.first_tick 7: state\.bin begins at tick 0"),
            (lambda m: m.update(bench="b" * (50 << 20)), r"bench: not a name of at most"),
            (lambda m: m.update(ticks=m["ticks"] + 5), r"ticks: the manifest says"),
            (lambda m: m.update(segments=[dict(m["segments"][0], index=i)
                                          for i in range(100000)]),
             r"segments\[1\]\.state: 'state\.bin' is not this segment's file \(state\.1\.bin\)"),
        ]
        for fn, pattern in cases:
            with self.subTest(pattern=pattern):
                d = self.copy("field")
                self.edit_manifest(d, fn)
                self.refused(d, pattern)

    def test_another_runs_manifest(self):
        d = self.copy("swapped")
        shutil.copy(os.path.join(self.other, "manifest.json"), os.path.join(d, "manifest.json"))
        # the copies' first line names this run, not the manifest's (checked first); else the
        # other run's counts may refuse a file (it is larger than they say), or its run id
        self.refused(d, r"(config\.yaml:1: run_id [0-9a-f]{32} in its first line is not the "
                        r"manifest's run_id|state\.bin: (run_id [0-9a-f]{32} at byte offset 32 "
                        r"is not the manifest's run_id|larger than the \d+ bytes the manifest's "
                        r"segments\[0\]\.bytes\.state says))")
        # recorded at the same wall-clock moment (or under a clock stepped back): the times
        # agree, the run id still tells them apart
        with open(os.path.join(self.rec, "manifest.json")) as fh:
            mine = json.load(fh)
        self.edit_manifest(d, lambda m: m.update(
            start_realtime_ns=mine["start_realtime_ns"], end_realtime_ns=mine["end_realtime_ns"],
            ticks=mine["ticks"], segments=mine["segments"]))
        self.refused(d, r"(config\.yaml:1|state\.bin): run_id [0-9a-f]{32} (at byte offset 32|"
                        r"in its first line) is not the manifest's run_id")
        # without the copies (the Python reader reads none), the binary files' run id
        for name in ("config.yaml", "config-resolved.yaml"):
            os.remove(os.path.join(d, name))
        self.edit_manifest(d, lambda m: m["config"].pop("resolved"))
        self.edit_manifest(d, lambda m: m["config"].pop("copy"))
        self.refused(d, r"state\.bin: run_id [0-9a-f]{32} at byte offset 32 is not the "
                        r"manifest's run_id")
        with self.assertRaisesRegex(hilsim_record.RecordingError,
                                    r"state\.bin: run_id .* a file of another run"):
            hilsim_record.open_recording(d)

    def test_another_runs_file(self):
        d = self.copy("foreignfile")
        shutil.copy(os.path.join(self.other, "events.bin"), os.path.join(d, "events.bin"))
        self.refused(d, r"events\.bin: run_id [0-9a-f]{32} at byte offset 32 is not the "
                        r"manifest's run_id")
        with self.assertRaisesRegex(hilsim_record.RecordingError, r"events\.bin: run_id"):
            hilsim_record.open_recording(d)

    def test_a_segment_is_read_no_further_than_its_counts(self):
        d = self.copy("grown")
        with open(os.path.join(d, "state.bin"), "ab") as fh:
            fh.write(b"\0" * 4096)
        pattern = (r"state\.bin: larger than the \d+ bytes the manifest's "
                   r"segments\[0\]\.bytes\.state says")
        self.refused(d, pattern)
        with self.assertRaisesRegex(hilsim_record.RecordingError, pattern):
            hilsim_record.open_recording(d)
        # without the manifest's bound, the header's own counts refuse it
        self.edit_manifest(d, lambda m: m["segments"][0].pop("bytes"))
        pattern = (r"state\.bin: larger than the \d+ bytes its header says \(body_bytes at "
                   r"byte offset 64\)")
        self.refused(d, pattern)
        with self.assertRaisesRegex(hilsim_record.RecordingError, pattern):
            hilsim_record.open_recording(d)
        d = self.copy("recount")
        self.edit_manifest(d, lambda m: m["segments"][0]["records"].update(
            state=m["segments"][0]["records"]["state"] + 1))
        self.refused(d, r"segments\[0\]\.records\.state \d+: state\.bin holds \d+")


    def test_python_without_zstandard_says_what_it_needs(self):
        code = ("import sys; sys.modules['zstandard'] = None; "
                f"sys.path.insert(0, {os.path.join(SRC, 'python')!r}); import hilsim_record; "
                f"hilsim_record.open_recording({self.rec!r})")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=HANG)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("compressed with zstd: reading it needs the zstandard module (Debian: "
                      "python3-zstandard)", p.stderr)


def to_version_2(v3, v2):
    """A version 2 recording from an uncompressed version 3 one, by the documented layouts
    (src/record/README.md): each binary file's 32-byte header then its records bare; the
    manifest without run_id, compression and the per-segment counts."""
    shutil.copytree(v3, v2)
    mpath = os.path.join(v2, "manifest.json")
    with open(mpath) as fh:
        m = json.load(fh)
    for seg in m["segments"]:
        for key in ("state", "shm", "events"):
            path = os.path.join(v2, seg[key])
            with open(path, "rb") as fh:
                data = fh.read()
            head = bytearray(data[:32])
            struct.pack_into("<II", head, 8, 2, 32)
            body = b""
            for off, _ in blocks(path):
                magic, _, stored, _ = BLOCK.unpack_from(data, off)
                assert magic == 0x30425348, "compressed: record with record.compression=none"
                body += data[off + BLOCK.size:off + BLOCK.size + stored]
            with open(path, "wb") as fh:
                fh.write(bytes(head) + body)
            seg.pop("records", None)
            seg.pop("bytes", None)
    m["format_version"] = 2
    for k in ("run_id", "compression", "bytes_uncompressed"):
        m.pop(k, None)
    with open(mpath, "w") as fh:
        json.dump(m, fh)


class Version2StillReads(unittest.TestCase):
    """A version 2 recording (made from a fresh uncompressed one by the documented layout) is
    replayed bit-exact and read by Python to the same rows."""

    def test_v2(self):
        tmp = tempfile.mkdtemp(prefix="hs-rec-v2-")
        try:
            v3, v2 = os.path.join(tmp, "v3"), os.path.join(tmp, "v2")
            hilsim("run", os.path.join(SRC, "config", "arm2-demo.yaml"), "--no-rt",
                   "--duration", "0.3", "--record", v3, "--set", "record.compression=none",
                   check=0, timeout=300)
            to_version_2(v3, v2)
            with open(os.path.join(v2, "state.bin"), "rb") as fh:
                self.assertEqual(struct.unpack_from("<II", fh.read(16), 8), (2, 32))
            p = hilsim("replay", v2, check=0)
            self.assertIn("BIT-EXACT", p.stdout)
            self.assertNotIn("WARNING", p.stderr)
            self.assertEqual(hilsim_record.open_recording(v2).rows,
                             hilsim_record.open_recording(v3).rows)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class PlantedShmFifo(unittest.TestCase):
    """A FIFO at /dev/shm/hilsim-BENCH (the directory is 1777: any local user can make one)."""

    def setUp(self):
        self.bench = f"trust-fifo-{os.getpid()}"
        self.path = f"/dev/shm/hilsim-{self.bench}"
        os.mkfifo(self.path)
        self.tmp = tempfile.mkdtemp(prefix="hs-shm-fifo-")

    def tearDown(self):
        os.unlink(self.path)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_shm_list_and_remove(self):
        p = hilsim("shm", "list", check=0)
        self.assertRegex(p.stdout, rf"{re.escape(self.bench)} .*not a regular file")
        p = hilsim("shm", "remove", self.bench, check=2)  # bad input, not a failure to act
        self.assertIn("not a regular file", p.stderr)
        self.assertTrue(os.path.exists(self.path))  # a foreign file is left alone

    def test_run_refuses_without_hanging(self):
        with open(os.path.join(SRC, "config", "arm2-shm.yaml")) as fh:
            text = fh.read().replace("../models/", os.path.join(SRC, "models") + "/")
        cfg = os.path.join(self.tmp, "arm2-shm.yaml")
        with open(cfg, "w") as fh:
            fh.write(text.replace("name: arm2-shm", f"name: {self.bench}", 1))
        env = dict(os.environ, HILSIM_CTL_DIR=self.tmp)
        p = subprocess.run([HILSIM, "run", cfg, "--no-rt", "--duration", "1"],
                           capture_output=True, text=True, timeout=HANG, env=env)
        self.assertEqual(p.returncode, 1, p.stderr)  # as test_run_startup_waits: cannot serve
        self.assertRegex(p.stderr, rf"hilsim-{re.escape(self.bench)} already exists .*not a "
                                   r"regular file")


class PlantedMeshFifo(unittest.TestCase):
    """A collision mesh (or an Inline, or an OBJ's .mtl) that is a FIFO: `hilsim model` refuses
    it at once. (A FIFO swapped in after the check cannot hang assimp: it gets the bytes read
    from the one descriptor that was checked, src/model/urdf_mesh.c.)"""

    def test_fifo_mesh_and_inline(self):
        tmp = tempfile.mkdtemp(prefix="hs-mesh-fifo-")
        try:
            os.mkfifo(os.path.join(tmp, "link.stl"))
            urdf = os.path.join(tmp, "r.urdf")
            with open(urdf, "w") as fh:
                fh.write('<robot name="r"><link name="base"><inertial><mass value="1"/>'
                         '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
                         '</inertial><collision><geometry><mesh filename="link.stl"/>'
                         '</geometry></collision></link></robot>\n')
            p = hilsim("model", urdf)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertRegex(p.stderr, r"mesh .*link\.stl: not a regular file")
            # an OBJ's material library that is a FIFO: refused, naming it (a regular one,
            # or none at all, loads: collision needs no material)
            with open(os.path.join(tmp, "cube.obj"), "w") as fh:
                fh.write("mtllib cube.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                         "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
            os.mkfifo(os.path.join(tmp, "cube.mtl"))
            obj = os.path.join(tmp, "o.urdf")
            with open(obj, "w") as fh:
                fh.write(open(urdf).read().replace("link.stl", "cube.obj"))
            p = hilsim("model", obj)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertRegex(p.stderr, r"mesh .*cube\.obj: material library .*cube\.mtl: not a "
                                       r"regular file")
            os.unlink(os.path.join(tmp, "cube.mtl"))
            hilsim("model", obj, check=0)
            with open(os.path.join(tmp, "cube.mtl"), "w") as fh:
                fh.write("newmtl m\nKd 1 0 0\n")
            hilsim("model", obj, check=0)
            os.mkfifo(os.path.join(tmp, "part.wrl"))
            wrl = os.path.join(tmp, "m.wrl")
            with open(wrl, "w") as fh:
                fh.write('#VRML V2.0 utf8\nInline { url "part.wrl" }\n')
            p = hilsim("model", wrl)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("not a regular file", p.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


URDF = ('<robot name="r"><link name="base"><inertial><mass value="{mass}"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>'
        '<collision><geometry>{geom}</geometry></collision></link></robot>\n')


class ModelValidation(unittest.TestCase):
    """`hilsim model` refuses what `hilsim sim` refuses, through the same world checks."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hs-model-check-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, **kw):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as fh:
            fh.write(URDF.format(**{"mass": 1, "izz": 0.1, "geom": '<box size="1 1 1"/>',
                                    **kw}))
        return path

    def both_refuse(self, path, pattern):
        m = hilsim("model", path)
        s = hilsim("sim", "--model", path, "--duration", "0.01")
        for p in (m, s):
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertRegex(p.stderr, pattern)

    def test_mass_1e308(self):
        self.both_refuse(self.write("heavy.urdf", mass="1e308"),
                         r"diverges at warm-up step 1 of 10: link base .* not finite")

    def test_nan_and_inf_vertices(self):
        for bad in ("nan", "inf"):
            with open(os.path.join(self.tmp, f"{bad}.obj"), "w") as fh:
                fh.write(f"v 0 0 0\nv 1 0 0\nv 0 1 {bad}\nv 0 0 1\n"
                         "f 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n")
            path = self.write(f"{bad}.urdf", geom=f'<mesh filename="{bad}.obj"/>')
            self.both_refuse(path, r"link 'base': mesh needs vertices, triangles")

    def test_triangle_inequality_warns(self):
        p = hilsim("model", self.write("tri.urdf", izz=0.5), check=0)
        self.assertRegex(p.stderr, r"warning: .*tri\.urdf:1: link 'base': inertia violates the "
                                   r"triangle inequality \(principal moments 0\.1, 0\.1, 0\.5")
        p = hilsim("model", self.write("ok.urdf", izz=0.2), check=0)  # 0.1 + 0.1 = 0.2: a disc
        self.assertNotIn("triangle", p.stderr)


class HugeConfig(unittest.TestCase):
    """A config just under the 4 MiB limit made of tiny values ("1,1,1,...") is refused at its
    node count before libyaml builds a 2-million-node document (it cost 442 MB, 353 MB here)."""

    def test_refused_with_bounded_memory(self):
        tmp = tempfile.mkdtemp(prefix="hs-big-cfg-")
        try:
            with open(os.path.join(SRC, "config", "arm2-demo.yaml")) as fh:
                base = fh.read().replace("../models/", os.path.join(SRC, "models") + "/")
            path = os.path.join(tmp, "big.yaml")
            head = base + "\nx_pad: ["
            n = (4 * 1024 * 1024 - 4096 - len(head)) // 2
            with open(path, "w") as fh:
                fh.write(head + "1," * n + "1]\n")
            # The peak RSS of hilsim alone: a child keeps its parent's high-water mark across
            # exec, so it is started from a small fresh interpreter, which reports wait4's.
            probe = ("import os, subprocess, sys\n"
                     "c = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL,"
                     " stderr=subprocess.PIPE)\n"
                     "err = c.stderr.read()\n"
                     "_, st, ru = os.wait4(c.pid, 0)\n"
                     "sys.stderr.write(err.decode())\n"
                     "print(os.waitstatus_to_exitcode(st), ru.ru_maxrss)\n")
            p = subprocess.run([sys.executable, "-c", probe, HILSIM, "config", "check", path],
                               capture_output=True, text=True, timeout=HANG)
            code, peak_kb = map(int, p.stdout.split())
            self.assertEqual(code, 2)
            self.assertRegex(p.stderr, r"big\.yaml:\d+:\d+: more than 100000 values, mappings "
                                       r"and lists")
            self.assertLess(peak_kb, 100 * 1024)  # kB; before the node limit: 353 MB
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
