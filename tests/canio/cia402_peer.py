"""cia402_peer.py --bench NAME --result FILE.json [--channel vcan0]

A CANopen master for two CiA 402 drives, for `hilsim run tests/canio/arm2-cia402-guest.yaml`,
with Debian's python-can on SocketCAN (run with /usr/bin/python3 in the PREEMPT_RT guest).
SHOULDER is node 1, ELBOW node 2. Every frame is packed here from CiA 301 / CiA 402 (COB-IDs of
the pre-defined connection set, SDO command specifiers, PDO mapping entries index << 16 |
sub << 8 | bits, controlword commands, statusword patterns), independently of hilsim's codec.
The joints' true angles come from hilsim's read-only shm view (python/hilsim_client.py), so the
wire scaling (131072 increments per revolution, torque per mille of the rated torque) is checked
against the plant.

Script: NMT reset node to all (boot-up from both), SDO reads (0x1000 device type, 0x6502
supported modes, an unknown object's abort), PDO mapping by SDO as CiA 301 prescribes (RPDO1 =
controlword + target position + target torque, synchronous; TPDO1 = statusword + position
actual + torque actual, TPDO2 = velocity actual + mode display, every SYNC), heartbeat 0x1017,
NMT start, then SYNC cycles: the power state machine walked to operation enabled; a CSP loop
(the master ramps the target and integrates the error into it) to both goals; a CST loop (the
master's PID on the TPDO's position and velocity) to new goals; a following-error fault on
ELBOW (EMCY 0x8611, statusword fault), fault reset (EMCY 0x0000), enable again; NMT stop
(heartbeat state 4).

hilsim runs in lockstep (arm2-cia402-guest.yaml: rt.clock.mode lockstep, released by each SYNC
the master sends), so every wait here is counted in SYNCs, that is ticks: an SDO answer, boot-up
or heartbeat comes from the tick the next SYNC releases, and the master sends SYNCs until it has
it (a few at most; the heartbeat: 30). The wall clock only bounds a wait for a hung bench
(WAIT_S, generous), and no result depends on the guest's speed.

Tolerances: at steady state the goal within 5e-3 rad (CSP) and 0.01 rad (CST); the TPDO's
position against the shm angle within 2e-3 rad (a tick apart); in CSP at rest the drive's law
torque = kp (target - q) within 3 % + 0.1 N*m; in CST the torque actual equals the commanded
within 1 per mille. No timing is asserted. Exit 0 when every check passed."""
import argparse
import json
import math
import os
import struct
import sys
import time

import can

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client  # noqa: E402

SH, EL = 1, 2
NAMES = {SH: "SHOULDER", EL: "ELBOW"}
CPR = 131072
RATED = {SH: 20.0, EL: 5.0}  # N*m, the config's rated_torque_nm
KP = {SH: 300.0, EL: 120.0}  # the config's position_kp_nm_rad
NMT, SYNC = 0x000, 0x080
# The longest wall-clock wait for the answers of one tick: a hung bench, not a slow one.
WAIT_S = 30.0
# statusword (mask, value) per state, CiA 402-2 table 30
SOD, RTSO, SO, OE, FAULT = (0x4F, 0x40), (0x6F, 0x21), (0x6F, 0x23), (0x6F, 0x27), (0x4F, 0x08)


def counts(rad):
    return int(round(rad * CPR / (2 * math.pi)))


def rad(c):
    return c * 2 * math.pi / CPR


class Master:
    def __init__(self, channel, bench):
        self.bus = can.Bus(interface="socketcan", channel=channel)
        self.shm = hilsim_client.Client(bench)
        self.j = {n: self.shm.find_joint(NAMES[n]) for n in (SH, EL)}
        self.failures = []
        self.boot = set()
        self.hb = {}  # node -> last heartbeat state
        self.emcy = []  # (node, code, error register)
        self.sdo_rx = {}
        self.tp1 = {}  # node -> (statusword, position, torque)
        self.tp2 = {}  # node -> (velocity, mode display)
        self.fresh = set()
        self.cmd = {n: [0, 0, 0] for n in (SH, EL)}  # controlword, target position, torque

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)

    def send(self, cob, data):
        m = can.Message(arbitration_id=cob, data=bytes(data), is_extended_id=False)
        for _ in range(200):
            try:
                self.bus.send(m)
                return
            except can.CanError:  # ENOBUFS: the queue is full, retry shortly
                time.sleep(0.001)
        self.check(False, "could not send 0x%03X" % cob)

    def state(self):
        """The shm snapshot; a read that meets the writer mid-tick (EAGAIN) is retried, as the
        seqlock's reader must when the guest is slow."""
        for _ in range(1000):
            try:
                return self.shm.read_state()
            except hilsim_client.HilsimError as e:
                if e.errno != 11:
                    raise
                time.sleep(0.001)
        raise TimeoutError("no consistent shm snapshot in 1000 tries")

    def q(self, node):
        return self.state().q[self.j[node]]

    def hear(self, timeout):
        m = self.bus.recv(timeout)
        while m is not None:
            if not m.is_extended_id and not m.is_remote_frame:
                self.take(m.arbitration_id, bytes(m.data))
            m = self.bus.recv(0)

    def take(self, cob, d):
        fn, node = cob & 0x780, cob & 0x7F
        if node not in (SH, EL):
            return
        if fn == 0x700 and len(d) == 1:
            if d[0] == 0:
                self.boot.add(node)
            self.hb[node] = d[0]
        elif fn == 0x080 and len(d) == 8:
            code, reg = struct.unpack_from("<HB", d)
            self.emcy.append((node, code, reg))
            print("EMCY node %d: 0x%04X register 0x%02X" % (node, code, reg), flush=True)
        elif fn == 0x580 and len(d) == 8:
            self.sdo_rx[node] = d
        elif fn == 0x180 and len(d) == 8:
            self.tp1[node] = struct.unpack("<Hih", d)
            self.fresh.add((1, node))
        elif fn == 0x280 and len(d) == 5:
            self.tp2[node] = struct.unpack("<ib", d)
            self.fresh.add((2, node))

    # ---- lockstep: each SYNC releases one of hilsim's ticks, which answers ----
    def settle(self, done, ticks):
        """SYNCs, one at a time, until done() or `ticks` of them: every answer comes from the tick
        a SYNC releases, so what is waited for is counted in ticks. After each SYNC the wait
        ends once done() or its tick ran (the shm view's tick number moved); the wall-clock
        bound only guards against a hung bench and is generous (an emulated, loaded guest is
        slow)."""
        for _ in range(ticks):
            if done():
                return True
            tick = self.state().tick
            self.send(SYNC, b"")
            end = time.monotonic() + WAIT_S
            while not done() and time.monotonic() < end:
                self.hear(0.02)
                if self.state().tick > tick:  # its tick ran: take what it sent, then go on
                    self.hear(0.05)
                    break
        return done()

    # ---- SDO (expedited; CiA 301 7.2.4.3) ----
    def sdo(self, node, req):
        """The answer comes from the tick after the request: one SYNC; more only if it did not
        (a lost frame), a few ticks at most."""
        self.sdo_rx.pop(node, None)
        self.send(0x600 + node, req)
        self.settle(lambda: node in self.sdo_rx, 5)
        return self.sdo_rx.get(node)

    def sdo_write(self, node, index, sub, value, size):
        req = bytes([0x23 | (4 - size) << 2, index & 0xFF, index >> 8, sub])
        req += (value & 0xFFFFFFFF).to_bytes(4, "little")[:size] + bytes(4 - size)
        r = self.sdo(node, req)
        if r is None:
            return "timeout"
        if r[0] == 0x80:
            return struct.unpack_from("<I", r, 4)[0]
        return 0 if r[0] == 0x60 and r[1:4] == req[1:4] else "bad answer %s" % r.hex()

    def sdo_read(self, node, index, sub):
        r = self.sdo(node, bytes([0x40, index & 0xFF, index >> 8, sub, 0, 0, 0, 0]))
        if r is None:
            return None, "timeout"
        if r[0] == 0x80:
            return None, struct.unpack_from("<I", r, 4)[0]
        if r[0] & 0xF3 != 0x43:
            return None, "bad answer %s" % r.hex()
        n = 4 - (r[0] >> 2 & 3)
        return int.from_bytes(r[4:4 + n], "little"), 0

    def w(self, node, index, sub, value, size, what):
        r = self.sdo_write(node, index, sub, value, size)
        if r != 0:
            self.check(False, "SDO %s node %d 0x%04X:%d: %s" % (what, node, index, sub,
                                                               hex(r) if isinstance(r, int) else r))
        return r == 0

    # ---- PDO mapping by SDO, CiA 301: invalid, count 0, entries, count, type, valid ----
    def map_pdo(self, node, comm, mapping, cob, entries, ttype):
        ok = self.w(node, comm, 1, 0x80000000 | cob, 4, "PDO invalid")
        ok &= self.w(node, mapping, 0, 0, 1, "mapping count 0")
        for i, e in enumerate(entries):
            ok &= self.w(node, mapping, i + 1, e, 4, "mapping entry")
        ok &= self.w(node, mapping, 0, len(entries), 1, "mapping count")
        ok &= self.w(node, comm, 2, ttype, 1, "transmission type")
        ok &= self.w(node, comm, 1, cob, 4, "PDO valid")
        return ok

    # ---- one SYNC cycle: RPDO1 to both, SYNC, both nodes' TPDO1 and TPDO2 ----
    def cycle(self):
        for n in (SH, EL):
            cw, pos, tq = self.cmd[n]
            self.send(0x200 + n, struct.pack("<Hih", cw, pos, tq))
        self.fresh.clear()
        self.send(SYNC, b"")
        # the SYNC's tick sends all four TPDOs; the wait guards against a hung bench only
        end = time.monotonic() + WAIT_S
        want = {(1, SH), (1, EL), (2, SH), (2, EL)}
        while not want <= self.fresh and time.monotonic() < end:
            self.hear(0.02)
        return want <= self.fresh

    def run(self, cycles, law=None):
        missed = 0
        for _ in range(cycles):
            if law:
                law()
            if not self.cycle():
                missed += 1
        return missed

    def state_is(self, node, pat):
        return node in self.tp1 and self.tp1[node][0] & pat[0] == pat[1]

    def walk(self, node, cw, pat, what):
        """Sends cw until the statusword shows pat; the CSP target follows the position until
        then, so enabling holds the joint where it is."""
        self.cmd[node][0] = cw
        for _ in range(20):
            if node in self.tp1:
                self.cmd[node][1] = self.tp1[node][1]
            self.cycle()
            if self.state_is(node, pat):
                break
        self.check(self.state_is(node, pat), "%s %s: statusword 0x%04X" %
                   (NAMES[node], what, self.tp1.get(node, (0,))[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--channel", default="vcan0")
    a = ap.parse_args()
    m = Master(a.channel, a.bench)
    res = {}
    # NMT reset node to all: both boot up (the broadcast reaches both drives)
    m.send(NMT, bytes([0x81, 0]))
    m.settle(lambda: m.boot == {SH, EL}, 5)
    m.check(m.boot == {SH, EL}, "NMT reset node: boot-up from %s" % sorted(m.boot))
    for n in (SH, EL):
        v, e = m.sdo_read(n, 0x1000, 0)
        m.check(v == 0x00020192, "%s 0x1000 device type 0x%08X (CiA 402 servo)" % (NAMES[n], v or 0))
        v, e = m.sdo_read(n, 0x6502, 0)
        m.check(v is not None and v & (1 << 7) and v & (1 << 9),
                "%s 0x6502 supported modes 0x%X include CSP and CST" % (NAMES[n], v or 0))
    v, e = m.sdo_read(SH, 0x2345, 0)
    m.check(e == 0x06020000, "unknown object: abort 0x%08X" % (e if isinstance(e, int) else 0))
    e = m.sdo_write(SH, 0x6041, 0, 0, 2)
    m.check(e == 0x06010002, "statusword write: abort 0x%08X" % (e if isinstance(e, int) else 0))
    # PDO mapping by SDO; heartbeat 100 ms; CSP mode
    for n in (SH, EL):
        ok = m.map_pdo(n, 0x1400, 0x1600, 0x200 + n, [0x60400010, 0x607A0020, 0x60710010], 1)
        ok &= m.map_pdo(n, 0x1800, 0x1A00, 0x40000180 + n,
                        [0x60410010, 0x60640020, 0x60770010], 1)
        ok &= m.map_pdo(n, 0x1801, 0x1A01, 0x40000280 + n, [0x606C0020, 0x60610008], 1)
        ok &= m.w(n, 0x1017, 0, 100, 2, "heartbeat")
        ok &= m.w(n, 0x6060, 0, 8, 1, "mode CSP")
        m.check(ok, "%s: PDOs mapped by SDO, heartbeat 100 ms, CSP" % NAMES[n])
    e = m.sdo_write(SH, 0x1600, 1, 0x60410010, 4)
    m.check(e == 0x06010000, "mapping a valid PDO: abort 0x%08X" % (e if isinstance(e, int) else 0))
    m.send(NMT, bytes([0x01, 0]))
    # the first cycles: targets from the present positions (no jump when enabled)
    m.run(3)
    for n in (SH, EL):
        m.check(m.state_is(n, SOD), "%s switch on disabled after start" % NAMES[n])
        m.cmd[n][1] = m.tp1.get(n, (0, 0, 0))[1]
    for n in (SH, EL):
        m.walk(n, 0x06, RTSO, "shutdown -> ready to switch on")
        m.walk(n, 0x07, SO, "switch on -> switched on")
        m.walk(n, 0x0F, OE, "enable operation -> operation enabled")
    for n in (SH, EL):
        m.check(m.tp2.get(n, (0, 0))[1] == 8, "%s mode display 8 (CSP)" % NAMES[n])
    # ---- CSP: the master ramps the target at 0.5 rad/s and integrates the error into it ----
    goal = {SH: 0.8, EL: 1.0}
    start = {n: rad(m.tp1[n][1]) for n in (SH, EL)}
    integ = {SH: 0.0, EL: 0.0}
    k = [0]

    def csp():
        k[0] += 1
        t = k[0] * 0.01
        for n in (SH, EL):
            ref = goal[n] if abs(goal[n] - start[n]) <= 0.5 * t else start[n] + math.copysign(
                0.5 * t, goal[n] - start[n])
            # one cycle is one tick (lockstep): the gain of test_io_cia402's same loop (0.05 per
            # cycle was for the wall clock's 30-40 ms cycles, and rings at one tick per cycle)
            if n in m.tp1 and ref == goal[n]:
                integ[n] += 0.01 * (goal[n] - rad(m.tp1[n][1]))
            m.cmd[n][1] = counts(ref + integ[n])
    missed = m.run(700, csp)
    res["csp_missed_cycles"] = missed
    m.check(missed == 0, "CSP: every SYNC answered by its tick's four TPDOs (%d missed)" % missed)
    for n in (SH, EL):
        q = m.q(n)
        res["csp_q_%s" % NAMES[n]] = q
        m.check(abs(q - goal[n]) < 5e-3, "CSP: %s q %.5f reaches %.2f" % (NAMES[n], q, goal[n]))
        p = rad(m.tp1[n][1])
        m.check(abs(p - q) < 2e-3, "CSP: %s TPDO position %.5f = plant %.5f" % (NAMES[n], p, q))
        v = rad(m.tp2[n][0])
        m.check(abs(v) < 0.02, "CSP: %s at rest, velocity actual %.4f rad/s" % (NAMES[n], v))
        tau = m.tp1[n][2] * RATED[n] / 1000
        law = KP[n] * (rad(m.cmd[n][1]) - p)
        m.check(abs(tau - law) < 0.03 * abs(law) + 0.1,
                "CSP: %s torque actual %.3f N*m = kp (target - q) %.3f" % (NAMES[n], tau, law))
        res["csp_tau_%s" % NAMES[n]] = tau
    # ---- CST on SHOULDER: the master's PID on the TPDO's position and velocity ----
    # In lockstep each cycle is one 10 ms tick of simulated time, however slow the guest; the
    # integral runs on the shm view's sim_time_s, and its median step is checked to be one tick.
    # ELBOW (about 0.06 kg*m^2) holds its CSP goal here and closes its CST loop in
    # test_io_cia402.
    n = SH
    m.cmd[n][2] = int(round(res["csp_tau_SHOULDER"] / RATED[n] * 1000))  # holding torque first
    m.run(1)
    m.w(n, 0x6060, 0, 10, 1, "mode CST")
    goal = 0.5
    kp, kd, ki = 40.0, 5.0, 20.0
    integ = [res["csp_tau_SHOULDER"]]
    last = [m.state().sim_time_s]
    periods = []

    def cst():
        now = m.state().sim_time_s
        dt = min(max(now - last[0], 0.0), 0.1)
        periods.append(dt)
        last[0] = now
        e = goal - rad(m.tp1[n][1])
        integ[0] += ki * e * dt
        tau = kp * e - kd * rad(m.tp2[n][0]) + integ[0]
        m.cmd[n][2] = max(-32768, min(32767, int(round(tau / RATED[n] * 1000))))
    m.run(3)
    m.check(m.tp2[n][1] == 10 and m.tp2[EL][1] == 8, "mode display: SHOULDER 10 (CST), ELBOW 8")
    missed = m.run(900, cst)
    periods.sort()
    res["cst_missed_cycles"] = missed
    res["cst_sample_s_median"] = periods[len(periods) // 2] if periods else None
    m.check(missed == 0, "CST: every SYNC answered by its tick's four TPDOs (%d missed)" % missed)
    m.check(abs((res["cst_sample_s_median"] or 0) - 0.01) < 1e-6,
            "CST: the master's sample time, median %.4f s of simulated time: one tick (lockstep)"
            % (res["cst_sample_s_median"] or 0))
    q = m.q(n)
    res["cst_q_SHOULDER"] = q
    m.check(abs(q - goal) < 0.01, "CST: SHOULDER q %.5f reaches %.2f" % (q, goal))
    m.check(abs(rad(m.tp1[n][1]) - q) < 2e-3, "CST: SHOULDER TPDO position %.5f = plant %.5f"
            % (rad(m.tp1[n][1]), q))
    m.check(abs(m.q(EL) - 1.0) < 5e-3, "CST: ELBOW still at its CSP goal (%.5f)" % m.q(EL))
    m.run(1)  # the torque actual of the cycle that applied the last command
    got, want = m.tp1[n][2], m.cmd[n][2]
    m.check(abs(got - want) <= 1, "CST: SHOULDER torque actual %d = commanded %d per mille"
            % (got, want))
    # ---- fault: ELBOW (in CSP) gets a small following-error window, then a step ----
    m.w(EL, 0x6065, 0, counts(0.05), 4, "following error window")
    m.w(EL, 0x6066, 0, 20, 2, "following error timeout")
    m.cmd[EL][2] = 0
    m.emcy.clear()
    m.cmd[EL][1] += counts(1.5)
    for _ in range(30):
        m.cycle()
        if m.state_is(EL, FAULT):
            break
    m.check(any(x[0] == EL and x[1] == 0x8611 for x in m.emcy),
            "fault: EMCY 0x8611 following error from ELBOW (%s)" % m.emcy)
    m.check(m.state_is(EL, FAULT), "fault: ELBOW statusword 0x%04X shows fault" % m.tp1[EL][0])
    v, e = m.sdo_read(EL, 0x603F, 0)
    m.check(v == 0x8611, "fault: 0x603F error code 0x%04X" % (v or 0))
    m.check(m.state_is(SH, OE), "fault: SHOULDER still operation enabled")
    # reset: controlword bit 7 rising edge
    m.emcy.clear()
    m.cmd[EL][0] = 0x00
    m.run(2)
    m.cmd[EL][0] = 0x80
    for _ in range(10):
        m.cycle()
        if m.state_is(EL, SOD):
            break
    m.check(m.state_is(EL, SOD), "fault reset: ELBOW switch on disabled")
    m.check(any(x[0] == EL and x[1] == 0 for x in m.emcy), "fault reset: EMCY 0x0000 (%s)" % m.emcy)
    m.w(EL, 0x6065, 0, counts(math.pi / 2), 4, "following error window back")
    m.walk(EL, 0x06, RTSO, "after reset: ready to switch on")
    m.walk(EL, 0x0F, OE, "after reset: switch on + enable operation")
    # NMT stop to all: heartbeats say 4
    m.hb.clear()
    m.send(NMT, bytes([0x02, 0]))
    # the heartbeat period is 100 ms: 10 ticks; 30 ticks are ample
    m.settle(lambda: m.hb.get(SH) == 4 and m.hb.get(EL) == 4, 30)
    m.check(m.hb.get(SH) == 4 and m.hb.get(EL) == 4, "NMT stop: heartbeats %s" % m.hb)
    res["failures"] = m.failures
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1)
    return 1 if m.failures else 0


if __name__ == "__main__":
    sys.exit(main())
