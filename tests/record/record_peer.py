"""The boards' host for guest-record.sh: python-can on a SocketCAN bus sends the MIT "enter"
frame and then a position command every 10 ms for DURATION seconds (a 0.5 Hz swing of the
shoulder), reading hilsim's replies as they come. Prints how many it sent and read."""
import math
import sys
import time

import can

P, V, KP, KD, T = (-12.5, 12.5), (-50.0, 50.0), (0.0, 500.0), (0.0, 10.0), (-80.0, 80.0)


def to_uint(x, lo_hi, bits):
    lo, hi = lo_hi
    x = min(max(x, lo), hi)
    return int((x - lo) * ((1 << bits) - 1) / (hi - lo))


def mit_command(p, v, kp, kd, t):
    pi, vi, kpi = to_uint(p, P, 16), to_uint(v, V, 12), to_uint(kp, KP, 12)
    kdi, ti = to_uint(kd, KD, 12), to_uint(t, T, 12)
    return bytes([pi >> 8, pi & 0xFF, vi >> 4, ((vi & 0xF) << 4) | (kpi >> 8), kpi & 0xFF,
                  kdi >> 4, ((kdi & 0xF) << 4) | (ti >> 8), ti & 0xFF])


def main():
    channel, duration = sys.argv[1], float(sys.argv[2])
    bus = can.Bus(interface="socketcan", channel=channel)
    sent = read = 0
    bus.send(can.Message(arbitration_id=1, is_extended_id=False,
                         data=b"\xff\xff\xff\xff\xff\xff\xff\xfc"))
    sent += 1
    t0 = time.monotonic()
    nxt = t0
    while True:
        now = time.monotonic()
        if now - t0 >= duration:
            break
        if now >= nxt:
            q = 0.3 + 0.5 * math.sin(math.pi * (now - t0))
            bus.send(can.Message(arbitration_id=1, is_extended_id=False,
                                 data=mit_command(q, 0, 40, 1.5, 0)))
            sent += 1
            nxt += 0.01
        m = bus.recv(timeout=max(0.0, min(0.01, nxt - time.monotonic())))
        while m is not None:
            read += 1
            m = bus.recv(timeout=0)
    bus.shutdown()
    print(f"peer: sent {sent} MIT frames, read {read} frames")


if __name__ == "__main__":
    main()
