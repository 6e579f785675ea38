#!/usr/bin/env python3
"""hilsim campaign end to end: real child benches (`hilsim run --clock lockstep`) with the example
controller (examples/pd_controller) over real shared memory, and `hilsim sim` runs without one.

  - a run's result is the same bytes whatever the worker count (-j2 against -j1);
  - a rerun resumes: finished runs are skipped, not run again;
  - two shards run apart merge to the local run's summary.json and junit.xml, byte for byte;
  - a failing run is recorded and `hilsim replay` reproduces it BIT-EXACT; a passing run's
    recording is dropped (record: failures);
  - a run whose controller never attaches hits the time limit: an ERROR, its processes,
    segment and socket gone, the campaign goes on; a controller that crashes is an ERROR too;
  - bad campaign files name file, line and field; a bad --set key or placeholder fails at once.

Lockstep: the bench waits for the controller every tick, so verdicts do not depend on the host's
load. Environment (set by ctest): HS_HILSIM, HS_SOURCE_DIR, HS_PD_CONTROLLER."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

SRC = os.environ["HS_SOURCE_DIR"]
HILSIM = os.environ["HS_HILSIM"]

SCENARIO = """scenario:
  name: push
  duration_s: 1.5
steps:
  - name: push
    at_s: 0.3
    duration_s: 0.2
    push: {link: WAIST, force_n: [0, ${force_n}, 0]}
  - name: stays_up
    at_s: 0
    duration_s: 1.5
    expect: {kind: link_above, link: WAIST, value: 0.6, hold: always}
"""


def campaign(tmp, controller=True, extra="", params=None, limit=300, runs=1):
    with open(os.path.join(tmp, "push.yaml"), "w") as f:
        f.write(SCENARIO)
    ctl = ("  controller: ['${examples}/pd_controller', '${bench}', '1000000', '0', '0', '%s']\n"
           % os.path.join(SRC, "config", "biped-shm.gains")) if controller is True else (
               "  controller: %s\n" % controller if controller else "")
    cfg = "biped-shm.yaml" if controller else "biped-stand.yaml"
    text = ("campaign:\n  name: t\n  config: %s\n  scenario: push.yaml\n%s"
            "  time_limit_s: %d\n  runs_per_cell: %d\n  seed: 7\n%s"
            "parameters:\n%s" % (os.path.join(SRC, "config", cfg), ctl, limit, runs, extra,
                                 params or "  force_n: {list: [30, 400]}\n"))
    path = os.path.join(tmp, "c.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def run(*args, timeout=600):
    return subprocess.run([HILSIM, "campaign"] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def results(out):
    return {os.path.basename(os.path.dirname(p)): read(p, "rb")
            for p in glob.glob(os.path.join(out, "runs", "*", "run.json"))}


class Campaign(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def leftovers(self):
        return glob.glob("/dev/shm/hilsim-hc*") + glob.glob("/tmp/hilsim-hc*.ctl")

    def test_reproducible_resumable_sharded_and_replayable(self):
        c = campaign(self.tmp, params="  force_n: {list: [30, 400]}\n  jitter: {uniform: [0, 1]}\n",
                     runs=2)
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        ra = run("run", c, "--out", a, "-j", "2")
        print(ra.stdout, ra.stderr[-2000:])
        summary = json.loads(read(os.path.join(a, "summary.json")))
        self.assertEqual(summary["runs"], 4)
        # 30 N leaves it standing, 400 N for 0.2 s throws it over: a verdict each way.
        self.assertEqual((summary["passed"], summary["failed"], summary["errors"]), (2, 2, 0))
        self.assertEqual(ra.returncode, 5, "a failed run is exit 5")
        self.assertEqual([c_["axes"] for c_ in summary["cells"]],
                         [{"force_n": "30"}, {"force_n": "400"}])
        self.assertIn("pass rate", ra.stdout)
        t0 = time.monotonic()
        rb = run("run", c, "--out", b, "-j", "1", "--quiet")
        elapsed = time.monotonic() - t0
        self.assertEqual(results(a), results(b), "a run's result depends on the worker count")
        # timing.json: one key, wall_s, to the millisecond; with -j1 the runs ran one after the
        # other inside the campaign this test timed, so their wall times add up to less.
        walls = []
        for p in sorted(glob.glob(os.path.join(b, "runs", "*", "timing.json"))):
            text = read(p)
            self.assertTrue(text.endswith("}\n"), p)
            pairs = json.loads(text, object_pairs_hook=lambda kv: kv)
            self.assertEqual([k for k, _ in pairs], ["wall_s"], p)
            wall = pairs[0][1]
            self.assertIsInstance(wall, float, p)
            self.assertAlmostEqual(wall, round(wall, 3), places=9, msg=p)
            self.assertGreater(wall, 0, p)
            walls.append(wall)
        self.assertEqual(len(walls), 4)
        self.assertLessEqual(sum(walls), elapsed + 0.002, (walls, elapsed))
        self.assertEqual(len(results(a)), 4)
        # Parameters drawn per run differ between runs of a cell.
        jit = {json.loads(v)["params"]["jitter"] for v in results(a).values()}
        self.assertEqual(len(jit), 4)

        # Resume: nothing runs again.
        before = {p: os.stat(p).st_mtime_ns for p in glob.glob(a + "/runs/*/run.json")}
        rr = run("run", c, "--out", a)
        self.assertIn("4 runs finished before were skipped", rr.stderr)
        self.assertEqual(before, {p: os.stat(p).st_mtime_ns for p in glob.glob(a + "/runs/*/run.json")})

        # Shards run apart, merged.
        s1, s2, m = (os.path.join(self.tmp, n) for n in ("s1", "s2", "m"))
        self.assertEqual(run("run", c, "--out", s1, "--shard", "1/2", "--no-report").returncode, 5)
        run("run", c, "--out", s2, "--shard", "2/2", "--no-report")
        self.assertEqual(len(results(s1)), 2)
        rm = run("merge", s1, s2, "--out", m)
        self.assertEqual(rm.returncode, 5)
        for f in ("summary.json", "junit.xml"):
            self.assertEqual(read(os.path.join(a, f), "rb"),
                             read(os.path.join(m, f), "rb"), f)

        # Failures recorded and replayed; passes not kept.
        for rid, text in results(a).items():
            r = json.loads(text)
            rec = os.path.join(a, "runs", rid, "rec")
            if r["verdict"] == "pass":
                self.assertFalse(os.path.exists(rec))
                self.assertIsNone(r["recording"])
                continue
            self.assertEqual(r["verdict"], "fail")
            self.assertEqual(r["recording"], "runs/%s/rec" % rid)
            self.assertIn("replay: hilsim replay %s/runs/%s/rec" % (a, rid), ra.stdout)
            rp = subprocess.run([HILSIM, "replay", rec], capture_output=True, text=True,
                                timeout=300)
            self.assertEqual(rp.returncode, 0, rp.stdout + rp.stderr)
            self.assertIn("BIT-EXACT", rp.stdout)
        junit = read(os.path.join(a, "junit.xml"))
        self.assertIn('name="stays_up [force_n=400, jitter=', junit)
        self.assertIn('<failure type="expectation"', junit)
        self.assertEqual(self.leftovers(), [])

    def test_time_limit_and_crashed_controller_are_errors(self):
        # A controller that never attaches: the lockstep bench waits for it until the limit.
        c = campaign(self.tmp, controller="['sleep', '1000']", limit=4,
                     params="  force_n: {list: [30]}\n")
        out = os.path.join(self.tmp, "o")
        r = run("run", c, "--out", out)
        print(r.stdout, r.stderr[-1500:])
        self.assertEqual(r.returncode, 1)
        res = json.loads(results(out)["r000000"])
        self.assertEqual(res["verdict"], "error")
        self.assertIn("time limit of 4 s", res["reason"])
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(subprocess.run(["pgrep", "-f", "sleep 1000"]).returncode, 1,
                         "the run's controller outlived it")
        self.assertIn('<error type="run_error" message="the time limit',
                      read(os.path.join(out, "junit.xml")))

        c = campaign(self.tmp, controller="['sh', '-c', 'kill -SEGV $$']",
                     params="  force_n: {list: [30, 40]}\n")
        out = os.path.join(self.tmp, "o2")
        r = run("run", c, "--out", out)
        self.assertEqual(r.returncode, 1)
        res = results(out)
        self.assertEqual(len(res), 2, "the campaign goes on after a crashed controller")
        for text in res.values():
            j = json.loads(text)
            self.assertEqual(j["verdict"], "error")
            self.assertIn("controller was killed by signal 11", j["reason"])
        self.assertEqual(self.leftovers(), [])

    def test_without_controller_runs_sim_and_records_failures(self):
        c = campaign(self.tmp, controller=False)
        out = os.path.join(self.tmp, "o")
        r = run("run", c, "--out", out)
        self.assertEqual(r.returncode, 5, r.stdout + r.stderr)
        verdicts = {}
        for rid in ("r000000", "r000001"):
            self.assertIn(" sim ", read(os.path.join(out, "runs", rid, "command.txt")))
            j = json.loads(read(os.path.join(out, "runs", rid, "run.json")))
            verdicts[j["params"]["force_n"]] = (rid, j)
        self.assertEqual(verdicts["30"][1]["verdict"], "pass")
        self.assertIsNone(verdicts["30"][1]["recording"])
        self.assertFalse(os.path.exists(os.path.join(out, "runs", verdicts["30"][0], "rec")))
        rid, j = verdicts["400"]
        self.assertEqual(j["verdict"], "fail")
        self.assertEqual(j["recording"], "runs/%s/rec" % rid)
        # Recorded by a second, recorded run (record: failures): the first ran unrecorded, the
        # rerun's verdict equalled it (else run.json would carry a recording_note), and the
        # rerun's own files are gone.
        for r in verdicts.values():
            self.assertNotIn("--record", read(os.path.join(out, "runs", r[0], "command.txt")))
        self.assertNotIn("recording_note", j)
        self.assertEqual(sorted(f for f in os.listdir(os.path.join(out, "runs", rid))
                                if f.startswith("rerun")), [])
        # The sim run's recording reproduces it: every tick, bit for bit, the same verdict.
        rp = subprocess.run([HILSIM, "replay", os.path.join(out, "runs", rid, "rec")],
                            capture_output=True, text=True, timeout=300)
        self.assertEqual(rp.returncode, 0, rp.stdout + rp.stderr)
        self.assertIn("BIT-EXACT", rp.stdout)
        self.assertIn("replayed 1500 ticks", rp.stdout)
        self.assertIn("0 of 1 expectations passed", rp.stdout)

    def test_bad_input(self):
        c = campaign(self.tmp, extra="  colour: red\n")
        r = run("run", c, "--out", os.path.join(self.tmp, "o"))
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr, r"c\.yaml:\d+: campaign\.colour: unknown key")
        c = campaign(self.tmp, params="  force_n: {uniform: [5, 1]}\n")
        r = run("run", c, "--out", os.path.join(self.tmp, "o"))
        self.assertRegex(r.stderr, r"c\.yaml:\d+: parameters\.force_n: uniform \[low, high\]")
        c = campaign(self.tmp, params="  other: {list: [1]}\n")
        r = run("run", c, "--out", os.path.join(self.tmp, "o"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("${force_n} names no parameter", r.stderr)
        c = campaign(self.tmp)
        with open(c, "a") as f:
            f.write("set: {physics.nonsense_key: 3}\n")
        r = run("run", c, "--out", os.path.join(self.tmp, "o"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("does not load", r.stderr)
        self.assertFalse(glob.glob(os.path.join(self.tmp, "o", "runs", "*", "run.json")))

    def test_slurm_script(self):
        c = campaign(self.tmp)
        out = os.path.join(self.tmp, "sl")
        r = run("slurm", c, "--shards", "3", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        arr = read(os.path.join(out, "campaign.sbatch"))
        self.assertIn("#SBATCH --array=1-3", arr)
        self.assertIn('--shard "$SLURM_ARRAY_TASK_ID/3"', arr)
        self.assertIn("--no-report", arr)
        self.assertIn("campaign report", read(os.path.join(out, "merge.sbatch")))
        self.assertIn("--dependency=afterany:", read(os.path.join(out, "submit.sh")))


if __name__ == "__main__":
    unittest.main()
