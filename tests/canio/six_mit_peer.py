"""six_mit_peer.py --bench NAME --seconds S --result FILE.json [--channel vcan0]
                  [--lockstep sync|commands --cycles N]

A legged robot's control loop as many are written: it polls six MIT motors (IDs 1..6, replies
to master ID 0) one after another on one bus, sending the next motor's command only when the
previous motor has answered. Each command holds the motor where its last reply put it (kp 20,
kd 1), so the robot stays calm. Run with Debian's python-can (/usr/bin/python3) in the guest.

Judged here, by counts and order only (no timing): every command gets exactly one reply, from
the motor it was sent to (byte 0 of the reply), in order; nothing arrives that was not asked
for. A reply that has not come within --timeout (generous, for emulation) counts as missing and
the loop goes on with the next motor. The bench's tick counter (hilsim's shm view) is read at
the start and end, so the result can say how many replies came per tick: at most one when
nodes answer with the tick, several when they answer at once. Exit 0 when every check passed.

--lockstep (hilsim runs with --clock lockstep; the replies come from the tick), for N cycles
instead of S seconds, judged in simulated time (the bench's tick counter, read once it has
stood still, since a lockstep bench holds until released):
  sync      the same sequential poll, each command followed by a SYNC (0x080) that releases one
            tick: exactly one tick per command, and each reply in the tick its SYNC released;
  commands  a board that sends one command to every motor per cycle and then reads the six
            replies, with no SYNC (rt.clock.lockstep_source can_commands): exactly one tick per
            cycle, each motor answered once per cycle."""
import argparse
import json
import os
import sys
import time

import can

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client  # noqa: E402

P, V, KP, KD, T = (-12.5, 12.5), (-50, 50), (0, 500), (0, 5), (-18, 18)
MOTORS = range(1, 7)
ENTER = bytes([0xFF] * 7 + [0xFC])


def f2u(x, lo, hi, bits):
    x = min(max(x, lo), hi)
    return int((x - lo) * ((1 << bits) - 1) / (hi - lo))


def u2f(u, lo, hi, bits):
    return u * (hi - lo) / ((1 << bits) - 1) + lo


def command(p, v, kp, kd, t):
    p, v, kp, kd, t = (f2u(p, *P, 16), f2u(v, *V, 12), f2u(kp, *KP, 12), f2u(kd, *KD, 12),
                       f2u(t, *T, 12))
    return bytes([p >> 8, p & 0xFF, v >> 4, (v & 0xF) << 4 | kp >> 8, kp & 0xFF, kd >> 4,
                  (kd & 0xF) << 4 | t >> 8, t & 0xFF])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--seconds", type=float, default=5.0)
    # A reply later than this is missing. Generous: a loaded host stalls the emulated guest for
    # whole seconds, and a late reply would otherwise count as one nobody asked for.
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--result", required=True)
    ap.add_argument("--channel", default="vcan0")
    ap.add_argument("--lockstep", choices=("sync", "commands"))
    ap.add_argument("--cycles", type=int, default=100)
    a = ap.parse_args()
    bus = can.Bus(interface="socketcan", channel=a.channel,
                  can_filters=[{"can_id": 0, "can_mask": 0x7FF, "extended": False}])
    shm = hilsim_client.Client(a.bench)
    pos = {m: None for m in MOTORS}
    sent = answered = missing = wrong = extra = 0

    def send(motor, data):
        nonlocal sent
        bus.send(can.Message(arbitration_id=motor, data=data, is_extended_id=False))
        sent += 1

    def exchange(motor, data):
        """Sends one frame to motor (and a SYNC in lockstep sync), waits for its reply; returns
        the reply's position or None."""
        send(motor, data)
        if a.lockstep == "sync":
            bus.send(can.Message(arbitration_id=0x080, data=b"", is_extended_id=False))
        return reply(motor)

    def reply(motor):
        """The next reply, which must come from motor; its position or None."""
        nonlocal answered, missing, wrong, extra
        t_end = time.monotonic() + a.timeout
        while True:
            m = bus.recv(max(0.0, t_end - time.monotonic()))
            if m is None:
                missing += 1
                return None
            d = bytes(m.data)
            if len(d) != 6:
                extra += 1
                continue
            if d[0] != motor:
                # a late reply to an earlier command (after a timeout) or one from nowhere
                wrong += 1
                continue
            answered += 1
            return u2f(d[1] << 8 | d[2], *P, 16)

    def cycle(data_of):
        if a.lockstep == "commands":  # the whole cycle at once, then its replies in motor order
            for m in MOTORS:
                send(m, data_of(m))
            for m in MOTORS:
                p = reply(m)
                if p is not None:
                    pos[m] = p
            return
        for m in MOTORS:
            p = exchange(m, data_of(m))
            if p is not None:
                pos[m] = p

    def still_tick():
        """Lockstep: the tick counter once it stood still for 1 s (the bench holds)."""
        last, since = shm.read_state().tick, time.monotonic()
        while time.monotonic() - since < 1.0:
            time.sleep(0.1)
            t = shm.read_state().tick
            if t != last:
                last, since = t, time.monotonic()
        return last

    cycle(lambda m: ENTER)  # motor mode: each answers its enter frame too
    tick0 = still_tick() if a.lockstep else shm.read_state().tick
    t0 = time.monotonic()
    cycles = 0
    s0, a0 = sent, answered
    while (cycles < a.cycles) if a.lockstep else (time.monotonic() - t0 < a.seconds):
        cycle(lambda m: command(pos[m] if pos[m] is not None else 0.0, 0, 20, 1, 0))
        cycles += 1
    elapsed = time.monotonic() - t0
    ticks = (still_tick() if a.lockstep else shm.read_state().tick) - tick0
    # anything still on the bus now was not asked for
    while bus.recv(0.3) is not None:
        extra += 1
    polled, replied = sent - s0, answered - a0
    res = dict(sent=sent, answered=answered, missing=missing, wrong_motor=wrong, extra=extra,
               cycles=cycles, polled=polled, replied=replied, ticks=ticks, seconds=elapsed,
               replies_per_tick=replied / ticks if ticks else None)
    print("six MIT motors polled in turn for %.1f s: %d cycles, %d commands, %d replies, "
          "%d missing, %d from the wrong motor, %d unasked; %d ticks: %.2f replies per tick"
          % (elapsed, cycles, polled, replied, missing, wrong, extra, ticks,
             res["replies_per_tick"] or 0), flush=True)
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1)
    bus.shutdown()
    shm.detach()
    ok = missing == 0 and wrong == 0 and extra == 0 and answered == sent and cycles >= 10
    print(("ok   " if ok else "FAIL ") + "every command answered once, by its motor, in order")
    if a.lockstep:
        want = polled if a.lockstep == "sync" else cycles
        what = "command (its SYNC)" if a.lockstep == "sync" else "cycle of six commands"
        good = ticks == want
        print("%s  lockstep %s: %d ticks for %d releases: one tick per %s"
              % ("ok  " if good else "FAIL", a.lockstep, ticks, want, what))
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
