"""scenario_peer.py --bench NAME --result FILE.json --ready FILE [--channel vcan0] [--max-s 300]

The controller for `hilsim run tests/canio/arm2-can-guest.yaml --scenario
scenarios/arm-can-odrive-fault.yaml` in the PREEMPT_RT guest, on Debian's python-can over
SocketCAN (run with /usr/bin/python3). It plays a controller board that copes with an ODrive
axis error, with its own codec written from the protocols' documents (MIT mode: mini-cheetah
firmware; ODrive CAN Simple 0.5.x), independent of hilsim's:

- SHOULDER (MIT motor 1, replies to 0): motor mode, then a PD hold at 0.3 rad every 10 ms;
- ELBOW (ODrive node 2, gear 30): closed loop, then Set_Input_Pos at 0.6 rad (motor turns)
  every 10 ms (which also feeds its 0.5 s watchdog); on a heartbeat with an axis error it sends
  Clear_Errors and Set_Axis_State closed loop, as a controller should.

Python and python-can start slowly under emulation, so the peer starts first: with its bus
open it creates the --ready file, waits for the bench's shm segment (hilsim started), and runs
until the segment is gone (hilsim ends the run when the scenario's time is played) or --max-s. The result file says what it saw: the axis error code and state in the
heartbeats, when it recovered, the MIT replies. Exit 0 when it saw the error (with the axis
idle), saw the axis back in closed loop with no error after, and got MIT replies."""
import argparse
import json
import math
import os
import struct
import sys
import time

import can

MIT_ID, MIT_MASTER, OD_NODE, GEAR_ELBOW = 1, 0, 2, 30.0
P, V, KP, KD, T = (-12.5, 12.5), (-50, 50), (0, 500), (0, 10), (-80, 80)
HB, SET_AXIS_STATE, SET_INPUT_POS, CLEAR_ERRORS = 0x01, 0x07, 0x0C, 0x18
IDLE, CLOSED_LOOP = 1, 8


def f2u(x, lo, hi, bits):
    x = min(max(x, lo), hi)
    return int((x - lo) * ((1 << bits) - 1) / (hi - lo))


def mit_command(p, v, kp, kd, t):
    p, v, kp, kd, t = (f2u(p, *P, 16), f2u(v, *V, 12), f2u(kp, *KP, 12), f2u(kd, *KD, 12),
                       f2u(t, *T, 12))
    return bytes([p >> 8, p & 0xFF, v >> 4, (v & 0xF) << 4 | kp >> 8, kp & 0xFF, kd >> 4,
                  (kd & 0xF) << 4 | t >> 8, t & 0xFF])


def od_id(cmd):
    return OD_NODE << 5 | cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--channel", default="vcan0")
    ap.add_argument("--ready", required=True)
    ap.add_argument("--max-s", type=float, default=300)
    a = ap.parse_args()
    bus = can.Bus(interface="socketcan", channel=a.channel)
    seg = "/dev/shm/hilsim-" + a.bench
    open(a.ready, "w").close()
    wait_end = time.monotonic() + a.max_s
    while not os.path.exists(seg) and time.monotonic() < wait_end:
        time.sleep(0.01)

    def send(arb, data):
        m = can.Message(arbitration_id=arb, data=data, is_extended_id=False)
        for _ in range(200):
            try:
                bus.send(m)
                return
            except can.CanError:  # ENOBUFS: the queue is full, retry shortly
                time.sleep(0.001)

    def elbow_closed_loop():
        send(od_id(SET_AXIS_STATE), struct.pack("<I", CLOSED_LOOP))
        send(od_id(SET_INPUT_POS), struct.pack("<fhh", 0.6 * GEAR_ELBOW / (2 * math.pi), 0, 0))

    send(MIT_ID, b"\xff" * 7 + b"\xfc")  # enter motor mode
    elbow_closed_loop()
    hb = []  # (seconds since start, axis error, axis state)
    mit_replies = mit_8 = 0
    clears = 0
    start = time.monotonic()
    next_cmd = start
    while os.path.exists(seg) and time.monotonic() - start < a.max_s:
        now = time.monotonic()
        if now >= next_cmd:
            send(MIT_ID, mit_command(0.3, 0, 100, 2, 0))
            send(od_id(SET_INPUT_POS), struct.pack("<fhh", 0.6 * GEAR_ELBOW / (2 * math.pi), 0, 0))
            next_cmd = now + 0.01
        m = bus.recv(0.002)
        while m is not None:
            d = bytes(m.data)
            if m.arbitration_id == MIT_MASTER and len(d) >= 6 and d[0] == MIT_ID:
                mit_replies += 1
                mit_8 += len(d) == 8
            elif m.arbitration_id == od_id(HB) and len(d) == 8:
                err, st = struct.unpack_from("<IB", d)
                hb.append((round(time.monotonic() - start, 3), err, st))
                if err:
                    # a controller that copes: clear the error, back to closed loop
                    send(od_id(CLEAR_ERRORS), b"")
                    elbow_closed_loop()
                    clears += 1
            m = bus.recv(0)
    errors = [h for h in hb if h[1]]
    first_err = errors[0] if errors else None
    after = [h for h in hb if first_err and h[0] > first_err[0] and not h[1] and h[2] == CLOSED_LOOP]
    ok = True
    checks = [
        (first_err is not None and first_err[1] == 0x100 and first_err[2] == IDLE,
         "a heartbeat carried the axis error 0x100 with the axis idle (%s)" % (first_err,)),
        (bool(after), "the axis was back in closed loop without error after the clear (%s)"
         % (after[0] if after else None,)),
        (mit_replies > 100, "%d MIT replies (%d of 8 bytes)" % (mit_replies, mit_8)),
        (not os.path.exists(seg), "the run ended by itself (the scenario's time was played)"),
    ]
    for good, what in checks:
        print(("ok   " if good else "FAIL ") + what, flush=True)
        ok &= good
    with open(a.result, "w") as f:
        json.dump({"heartbeats": len(hb), "errors": len(errors), "first_error": first_err,
                   "recovered": after[0] if after else None, "clears": clears,
                   "mit_replies": mit_replies}, f)
    bus.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
