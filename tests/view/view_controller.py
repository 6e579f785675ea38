#!/usr/bin/env python3
"""The local controller the view's browser test drives the biped with (libhilsim-client over
ctypes): every joint held by PD at its current angle with the gains of config/biped-shm.gains.

  view_controller.py hold BENCH GAINS
      wall clock; reads lines on stdin: "move JOINT DELTA" adds DELTA rad to that joint's target
      and prints "moved JOINT" once the command is written; "quit" ends.
  view_controller.py lockstep BENCH GAINS N
      lockstep: claims, prints "ready", waits for a line on stdin, runs N ticks, then prints one
      JSON line: ticks, missed, and every joint's q at the
      last tick as hex (a run is compared with another byte for byte).
"""
import errno
import json
import os
import select
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client as hc  # noqa: E402

MODE_PD = 4  # HS_SHM_MODE_POSITION_PD


def gains(path, names):
    g = {}
    with open(path) as f:
        for line in f:
            w = line.split("#")[0].split()
            if len(w) == 3:
                g[w[0]] = (float(w[1]), float(w[2]))
    return [g.get(n, (100.0, 2.0)) for n in names]


def attach(bench):
    for _ in range(200):
        try:
            return hc.Client(bench)
        except hc.HilsimError:
            import time
            time.sleep(0.05)
    raise SystemExit("view_controller: no bench %r" % bench)


def commands(target, kpkd):
    return [dict(mode=MODE_PD, q=q, kp=kp, kd=kd) for q, (kp, kd) in zip(target, kpkd)]


def write(c, cmds):
    """A controller starved past the bench's client timeout (a loaded machine) was declared
    lost: it claims again, as a real controller would."""
    try:
        c.write_commands(cmds)
    except hc.HilsimError as e:
        if e.errno != errno.ENOTCONN:
            raise
        c.claim()
        c.write_commands(cmds)


def hold(bench, gains_path):
    c = attach(bench)
    kpkd = gains(gains_path, c.joint_names)
    c.wait_tick(5.0)
    target = c.read_state().q
    c.claim()
    c.write_commands(commands(target, kpkd))
    print("holding", flush=True)
    while True:
        c.wait_tick(5.0)
        write(c, commands(target, kpkd))
        if select.select([sys.stdin], [], [], 0)[0]:
            line = sys.stdin.readline()
            if not line or line.startswith("quit"):
                break
            w = line.split()
            if len(w) == 3 and w[0] == "move":
                j = c.find_joint(w[1])
                target[j] += float(w[2])
                write(c, commands(target, kpkd))
                print("moved", w[1], flush=True)
    c.release()


def lockstep(bench, gains_path, n):
    c = attach(bench)
    kpkd = gains(gains_path, c.joint_names)
    tick, _ = c.wait_tick(10.0)
    target = c.read_state().q
    c.claim()
    print("ready", flush=True)
    sys.stdin.readline()  # "go": the test starts its view and its attack first
    first = tick
    done = 0
    while True:
        c.write_commands(commands(target, kpkd))
        c.step()
        done += 1
        if done >= n:
            break
        tick, _ = c.wait_tick(10.0)
    tick, _ = c.wait_tick(10.0)
    s = c.read_state()
    print(json.dumps({"ticks": tick - first, "missed": c.missed_ticks,
                      "q": [struct.pack("<d", q).hex() for q in s.q]}), flush=True)
    c.release()


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold(sys.argv[2], sys.argv[3])
    else:
        lockstep(sys.argv[2], sys.argv[3], int(sys.argv[4]))
