"""The range test bench (tests/sensors/range.yaml: range_mast.wrl over range_scene.wrl) run by
`hilsim run` with shm on, for the Python tests here (test_range_python.py,
test_range_fault.py): a config of a unique bench name in a temporary folder, the process,
and a python/hilsim_client.py Client attached to it."""
import os
import subprocess
import sys
import tempfile
import time


def write_config(src, prefix):
    """Writes the bench config as <tmp>/<name>.yaml; returns (name, path, tmp folder)."""
    name = "%s-%d" % (prefix, os.getpid())
    with open(os.path.join(src, "tests/sensors/range.yaml")) as f:
        text = f.read()
    text = text.replace("name: range-test", "name: " + name, 1)
    text = text.replace("file: range_", "file: %s/tests/sensors/range_" % src)
    text += "shm:\n  enabled: true\n"
    tmp = tempfile.mkdtemp(prefix="hs-%s-" % prefix)
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(text)
    return name, cfg, tmp


def attach(client_module, name, proc, timeout_s=60):
    """A Client of bench name once hilsim has made it; exits the test if proc ends first or
    nothing comes within timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return client_module.Client(name)
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                out = proc.stdout or proc.stderr
                sys.exit("%s: no bench to attach to: %s" % (name, out.read() if out else ""))
            time.sleep(0.05)
