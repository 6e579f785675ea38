"""canio_peer.py --mode control|bad|dbc --bench NAME --result FILE.json [--channel vcan0]

The controller boards' host for `hilsim run tests/canio/arm2-can-guest.yaml`, with Debian's
python-can on SocketCAN (run with /usr/bin/python3 in the PREEMPT_RT guest). SHOULDER is an MIT
actuator (motor ID 1, replies to 0, joint-side units), ELBOW an ODrive axis (node 2, motor
turns through gear 30). The joints' true angles come from hilsim's read-only shm view
(python/hilsim_client.py), so the CAN scaling is checked against the plant, not against itself.

control: idle heartbeats (rate in bus time, generous bounds), scaling at rest, MIT motor mode +
         ODrive closed loop, a PI loop over the bus to the targets (the node's PD plus an
         integral computed here from the replies), scaling in steady state, the ODrive watchdog
         tripping to idle with its error bit, MIT's timeout cutting the output (the arm falls).
bad:     the same loop, then malformed frames, unknown IDs, garbage and a flood of thousands of
         frames; the nodes must keep answering and the joints stay on target. What was sent is
         written to the result file for the shell to compare with hilsim's counters.
dbc:     tests/canio/arm2-dbc-guest.yaml: ELBOW behind the DBC board of arm2-elbow.dbc (signals
         packed here by hand: Intel, factor 0.001 rad): cyclic ElbowState, every ElbowCmd
         acknowledged, a PI loop to the set point, ElbowState/Ack positions against the plant,
         an RTR for Wrist answered with the F/T sensor's force z, enable 0 lets the arm sag.

Tolerances: the integral removes gravity's static error, so the steady state is within ~1e-3
rad; 0.01 rad leaves margin for the slower, jittery loop under emulation. Scaling: MIT position
is 16 bits over 25 rad (3.8e-4 rad), ODrive positions float32 turns; the shm snapshot and the
frame may be a tick apart, so at rest/steady state 2e-3 rad. No timing is asserted except
heartbeat rates within [3, 30] Hz for a configured 10 Hz. Exit 0 when every check passed."""
import argparse
import json
import math
import os
import random
import struct
import sys
import time

import can

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client  # noqa: E402

MIT_ID, MIT_MASTER, OD_NODE = 1, 0, 2
GEAR_ELBOW = 30.0
# mit ranges of the config (p, v, kp, kd, t) and the reply's current range
P, V, KP, KD, T, I = (-12.5, 12.5), (-50, 50), (0, 500), (0, 10), (-80, 80), (-40, 40)
SH_TARGET, EL_TARGET = 0.8, 1.0
HB, SET_AXIS_STATE, ENC_EST, CLEAR_ERRORS, SET_INPUT_POS = 0x01, 0x07, 0x09, 0x18, 0x0C
ERR_WATCHDOG = 0x800
DBC_CMD, DBC_STATE, DBC_WRIST, DBC_ACK = 0x200, 0x201, 0x202, 0x203
SYNC_ID = 0x080  # lockstep: the CANopen SYNC that releases a tick


def f2u(x, lo, hi, bits):
    x = min(max(x, lo), hi)
    return int((x - lo) * ((1 << bits) - 1) / (hi - lo))


def u2f(u, lo, hi, bits):
    return u * (hi - lo) / ((1 << bits) - 1) + lo


def mit_command(p, v, kp, kd, t):
    p, v, kp, kd, t = (f2u(p, *P, 16), f2u(v, *V, 12), f2u(kp, *KP, 12), f2u(kd, *KD, 12),
                       f2u(t, *T, 12))
    return bytes([p >> 8, p & 0xFF, v >> 4, (v & 0xF) << 4 | kp >> 8, kp & 0xFF, kd >> 4,
                  (kd & 0xF) << 4 | t >> 8, t & 0xFF])


def od_id(cmd):
    return OD_NODE << 5 | cmd


class Host:
    def __init__(self, channel, bench, lockstep=False):
        self.bus = can.Bus(interface="socketcan", channel=channel)
        self.lockstep = lockstep
        self.dbc_state = self.dbc_ack = self.dbc_wrist = None
        self.dbc_states, self.dbc_acks, self.dbc_wrists = [], 0, 0
        self.shm = hilsim_client.Client(bench)
        self.j_sh = self.shm.find_joint("SHOULDER")
        self.j_el = self.shm.find_joint("ELBOW")
        self.mit_feed = self.od_feed = False
        self.sh_integ = self.el_integ = 0.0
        self.mit = None  # (p, v, i, bus time)
        self.od = None  # (turns, turns/s, bus time)
        self.hb = []  # (bus time, error, state)
        self.mit_replies = 0
        self.estimates = 0
        self.last_t = None
        self.mit_new = self.od_new = False
        self.mit_sent_at = self.od_sent_at = 0.0
        self.failures = []
        if lockstep:
            self.period = self.shm.info.tick_period_ns / 1e9
            self.tick0 = self.shm.read_state().tick

    # Lockstep (--lockstep, `hilsim run --clock lockstep` with rt.clock.sync.source can): every
    # SYNC (0x080) the host sends releases one tick, so time here is the bench's simulated
    # time and hilsim's timeouts, heartbeats and watchdogs count in it: the checks cannot
    # depend on how fast the emulated guest runs. Otherwise time is the wall clock.
    def now(self):
        if self.lockstep:
            return (self.shm.read_state().tick - self.tick0) * self.period
        return time.monotonic()

    def stamp(self, m):
        return self.now() if self.lockstep else m.timestamp

    def step(self):
        """Lockstep: the commands sent so far are this tick's; SYNC releases it; returns once
        its state is published (its frames are queued here by then)."""
        t = self.shm.read_state().tick
        self.send(SYNC_ID)
        end = time.monotonic() + 30
        while self.shm.read_state().tick <= t:
            if time.monotonic() > end:
                raise TimeoutError("lockstep: no tick 30 s after a SYNC")
            try:
                self.shm.wait_tick(timeout_s=1.0)
            except TimeoutError:
                pass
        return self.hear(0)

    def wait(self, timeout):
        """Waits for frames: one tick in lockstep, up to timeout s otherwise."""
        return self.step() if self.lockstep else self.hear(timeout)
    def send(self, arb, data=b"", rtr=False, ext=False, dlc=None):
        m = can.Message(arbitration_id=arb, data=data, is_extended_id=ext, is_remote_frame=rtr,
                        dlc=dlc if dlc is not None else len(data))
        for _ in range(200):
            try:
                self.bus.send(m)
                return True
            except can.CanError:  # ENOBUFS: the interface queue is full, retry shortly
                time.sleep(0.001)
        return False

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)

    def joints(self):
        s = self.shm.read_state()
        return s.q[self.j_sh], s.q[self.j_el], s.current_a[self.j_sh]

    def hear(self, timeout):
        """Reads what is queued (waiting up to timeout for the first frame); returns count."""
        n = 0
        m = self.bus.recv(timeout)
        while m is not None:
            n += 1
            self.last_t = self.stamp(m)
            d = bytes(m.data)
            if m.arbitration_id == MIT_MASTER and len(d) == 6 and not m.is_extended_id:
                p = u2f(d[1] << 8 | d[2], *P, 16)
                v = u2f(d[3] << 4 | d[4] >> 4, *V, 12)
                i = u2f((d[4] & 0xF) << 8 | d[5], *I, 12)
                self.mit = (p, v, i, self.stamp(m))
                self.mit_replies += 1
                self.mit_new = True
            elif m.arbitration_id == DBC_STATE and len(d) == 8:
                pos, vel, cur = struct.unpack_from("<hhh", d)
                self.dbc_state = (pos * 1e-3, vel * 1e-3, cur * 1e-2)
                self.dbc_states.append(self.stamp(m))
            elif m.arbitration_id == DBC_ACK and len(d) == 2:
                self.dbc_ack = struct.unpack("<h", d)[0] * 1e-3
                self.dbc_acks += 1
            elif m.arbitration_id == DBC_WRIST and len(d) == 4:
                self.dbc_wrist = struct.unpack("<i", d)[0] * 1e-3
                self.dbc_wrists += 1
            elif m.arbitration_id == od_id(HB) and len(d) == 8:
                err, st = struct.unpack_from("<IB", d)
                self.hb.append((self.stamp(m), err, st))
            elif m.arbitration_id == od_id(ENC_EST) and len(d) == 8:
                pos, vel = struct.unpack("<ff", d)
                self.od = (pos, vel, self.stamp(m))
                self.estimates += 1
                self.od_new = True
            m = self.bus.recv(0)
        return n

    def command(self):
        """One command per new reply (each MIT command is answered once, the ODrive streams
        estimates), and a kick when the MIT node has been silent for 50 ms."""
        now = self.now()
        if self.mit_feed and (self.mit_new or now - self.mit_sent_at > 0.05):
            self.mit_new = False
            dt = min(now - self.mit_sent_at, 0.05)
            self.mit_sent_at = now
            p = self.mit[0] if self.mit else SH_TARGET
            self.sh_integ += (SH_TARGET - p) * dt
            tff = max(-60.0, min(60.0, 600.0 * self.sh_integ))
            self.send(MIT_ID, mit_command(SH_TARGET, 0, 200, 8, tff))
        if self.od_feed and self.od_new:
            self.od_new = False
            dt = min(now - self.od_sent_at, 0.05)
            self.od_sent_at = now
            target = EL_TARGET * GEAR_ELBOW / (2 * math.pi)
            self.el_integ += (target - self.od[0]) * dt
            self.send(od_id(SET_INPUT_POS), struct.pack("<fhh", target + 2.0 * self.el_integ, 0, 0))

    def run(self, seconds):
        """The host loop: wait for frames, act on the newest."""
        end = self.now() + seconds
        while self.now() < end:
            self.wait(0.02)
            self.command()

    def state(self):
        return self.hb[-1][2] if self.hb else None

    def error(self):
        return self.hb[-1][1] if self.hb else None


def rate(stamps):
    return (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0


def scaling(h, what):
    q_sh, q_el, i_sh = h.joints()
    if h.mit:
        h.check(abs(h.mit[0] - q_sh) < 2e-3,
                "%s: MIT reply p %.5f rad = SHOULDER q %.5f" % (what, h.mit[0], q_sh))
        h.check(abs(h.mit[2] - i_sh) < 0.05 + 0.05 * abs(i_sh),
                "%s: MIT reply current %.3f A = SHOULDER current %.3f A" % (what, h.mit[2], i_sh))
    el = h.od[0] * 2 * math.pi / GEAR_ELBOW
    h.check(abs(el - q_el) < 2e-3,
            "%s: ODrive %.5f motor turns x 2pi / 30 = %.5f rad = ELBOW q %.5f" %
            (what, h.od[0], el, q_el))


def converge(h, seconds, what):
    h.mit_feed = h.od_feed = True
    h.run(seconds)
    q_sh, q_el, _ = h.joints()
    h.check(abs(q_sh - SH_TARGET) < 0.01, "%s: SHOULDER q %.5f reaches %.2f" % (what, q_sh, SH_TARGET))
    h.check(abs(q_el - EL_TARGET) < 0.01, "%s: ELBOW q %.5f reaches %.2f" % (what, q_el, EL_TARGET))
    h.check(h.state() == 8, "%s: ODrive heartbeat says closed loop (state %s)" % (what, h.state()))


def arm(h):
    h.send(MIT_ID, b"\xff" * 7 + b"\xfc")
    h.send(od_id(SET_AXIS_STATE), struct.pack("<I", 8))


def mode_control(h, result):
    t_end = h.now() + 10
    while h.now() < t_end and (len(h.hb) < 21 or h.od is None):
        h.wait(0.1)
    stamps = [t for t, _, _ in h.hb]
    hz = rate(stamps)
    result["idle_heartbeat_hz"] = hz
    h.check(3 <= hz <= 30, "idle: %d heartbeats at %.1f Hz of bus time (configured 10)" %
            (len(stamps), hz))
    h.check(h.state() == 1 and h.error() == 0, "idle: ODrive axis idle without error")
    h.check(h.mit_replies == 0, "idle: MIT silent until the host speaks")
    scaling(h, "at rest")
    arm(h)
    converge(h, 8.0, "closed loop")
    h.run(0.3)
    scaling(h, "steady state")
    hb0 = len(h.hb)
    h.run(2.0)
    result["loop_heartbeat_hz"] = rate([t for t, _, _ in h.hb[hb0:]])
    # ODrive watchdog: stop feeding node 2, keep the MIT loop
    h.od_feed = False
    t_stop = h.last_t
    tripped = None
    t_end = h.now() + 10
    while h.now() < t_end and tripped is None:
        h.run(0.05)
        for t, err, st in h.hb:
            if t > t_stop and st == 1 and err & ERR_WATCHDOG:
                tripped = t - t_stop
                break
    result["watchdog_trip_after_s"] = tripped
    h.check(tripped is not None, "watchdog: ODrive idle with WATCHDOG_TIMER_EXPIRED after "
            "%s s of bus time (configured 0.5)" % (None if tripped is None else "%.2f" % tripped))
    # MIT timeout: stop commanding the shoulder; its torque goes to zero and the arm falls
    q0, _, _ = h.joints()
    h.mit_feed = False
    h.run(0.6)
    q1, _, _ = h.joints()
    result["mit_silent_fall_rad"] = q1 - q0
    h.check(abs(q1 - q0) > 0.02, "MIT timeout: SHOULDER left %.3f by %.3f rad once the host "
            "went silent" % (q0, q1 - q0))


def mode_bad(h, result):
    t_end = h.now() + 10
    while h.now() < t_end and h.od is None:
        h.wait(0.1)
    arm(h)
    converge(h, 6.0, "before the bad frames")
    sent = {"mit_bad": 0, "od_bad": 0, "od_unknown": 0, "unknown_id": 0, "garbage": 0,
            "flood": 0, "flood_mit_bad": 0}
    rnd = random.Random(5)
    for k in range(10):
        sent["mit_bad"] += h.send(MIT_ID, bytes(4))  # DLC 4
        sent["mit_bad"] += h.send(MIT_ID, b"", rtr=True, dlc=8)  # remote
        sent["od_bad"] += h.send(od_id(SET_INPUT_POS), bytes(3))  # DLC 3
        sent["od_bad"] += h.send(od_id(SET_INPUT_POS), b"", rtr=True, dlc=8)
        sent["od_unknown"] += h.send(od_id(0x1F), bytes(8))
        for arb, ext in ((0x123, False), (0x7FF, False), (0x1ABCDEF, True), (MIT_ID, True)):
            sent["unknown_id"] += h.send(arb, bytes(8), ext=ext)
        h.run(0.02)
    for k in range(300):  # garbage: random IDs outside the nodes', random bytes
        arb = rnd.choice([i for i in range(0x080, 0x800, 7)])
        sent["garbage"] += h.send(arb, bytes(rnd.randrange(256) for _ in range(rnd.randrange(9))))
        if k % 50 == 0:
            h.run(0.02)
    # a flood as fast as python can send: unknown IDs and malformed MIT frames
    t0 = time.monotonic()
    for k in range(5000):
        if k % 2:
            ok = h.send(MIT_ID, bytes([k & 0xFF]) * (k % 8))  # DLC 0..7
            sent["flood_mit_bad"] += ok
        else:
            ok = h.send(0x100 + (k % 0x500), bytes(8))
        sent["flood"] += ok
        if k % 20 == 0:  # keep the loop (and the ODrive watchdog) fed through the flood
            h.hear(0)
            h.command()
            if h.lockstep:
                h.step()
    result["flood_s"] = time.monotonic() - t0
    r0, e0 = h.mit_replies, h.estimates
    converge(h, 4.0, "after the flood")
    h.check(h.mit_replies - r0 > 20 and h.estimates - e0 > 20,
            "after the flood: %d MIT replies, %d ODrive estimates" %
            (h.mit_replies - r0, h.estimates - e0))
    result["sent"] = sent


def dbc_cmd(pos, kp, kd, enable):
    return struct.pack("<hHHBx", round(pos / 1e-3), round(kp / 1e-2), round(kd / 1e-3), enable)


def mode_dbc(h, result):
    t_end = h.now() + 10
    while h.now() < t_end and len(h.dbc_states) < 50:
        h.wait(0.1)
    hz = rate(h.dbc_states)
    result["state_hz"] = hz
    h.check(10 <= hz <= 200, "ElbowState: %d frames at %.1f Hz of bus time (configured 50)" %
            (len(h.dbc_states), hz))
    h.check(h.dbc_acks == 0, "no Ack before a command")
    _, q_el, _ = h.joints()
    h.check(abs(h.dbc_state[0] - q_el) < 2e-3,
            "at rest: ElbowState Pos %.4f = ELBOW q %.4f" % (h.dbc_state[0], q_el))
    # PI over the bus: the board's PD (kp 100) plus an integral computed here
    sent, integ, last = 0, 0.0, h.now()
    t_end = h.now() + 8
    while h.now() < t_end:
        if h.wait(0.02) and h.dbc_state:
            now = h.now()
            integ += (EL_TARGET - h.dbc_state[0]) * min(now - last, 0.05)
            last = now
            sent += h.send(DBC_CMD, dbc_cmd(EL_TARGET + 2.0 * integ, 100, 3, 1))
    h.wait(0.2)
    _, q_el, _ = h.joints()
    h.check(abs(q_el - EL_TARGET) < 0.01, "closed loop: ELBOW q %.4f reaches %.2f" % (q_el, EL_TARGET))
    h.check(abs(h.dbc_state[0] - q_el) < 2e-3 and abs(h.dbc_ack - q_el) < 2e-3,
            "ElbowState Pos %.4f and Ack Pos %.4f = ELBOW q %.4f" %
            (h.dbc_state[0], h.dbc_ack, q_el))
    h.check(h.dbc_acks >= 0.9 * sent and h.dbc_acks <= sent,
            "%d ElbowCmd sent, %d acknowledged" % (sent, h.dbc_acks))
    # on request: one Wrist frame with the F/T sensor's force z
    # The sensor moves tick to tick (by up to several newtons over a few 10 ms ticks while the
    # loop here holds the arm) and the frame carries no tick number, while this peer, sharing
    # two emulated CPUs with hilsim, cannot sample every tick. So the answer must lie within
    # what the shm view showed over 0.3 s either side of the exchange: that checks the
    # binding, sign and scaling (exact values are checked on the host by test_io_can_dbc).
    kind, ft = h.shm.find_sensor("WRIST_FT")
    seen = []

    def hold_and_sample(seconds, until=None):
        t_end = h.now() + seconds
        while h.now() < t_end and not (until and until()):
            seen.append(h.shm.read_state().ft_force[ft][2])
            if h.wait(0.002):  # keep holding the arm meanwhile
                h.send(DBC_CMD, dbc_cmd(EL_TARGET + 2.0 * integ, 100, 3, 1))

    hold_and_sample(0.3)
    w0 = h.dbc_wrists
    h.send(DBC_WRIST, b"", rtr=True, dlc=4)
    hold_and_sample(5, until=lambda: h.dbc_wrists != w0)
    answered = h.dbc_wrists
    hold_and_sample(0.3)
    lo, hi = min(seen) - 0.01, max(seen) + 0.01
    result["wrist_fz"] = [h.dbc_wrist, lo, hi]
    h.check(answered == w0 + 1 and h.dbc_wrists == w0 + 1 and h.dbc_wrist is not None and
            lo <= h.dbc_wrist <= hi,
            "Wrist on request: %d frame, Fz %s N within the sensor's [%.3f, %.3f] N around it "
            "(%d samples)" % (h.dbc_wrists - w0, h.dbc_wrist, lo, hi, len(seen)))
    # enable 0: the output is off, the arm sags under gravity
    q0 = q_el
    t_end = h.now() + 1.0
    while h.now() < t_end:
        if h.wait(0.02):
            h.send(DBC_CMD, dbc_cmd(EL_TARGET, 100, 3, 0))
    _, q1, _ = h.joints()
    result["disabled_sag_rad"] = q1 - q0
    h.check(abs(q1 - q0) > 0.05, "enable 0: ELBOW left %.3f by %.3f rad" % (q0, q1 - q0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["control", "bad", "dbc"], required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--channel", default="vcan0")
    ap.add_argument("--lockstep", action="store_true")
    a = ap.parse_args()
    h = Host(a.channel, a.bench, a.lockstep)
    result = {"mode": a.mode}
    try:
        {"control": mode_control, "bad": mode_bad, "dbc": mode_dbc}[a.mode](h, result)
    finally:
        result["failures"] = h.failures
        result["mit_replies"] = h.mit_replies
        result["heartbeats"] = len(h.hb)
        result["estimates"] = h.estimates
        with open(a.result, "w") as f:
            json.dump(result, f, indent=1)
        h.bus.shutdown()
        h.shm.detach()
    return 1 if h.failures else 0


if __name__ == "__main__":
    sys.exit(main())
