"""robstride_sdk_peer.py --bench NAME --result FILE.json [--channel vcan0]

The vendor's Robstride SDK (robstride_dynamics.RobstrideBus) and a community client
(robstride.Client), unmodified from ../shared/clients/python (PYTHONPATH), against `hilsim run
tests/canio/arm2-robstride-sdk-guest.yaml` on the wall clock: SHOULDER an RS04 (motor 1),
ELBOW an RS03 (motor 2). The joints' true state comes from hilsim's read-only shm view
(python/hilsim_client.py).

The SDK on the shoulder: ping; every parameter it names read in reset mode (values checked
against the bench: the angle, velocity and torque against the plant, the model's defaults,
the types); enable; MIT mode (operation control) held at a set point; then every mode it
offers by run_mode: PP, CSP, speed, current; a stop. Each answer the SDK waits for must come
within its fixed 0.1 s (it raises otherwise: counted, must be 0). The community client on the
elbow: its basic loop (read mechpos, run_mode position, loc_ref, enable, disable).

Waiting is on events: the shm view's ticks, until the joint has stayed within the tolerance for
50 ticks (0.5 s), with a generous 120 s deadline per step. Tolerances (rad): reads against the
plant 2e-3 at rest (the shm snapshot may be a tick from the published state); MIT mode with
kp 2000 N·m/rad: 0.02 (gravity's sag, tau_g / kp, is at most 18 / 2000 = 0.009); PP and CSP
0.01; speed mode: the mean speed over 1 s within 10 % of spd_ref, and spd_ref 0 holds (drift
below 0.01 rad in 0.5 s); current mode: the torque read back and the plant's within 1 % of
Kt iq_ref, and 3 A past the holding current lifts the joint. The holding torque read in CSP
carries the load (below -5 N·m: gravity on the shoulder at 0.5 rad is about 11 N·m) and is the
plant's mean over 20 ticks and Kt iqf read just after it within 3 N·m (the loop ripples by
about ±1.5 N·m tick to tick at the 10 ms tick; reads and the mean are different ticks). In reset mode the drive's torque and current read 0 (its output is
off). Exit 0 when every check passed."""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client  # noqa: E402

import can  # noqa: E402
from robstride_dynamics import Motor, ParameterType, RobstrideBus  # noqa: E402
import robstride  # noqa: E402

P = ParameterType
FAILS = []
LOG = []


def check(ok, what):
    LOG.append(("ok   " if ok else "FAIL ") + what)
    print(LOG[-1], flush=True)
    if not ok:
        FAILS.append(what)


class Bench:
    def __init__(self, name):
        self.c = hilsim_client.Client(name)
        self.j = {n: self.c.find_joint(n) for n in ("SHOULDER", "ELBOW")}

    def state(self, joint):
        s = self.c.read_state()
        return s.q[self.j[joint]], s.dq[self.j[joint]], s.tau[self.j[joint]]

    def ticks(self, n):
        for _ in range(n):
            self.c.wait_tick(5.0)

    def settle(self, joint, target, tol, hold=50, deadline_s=120):
        """Waits until the joint stayed within tol of target for `hold` ticks."""
        t_end, inside = time.monotonic() + deadline_s, 0
        while time.monotonic() < t_end:
            self.c.wait_tick(5.0)
            q = self.state(joint)[0]
            inside = inside + 1 if abs(q - target) < tol else 0
            if inside >= hold:
                return q
        return self.state(joint)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--channel", default="vcan0")
    a = ap.parse_args()
    bench = Bench(a.bench)
    res = {"timeouts": 0, "calls": 0, "max_call_s": 0.0}

    bus = RobstrideBus(a.channel, {"shoulder": Motor(1, "rs-04"), "elbow": Motor(2, "rs-03")})
    bus.connect()

    def call(fn, *args):
        """An SDK call that waits for an answer: its 0.1 s timeout raises RuntimeError."""
        t0 = time.monotonic()
        try:
            return fn(*args)
        except RuntimeError as e:
            res["timeouts"] += 1
            print("SDK:", e, flush=True)
            return None
        finally:
            res["calls"] += 1
            res["max_call_s"] = max(res["max_call_s"], time.monotonic() - t0)

    # ---- ping, then every parameter the SDK names, in reset mode ----
    r = bus.ping_by_id(1, timeout=0.1)
    check(r is not None, "ping motor 1 answered (type 0)")
    bench.ticks(5)
    q, dq, tau = bench.state("SHOULDER")
    want = {  # the RS04's table (drivers/can/robstride/robstride_params.c), and the plant
        "mechOffset": 0.0, "mechPos": q, "run_mode": 0, "iq_ref": 0.0, "spd_ref": 0.0,
        "limit_torque": 120.0, "lof_ref": 0.0, "limit_spd": 15.0, "limit_cur": 90.0,
        "VBUS": 24.0, "loc_kp": 30.0, "spd_kp": 6.0, "spd_ki": 0.02, "acc_rad": 100.0,
        "vel_max": 10.0, "acc_set": 10.0, "EPScan_time": 1, "canTimeout": 0, "zero_sta": 0,
    }
    names = [n for n in dir(P) if not n.startswith("_")]
    for n in names:
        index, dtype, pname = getattr(P, n)
        v = call(bus.read, "shoulder", getattr(P, n))
        ok = v is not None and math.isfinite(float(v))
        if pname in want and ok:
            w = want[pname]
            tol = 2e-3 if pname == "mechPos" else 1e-5 * max(1.0, abs(w))
            ok = abs(float(v) - w) <= tol
        if n in ("MEASURED_VELOCITY", "MECHANICAL_VELOCITY") and ok:
            ok = abs(float(v) - dq) < 0.05
        if n in ("MEASURED_TORQUE", "IQ_FILTERED") and ok:  # the output is off: no current
            ok = abs(float(v)) < 1e-6
        check(ok, "read %s (0x%04X, %s) = %r" % (n, index, dtype.__name__, v))

    # ---- enable, MIT mode (operation control): held at 0.6 rad ----
    call(bus.enable, "shoulder")
    for _ in range(20):  # the SDK's own loop: command, then its status frame
        bus.write_operation_frame("shoulder", 0.6, 2000.0, 40.0)
        call(bus.read_operation_frame, "shoulder")
    q = bench.settle("SHOULDER", 0.6, 0.02)
    check(abs(q - 0.6) < 0.02, "MIT mode: kp 2000 holds 0.6 rad under gravity: %.4f" % q)
    bus.write_operation_frame("shoulder", 0.6, 2000.0, 40.0)
    fb = call(bus.read_operation_frame, "shoulder")
    check(fb is not None and abs(fb[0] - bench.state("SHOULDER")[0]) < 2e-3,
          "MIT mode: the status frame's angle is the plant's: %r" % (fb,))
    mp = call(bus.read, "shoulder", P.MEASURED_POSITION)
    check(mp is not None and abs(mp - bench.state("SHOULDER")[0]) < 2e-3,
          "read(MEASURED_POSITION) while held: %r" % mp)

    def mode(m):
        call(bus.disable, "shoulder")
        call(bus.write, "shoulder", P.MODE, m)
        got = call(bus.read, "shoulder", P.MODE)
        check(got == m, "run_mode %d written and read back" % m)

    # ---- PP (run_mode 1): vel_max, acc_set, loc_ref ----
    mode(1)
    call(bus.write, "shoulder", P.PP_VELOCITY_MAX, 2.0)
    call(bus.write, "shoulder", P.PP_ACCELERATION_TARGET, 5.0)
    call(bus.enable, "shoulder")
    call(bus.write, "shoulder", P.POSITION_TARGET, 0.9)
    q = bench.settle("SHOULDER", 0.9, 0.01)
    check(abs(q - 0.9) < 0.01, "PP to 0.9 rad: %.4f" % q)
    # ---- CSP (run_mode 5): limit_spd, loc_ref ----
    mode(5)
    call(bus.write, "shoulder", P.VELOCITY_LIMIT, 3.0)
    call(bus.enable, "shoulder")
    call(bus.write, "shoulder", P.POSITION_TARGET, 0.5)
    q = bench.settle("SHOULDER", 0.5, 0.01)
    check(abs(q - 0.5) < 0.01, "CSP to 0.5 rad: %.4f" % q)
    hold_tau = call(bus.read, "shoulder", P.MEASURED_TORQUE)
    hold_iq = call(bus.read, "shoulder", P.IQ_FILTERED)
    taus = []
    for _ in range(20):
        bench.ticks(1)
        taus.append(bench.state("SHOULDER")[2])
    mean_tau = sum(taus) / len(taus)
    check(hold_tau is not None and hold_iq is not None and hold_tau < -5 and
          abs(hold_tau - mean_tau) < 3 and abs(hold_tau - 3.6 * hold_iq) < 3,
          "read(MEASURED_TORQUE) holding in CSP: %r N·m (iqf %r A), the plant's mean %.3f "
          "(%.3f..%.3f)" % (hold_tau, hold_iq, mean_tau, min(taus), max(taus)))
    # ---- speed (run_mode 2): 0.3 rad/s, then 0 holds ----
    mode(2)
    call(bus.enable, "shoulder")
    call(bus.write, "shoulder", P.VELOCITY_TARGET, 0.3)
    bench.ticks(50)
    q0 = bench.state("SHOULDER")[0]
    t0 = bench.c.read_state().sim_time_s
    bench.ticks(100)
    v = (bench.state("SHOULDER")[0] - q0) / (bench.c.read_state().sim_time_s - t0)
    check(abs(v - 0.3) < 0.03, "speed mode 0.3 rad/s under gravity: %.4f rad/s" % v)
    call(bus.write, "shoulder", P.VELOCITY_TARGET, 0.0)
    bench.ticks(50)
    q0 = bench.state("SHOULDER")[0]
    bench.ticks(50)
    d = bench.state("SHOULDER")[0] - q0
    check(abs(d) < 0.01, "speed mode 0 holds the joint: drift %.4f rad in 0.5 s" % d)
    # ---- current (run_mode 3): the torque is Kt iq_ref (Kt: SHOULDER's 0.08 N·m/A x gear 50 x
    # efficiency 0.9 = 3.6 N·m/A at the output); near the holding current read back in CSP the
    # joint moves slowly, with the full current it is lifted ----
    q_now = bench.state("SHOULDER")[0]
    mode(5)
    call(bus.write, "shoulder", P.POSITION_TARGET, q_now)
    call(bus.enable, "shoulder")
    bench.settle("SHOULDER", q_now, 0.01)
    iq = call(bus.read, "shoulder", P.IQ_FILTERED)
    mode(3)
    iq_ref = (iq if iq is not None else 0.0) - 3.0  # 10.8 N·m past holding: it rises
    call(bus.write, "shoulder", P.IQ_TARGET, iq_ref)
    call(bus.enable, "shoulder")
    bench.ticks(10)
    t_fb = call(bus.read, "shoulder", P.MEASURED_TORQUE)
    t_plant = bench.state("SHOULDER")[2]
    check(t_fb is not None and abs(t_fb - 3.6 * iq_ref) < 0.01 * abs(3.6 * iq_ref) and
          abs(t_plant - 3.6 * iq_ref) < 0.01 * abs(3.6 * iq_ref),
          "current mode iq_ref %.3f A: torque read %r, the plant %.3f, Kt iq %.3f N·m"
          % (iq_ref, t_fb, t_plant, 3.6 * iq_ref))
    q0 = bench.state("SHOULDER")[0]
    bench.ticks(20)
    check(bench.state("SHOULDER")[0] < q0, "current mode: 3 A past holding lifts the joint "
          "(toward negative q): %.4f -> %.4f" % (q0, bench.state("SHOULDER")[0]))
    call(bus.write, "shoulder", P.IQ_TARGET, 0.0)
    # ---- stop: reset mode, the output off ----
    call(bus.disable, "shoulder")
    got = call(bus.read, "shoulder", P.MODE)
    check(got == 3, "after the stop run_mode stays 3: %r" % got)
    bus.channel_handler.shutdown()
    bus.channel_handler = None

    # ---- the community client on the elbow ----
    with can.interface.Bus(interface="socketcan", channel=a.channel) as cbus:
        cl = robstride.Client(cbus)
        pos = cl.read_param(2, "mechpos")
        check(abs(pos - bench.state("ELBOW")[0]) < 2e-3, "client: mechpos %.4f" % pos)
        cl.disable(2)
        cl.write_param(2, "run_mode", robstride.RunMode.Position)
        check(cl.read_param(2, "run_mode") == robstride.RunMode.Position, "client: run_mode")
        cl.write_param(2, "limit_spd", 2.0)
        fb = cl.enable(2)
        check(abs(fb.angle - bench.state("ELBOW")[0]) < 0.01, "client: enable feedback angle")
        cl.write_param(2, "loc_ref", 1.0)
        q = bench.settle("ELBOW", 1.0, 0.01)
        check(abs(q - 1.0) < 0.01, "client: position mode to 1.0 rad: %.4f" % q)
        cl.disable(2)

    check(res["timeouts"] == 0, "the SDK's 0.1 s timeout: %d missed in %d calls (slowest %.4f s)"
          % (res["timeouts"], res["calls"], res["max_call_s"]))
    res["fails"] = FAILS
    res["log"] = LOG
    json.dump(res, open(a.result, "w"), indent=1)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
