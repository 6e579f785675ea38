"""robstride_peer.py --bench NAME --result FILE.json [--channel vcan0]

The host of two Robstride actuators for `hilsim run tests/canio/arm2-robstride-guest.yaml`,
with Debian's python-can on SocketCAN (run with /usr/bin/python3 in the PREEMPT_RT guest).
SHOULDER is an RS04 (motor 1), ELBOW an RS03 (motor 2); this host is 0xFD. Frames are packed
here from the CyberGear manual's protocol tables (chapter 4: 29-bit ID = type << 24 | data area
2 << 8 | target; u16 big-endian over [min, max] in 65535 truncating steps; parameters
little-endian), independently of hilsim's codec. The joints' true angles come from hilsim's
read-only shm view (python/hilsim_client.py), so the scaling is checked against the plant.

Script: device-ID request (type 0, answered to 0xFE), run_mode and an unknown index read
(type 17, status 0 and 1), enable (type 3, feedback in run mode), a PI loop over the bus
(motion commands, type 1: the motor's PD plus an integral computed here from the feedback) to
both targets, feedback angle and a mechPos read against the plant, ELBOW in speed mode by
parameter writes (type 18), a CAN-ID change refused (type 7), and a stop (type 4) that lets
the shoulder fall.

Lockstep (the config's rt.clock.mode lockstep, released by the host's SYNC, 0x080): the host
sends a cycle's frames, then a SYNC, and waits for the tick it released; its clock is the
bench's simulated time (ticks x period), so the loop and every duration below run the same
however slow the emulated guest is. The bus, the clock, the SYNC and the PI loop are
lockstep_host.py's, shared with moteus_peer.py.

Tolerances: the integral removes gravity's static error: 0.01 rad after 8 s. Scaling: the
angle's step is 8pi/65535 = 3.8e-4 rad and the shm snapshot may be a tick (10 ms) apart from the
frame's reading: 2e-3 rad at steady state. Speed mode: the feedback's mean velocity against the
shm angle's slope over the same span, 10 %. No timing is asserted. Exit 0 when every check
passed."""
import math
import struct
import sys

import can

from lockstep_host import EL, SH, TARGET, Host, parse_args

HOST = 0xFD
# per motor: velocity, torque, kp, kd ranges (RS04, RS03); angle +-4pi for both
RANGE = {SH: (15, 120, 5000, 100), EL: (50, 60, 5000, 100)}
P = 4 * math.pi
T_GET_ID, T_MOTION, T_FEEDBACK, T_ENABLE, T_STOP, T_SET_ID, T_READ, T_WRITE = 0, 1, 2, 3, 4, 7, 17, 18


def f2u(x, lo, hi):
    x = min(max(x, lo), hi)
    return int((x - lo) * 65535 / (hi - lo))


def u2f(u, lo, hi):
    return lo + u * (hi - lo) / 65535


class Robstride(Host):
    unit_name = "motor"

    def __init__(self, channel, bench):
        super().__init__(channel, bench)
        self.fb = {}  # motor -> (mode, faults, p, v, t, temp)
        self.fb_count = {SH: 0, EL: 0}
        self.reads = {}  # (motor, index) -> (status, 4 value bytes)
        self.ids = {}
        self.speed_ref = None

    def send(self, typ, data2, motor, data=b"\0" * 8):
        self.send_message(motor, can.Message(arbitration_id=typ << 24 | data2 << 8 | motor,
                                             data=data, is_extended_id=True))

    def on_frame(self, m):
        if m.is_extended_id and len(m.data) == 8:
            typ, d = m.arbitration_id >> 24, bytes(m.data)
            motor = m.arbitration_id >> 8 & 0xFF
            if typ == T_FEEDBACK and motor in RANGE and m.arbitration_id & 0xFF == HOST:
                v, t, _, _ = RANGE[motor]
                p_u, v_u, t_u, temp = struct.unpack(">HHHH", d)
                self.fb[motor] = (m.arbitration_id >> 22 & 3, m.arbitration_id >> 16 & 0x3F,
                                  u2f(p_u, -P, P), u2f(v_u, -v, v), u2f(t_u, -t, t), temp / 10)
                self.fb_count[motor] += 1
                self.new[motor] = True
            elif typ == T_READ and motor in RANGE:
                index = struct.unpack_from("<H", d)[0]
                self.reads[(motor, index)] = (m.arbitration_id >> 16 & 0xFF, d[4:8])
            elif typ == T_GET_ID and m.arbitration_id & 0xFF == 0xFE and motor in RANGE:
                self.ids[motor] = struct.unpack("<Q", d)[0]

    def motion(self, motor, p, v, kp, kd, t):
        vr, tr, kpr, kdr = RANGE[motor]
        data = struct.pack(">HHHH", f2u(p, -P, P), f2u(v, -vr, vr), f2u(kp, 0, kpr),
                           f2u(kd, 0, kdr))
        self.send(T_MOTION, f2u(t, -tr, tr), motor, data)

    def write_f32(self, motor, index, value):
        self.send(T_WRITE, HOST, motor, struct.pack("<HHf", index, 0, value))

    def write_u8(self, motor, index, value):
        self.send(T_WRITE, HOST, motor, struct.pack("<HHB3x", index, 0, value))

    def read(self, motor, index, wait=2.0):
        self.reads.pop((motor, index), None)
        self.send(T_READ, HOST, motor, struct.pack("<HHI", index, 0, 0))
        end = self.now() + wait
        while (motor, index) not in self.reads and self.now() < end:
            self.hear(0.02)
        return self.reads.get((motor, index))

    def measured(self, motor):
        return self.fb[motor][2] if motor in self.fb else None

    def command(self, motor, ff):
        self.motion(motor, TARGET[motor], 0, 200, 8, ff)

    def step(self):
        """The PI loop; in speed mode, the ELBOW's speed reference streamed per feedback."""
        now = self.drive()
        if self.speed_ref is not None and (self.new[EL] or now - self.sent_at[EL] > 0.05):
            self.new[EL] = False
            self.sent_at[EL] = now
            self.write_f32(EL, 0x700A, self.speed_ref)  # streamed: each write is answered

    def settle(self, seconds=0.5):
        self.run(seconds)


def main():
    a = parse_args()
    h = Robstride(a.channel, a.bench)
    res = {}
    # who is there
    h.send(T_GET_ID, HOST, SH)
    h.send(T_GET_ID, HOST, EL)
    h.settle()
    h.check(SH in h.ids and EL in h.ids, "device ID: both motors answer type 0 to 0xFE (%s)" %
            {k: "%016x" % v for k, v in h.ids.items()})
    r = h.read(SH, 0x7005)
    h.check(r is not None and r[0] == 0 and r[1][0] == 0,
            "run_mode read: status 0, operation control at power-up (%s)" % (r,))
    r = h.read(SH, 0x1234)
    h.check(r is not None and r[0] == 1, "unknown index read: status 1 (%s)" % (r,))
    # enable, then the PI loop
    h.send(T_ENABLE, HOST, SH)
    h.send(T_ENABLE, HOST, EL)
    h.settle(0.3)
    h.check(h.fb.get(SH, (0,))[0] == 2 and h.fb.get(EL, (0,))[0] == 2,
            "enable: both feedbacks in run mode")
    h.feed[SH] = h.feed[EL] = True
    h.run(8.0)
    for m, name in ((SH, "SHOULDER"), (EL, "ELBOW")):
        q = h.q(m)
        res["q_%s" % name] = q
        h.check(abs(q - TARGET[m]) < 0.01, "PI loop: %s q %.5f reaches %.2f" % (name, q, TARGET[m]))
        h.check(abs(h.fb[m][2] - q) < 2e-3, "feedback: %s angle %.5f = plant %.5f" %
                (name, h.fb[m][2], q))
        h.check(h.fb[m][1] == 0 and abs(h.fb[m][5] - 25.0) < 1e-9,
                "feedback: %s no fault bits, temperature 25.0 C (%s)" % (name, h.fb[m][5]))
    r = h.read(SH, 0x7019)
    q = h.q(SH)
    mech = struct.unpack("<f", r[1])[0] if r else float("nan")
    h.check(r is not None and r[0] == 0 and abs(mech - q) < 2e-3,
            "mechPos read: %.5f = SHOULDER q %.5f" % (mech, q))
    # ELBOW in speed mode
    h.feed[EL] = False
    h.send(T_STOP, HOST, EL)
    h.write_u8(EL, 0x7005, 2)
    h.write_f32(EL, 0x701F, 10.0)
    h.speed_ref = 0.3
    h.write_f32(EL, 0x700A, h.speed_ref)
    h.send(T_ENABLE, HOST, EL)
    r = h.read(EL, 0x7005)
    h.check(r is not None and r[1][0] == 2, "run_mode read back: speed (%s)" % (r,))
    h.run(0.5)
    q0, t0, n0 = h.q(EL), h.now(), h.fb_count[EL]
    vs = []
    end = t0 + 1.0
    while h.now() < end:
        h.hear(0.02)
        if h.new[EL]:
            vs.append(h.fb[EL][3])
        h.step()
    q1, t1 = h.q(EL), h.now()
    # the shm angle's slope in bus time is not available: compare distance with the feedback's
    # velocity integrated over the same frames' count at the config's 10 ms tick
    slope = (q1 - q0) / (t1 - t0)
    v_mean = sum(vs) / len(vs) if vs else float("nan")
    res["speed_mode"] = {"v_feedback": v_mean, "q_moved": q1 - q0, "frames": h.fb_count[EL] - n0}
    h.check(v_mean > 0.1 and q1 - q0 > 0.05,
            "speed mode: ELBOW moves at %.3f rad/s (feedback), %.3f rad in %.2f s" %
            (v_mean, q1 - q0, t1 - t0))
    h.check(h.fb[EL][0] == 2, "speed mode: feedback in run mode")
    print("speed mode: shm slope in %s time %.3f rad/s (not judged)"
          % ("simulated" if h.lockstep else "wall", slope))
    h.speed_ref = None
    # a CAN-ID change is refused (not answered, counted as unsupported by hilsim)
    h.send(T_SET_ID, HOST | 0x0900, SH)
    res["set_id_sent"] = 1
    # stop the shoulder (clear faults): reset mode, output off, the arm falls
    h.feed[SH] = False
    qs = h.q(SH)
    h.send(T_STOP, HOST, SH, bytes([1, 0, 0, 0, 0, 0, 0, 0]))
    h.run(0.6)
    qf = h.q(SH)
    res["stop_fall_rad"] = qf - qs
    h.check(h.fb[SH][0] == 0, "stop: SHOULDER feedback in reset mode")
    h.check(abs(qf - qs) > 0.02, "stop: SHOULDER left %.3f by %.3f rad" % (qs, qf - qs))
    return h.finish(res, a.result)


if __name__ == "__main__":
    sys.exit(main())
