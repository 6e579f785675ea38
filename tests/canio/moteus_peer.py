"""moteus_peer.py --bench NAME --result FILE.json [--channel vcan0]

The host of two moteus controllers for `hilsim run tests/canio/arm2-moteus-guest.yaml`, with
Debian's python-can on SocketCAN in CAN FD (run with /usr/bin/python3 in the PREEMPT_RT guest).
SHOULDER is servo 1, ELBOW servo 2; this host is source 0. Subframes are packed here from
mjbots/moteus docs/protocol/can.md and registers.md (little-endian, varuints, int8/int16/
int32/float mappings), independently of hilsim's codec. The joints' true angles come from
hilsim's read-only shm view (python/hilsim_client.py).

Script: telemetry at rest (mode stopped), position mode with feed-forward (the host's integral)
to both targets with a float query in every command, telemetry against the plant, voltage,
temperature and fault as int8, an unknown register's read error, no reply without bit 15, the
watchdog's timeout mode (0x027 = 0.2 s, then silence), and a stop that lets the shoulder fall.

Lockstep (the config's rt.clock.mode lockstep, released by the host's SYNC, a classic 0x080
frame): the host sends a cycle's frames, then a SYNC, and waits for the tick it released; its
clock is the bench's simulated time (ticks x period), so the loop, the watchdog's silence and
every duration below run the same however slow the emulated guest is. The bus, the clock, the
SYNC and the PI loop are lockstep_host.py's, shared with robstride_peer.py.

Tolerances: 0.01 rad after 8 s of the PI loop; telemetry against the shm view a tick (10 ms)
apart: 2e-3 rad at steady state. No timing is asserted. Exit 0 when every check passed."""
import math
import struct
import sys

import can

from lockstep_host import EL, SH, TARGET, Host, parse_args

FD_LENS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)


def pad(b):
    n = next(x for x in FD_LENS if x >= len(b))
    return b + b"\x50" * (n - len(b))


def query_pvt():
    return bytes([0x1F, 0x01])  # read 3 floats from 0x001: position, velocity, torque


def position_cmd(pos_rev, ff_nm, watchdog_s=None):
    b = bytes([0x01, 0x00, 0x0A])  # mode = 10 (position), int8
    b += bytes([0x0C, 0x01, 0x20]) + struct.pack("<f", pos_rev)  # float at 0x020
    b += bytes([0x0D, 0x22]) + struct.pack("<f", ff_nm)  # float at 0x022
    if watchdog_s is not None:
        b += bytes([0x0D, 0x27]) + struct.pack("<f", watchdog_s)  # float at 0x027
    return b + query_pvt()


def parse(data):
    """Subframes of a reply: {register: value}, [(error type, register)]."""
    regs, errors, i = {}, [], 0

    def varuint():
        nonlocal i
        v, s = 0, 0
        while True:
            c = data[i]
            i += 1
            v |= (c & 0x7F) << s
            s += 7
            if not c & 0x80:
                return v

    while i < len(data):
        t = data[i]
        i += 1
        if t == 0x50:
            continue
        if t in (0x30, 0x31):
            errors.append((t, varuint()))
            varuint()
            continue
        if t & 0xF0 != 0x20:
            raise ValueError("subframe 0x%02x in a reply" % t)
        width = t >> 2 & 3
        count = t & 3 or varuint()
        start = varuint()
        size, fmt = [(1, "<b"), (2, "<h"), (4, "<i"), (4, "<f")][width]
        for k in range(count):
            regs[(start + k, width)] = struct.unpack_from(fmt, data, i)[0]
            i += size
    return regs, errors


class Moteus(Host):
    unit_name = "servo"

    def __init__(self, channel, bench):
        super().__init__(channel, bench, fd=True)
        self.tel = {}  # servo -> {register: value}
        self.errors = {SH: [], EL: []}
        self.replies = {SH: 0, EL: 0}

    def send(self, servo, payload, reply=True):
        self.send_message(servo, can.Message(arbitration_id=(0x8000 if reply else 0) | servo,
                                             data=pad(payload), is_extended_id=reply, is_fd=True,
                                             bitrate_switch=True))

    def on_frame(self, m):
        servo = m.arbitration_id >> 8
        if m.is_fd and m.arbitration_id & 0xFF == 0 and servo in self.j:
            regs, errors = parse(bytes(m.data))
            self.tel.setdefault(servo, {}).update(regs)
            self.errors[servo] += errors
            self.replies[servo] += 1
            self.new[servo] = True

    def pos(self, servo):
        return self.tel.get(servo, {}).get((0x001, 3))

    def measured(self, servo):
        p = self.pos(servo)
        return p * 2 * math.pi if p is not None else None

    def command(self, servo, ff):
        self.send(servo, position_cmd(TARGET[servo] / (2 * math.pi), ff))

    def drain(self, quiet=0.5):
        """The answers still on their way, without releasing a tick."""
        lock, self.lockstep = self.lockstep, False
        self.hear(quiet)
        self.lockstep = lock

    def ask(self, servo, payload, wait=2.0):
        n = self.replies[servo]
        self.send(servo, payload)
        end = self.now() + wait
        while self.replies[servo] == n and self.now() < end:
            self.hear(0.02)
        return self.replies[servo] > n


def main():
    a = parse_args()
    h = Moteus(a.channel, a.bench)
    res = {}
    # at rest: mode (int8), position/velocity/torque (float), voltage/temperature/fault (int8)
    ok = h.ask(SH, bytes([0x11, 0x00]) + query_pvt() + bytes([0x13, 0x0D]))
    t = h.tel.get(SH, {})
    h.check(ok and t.get((0x000, 0)) == 0, "at rest: servo 1 answers, mode stopped (%s)" %
            t.get((0x000, 0)))
    h.check(t.get((0x00D, 0)) == 48 and t.get((0x00E, 0)) == 30 and t.get((0x00F, 0)) == 0,
            "at rest: voltage 48 x 0.5 V, temperature 30 C, no fault (%s, %s, %s)" %
            (t.get((0x00D, 0)), t.get((0x00E, 0)), t.get((0x00F, 0))))
    # an unknown register: a read error subframe
    h.ask(SH, bytes([0x11, 0xF0, 0x01]))
    h.check((0x31, 0xF0) in h.errors[SH], "read of 0x0f0: read error subframe (%s)" %
            h.errors[SH])
    # no reply without bit 15
    n = h.replies[EL]
    h.send(EL, query_pvt(), reply=False)
    h.run(0.3)
    h.check(h.replies[EL] == n, "no reply without bit 15")
    # position mode with feed-forward
    h.feed[SH] = h.feed[EL] = True
    h.run(8.0)
    for s, name in ((SH, "SHOULDER"), (EL, "ELBOW")):
        q = h.q(s)
        res["q_%s" % name] = q
        h.check(abs(q - TARGET[s]) < 0.01, "position mode: %s q %.5f reaches %.2f" %
                (name, q, TARGET[s]))
        p = h.pos(s) * 2 * math.pi
        h.check(abs(p - q) < 2e-3, "telemetry: %s position %.5f rad = plant %.5f" % (name, p, q))
    # watchdog: 0.2 s on the elbow, then silence: timeout mode (11)
    h.feed[EL] = False
    h.send(EL, position_cmd(TARGET[EL] / (2 * math.pi), 0.0, watchdog_s=0.2))
    h.run(1.0)
    h.ask(EL, bytes([0x11, 0x00]))
    mode = h.tel[EL].get((0x000, 0))
    res["watchdog_mode"] = mode
    h.check(mode == 11, "watchdog: ELBOW in timeout mode after 0.2 s of silence (%s)" % mode)
    # stop the shoulder: mode 0, the arm falls
    h.feed[SH] = False
    qs = h.q(SH)
    h.send(SH, bytes([0x01, 0x00, 0x00]), reply=False)
    h.run(0.6)
    h.ask(SH, bytes([0x11, 0x00]))
    qf = h.q(SH)
    res["stop_fall_rad"] = qf - qs
    h.check(h.tel[SH].get((0x000, 0)) == 0, "stop: SHOULDER mode stopped")
    h.check(abs(qf - qs) > 0.02, "stop: SHOULDER left %.3f by %.3f rad" % (qs, qf - qs))
    h.drain()
    res["replies"] = {"shoulder": h.replies[SH], "elbow": h.replies[EL]}
    return h.finish(res, a.result)


if __name__ == "__main__":
    sys.exit(main())
