#!/usr/bin/env python3
"""A campaign as a Slurm array job on a one-node Slurm cluster that this test brings up itself
from Debian's packages (munge, slurmctld, slurmd, slurm-client): a generated munge key and
slurm.conf in a temporary folder, the three daemons started in the foreground as this test's
children on free ports, and stopped at the end whatever happens. `hilsim campaign slurm` writes
the array script and its merge job; submit.sh submits both; the merged summary.json and
junit.xml equal those of the same campaign run locally, byte for byte.

Skipped (with the reason) when the packages are missing or the test is not root (slurmd runs
jobs as their user and must be able to). Judged on files and the queue, never on sleeps alone.
Environment (set by ctest): HS_HILSIM, HS_SOURCE_DIR, HS_PD_CONTROLLER."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_campaign as tc  # noqa: E402  the campaign file and helpers

HILSIM = os.environ["HS_HILSIM"]
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, limit_s):
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


@unittest.skipUnless(all(shutil.which(d) or os.path.exists("/usr/sbin/" + d) for d in DAEMONS),
                     "Slurm or munge not installed (scripts/setup.sh installs them)")
@unittest.skipUnless(os.geteuid() == 0, "slurmd must run as root to start jobs")
class SlurmCampaign(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hs-slurm-")
        self.procs = []
        self.addCleanup(self.stop)
        t = self.tmp
        for d in ("state", "spool"):
            os.mkdir(os.path.join(t, d))
        key = os.path.join(t, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.start(["/usr/sbin/munged", "-F", "--force", "--key-file=" + key,
                    "--socket=%s/munge.sock" % t, "--pid-file=%s/munged.pid" % t,
                    "--log-file=%s/munged.log" % t, "--seed-file=%s/munge.seed" % t])
        wait_for("munged's socket", lambda: os.path.exists(t + "/munge.sock"), 60)
        host = socket.gethostname().split(".")[0]
        conf = os.path.join(t, "slurm.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "ClusterName=hstest", "SlurmctldHost=%s(127.0.0.1)" % host,
                "SlurmctldPort=%d" % free_port(), "SlurmdPort=%d" % free_port(),
                "AuthType=auth/munge", "AuthInfo=socket=%s/munge.sock" % t,
                "CredType=cred/munge", "SlurmUser=root", "SlurmdUser=root",
                "StateSaveLocation=%s/state" % t, "SlurmdSpoolDir=%s/spool" % t,
                "SlurmctldPidFile=%s/slurmctld.pid" % t, "SlurmdPidFile=%s/slurmd.pid" % t,
                "SlurmctldLogFile=%s/slurmctld.log" % t, "SlurmdLogFile=%s/slurmd.log" % t,
                # No cgroups in a test: process tracking by the process tree, no task binding.
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
                "JobAcctGatherType=jobacct_gather/none", "SchedulerType=sched/builtin",
                "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
                "ReturnToService=2", "MpiDefault=none", "SlurmdParameters=config_overrides",
                "NodeName=%s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN" % host,
                "PartitionName=hstest Nodes=%s Default=YES MaxTime=INFINITE State=UP" % host,
                ""]))
        self.env = dict(os.environ, SLURM_CONF=conf)
        self.start(["/usr/sbin/slurmctld", "-D", "-f", conf])
        self.start(["/usr/sbin/slurmd", "-D", "-f", conf])
        wait_for("the node to be idle", lambda: "idle" in subprocess.run(
            ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env).stdout,
            120)

    def start(self, argv):
        log = open(os.path.join(self.tmp, os.path.basename(argv[0]) + ".out"), "w")
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                           env=getattr(self, "env", None)))
        log.close()

    def stop(self):
        if hasattr(self, "env"):
            subprocess.run(["scancel", "--user=root"], env=self.env, capture_output=True)
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in ("slurmctld.log", "slurmd.log"):
            path = os.path.join(self.tmp, log)
            if os.path.exists(path):
                print("--- " + log, tc.read(path)[-1500:])
        shutil.rmtree(self.tmp, True)

    def test_array_job_merges_to_the_local_result(self):
        c = tc.campaign(self.tmp, params="  force_n: {list: [30, 400]}\n  jitter: {uniform: [0, 1]}\n")
        local = os.path.join(self.tmp, "local")
        tc.run("run", c, "--out", local, "-j", "2", "--quiet")
        out = os.path.join(self.tmp, "slurm")
        r = tc.run("slurm", c, "--shards", "2", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        sub = subprocess.run([os.path.join(out, "submit.sh")], capture_output=True, text=True,
                             env=self.env, timeout=60)
        self.assertEqual(sub.returncode, 0, sub.stderr)
        array, merge = sub.stdout.split()
        # Done when the queue no longer holds either job and the merge wrote its summary.
        wait_for("the array and its merge job", lambda: subprocess.run(
            ["squeue", "-h", "-j", "%s,%s" % (array, merge)], capture_output=True, text=True,
            env=self.env).stdout.strip() == "", 600)
        self.assertEqual(len(tc.results(out)), 2)
        shard_logs = [f for f in os.listdir(out) if f.startswith("slurm-" + array)]
        self.assertEqual(len(shard_logs), 2, "one log per array task")
        for f in ("summary.json", "junit.xml"):
            if tc.read(os.path.join(local, f), "rb") != tc.read(os.path.join(out, f), "rb"):
                self.explain(local, "local")
                self.explain(out, "slurm", array)
            self.assertEqual(tc.read(os.path.join(local, f), "rb"),
                             tc.read(os.path.join(out, f), "rb"), f)

    def explain(self, out, what, array=None):
        """What a failing comparison needs (the folders go with the test): every run's
        run.json and the files beside it, and the shard logs."""
        for run, text in sorted(tc.results(out).items()):
            print("--- %s run %s: run.json\n%s" % (what, run, text.decode(errors="replace")))
            folder = os.path.join(out, "runs", run)
            for name in sorted(os.listdir(folder)):
                if name.endswith((".out", ".err", ".log")):
                    print("--- %s run %s: %s\n%s" % (what, run, name, tc.read(
                        os.path.join(folder, name), "rb")[-3000:].decode(errors="replace")))
        for name in sorted(os.listdir(out)) if array else ():
            if name.startswith("slurm-" + array):
                print("--- " + name, tc.read(os.path.join(out, name))[-3000:])


if __name__ == "__main__":
    unittest.main()
