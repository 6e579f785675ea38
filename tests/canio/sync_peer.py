"""sync_peer.py --period-ms P --offset X --bench NAME --result FILE.json [--channel vcan0] [phases]

A CANopen-style master for hilsim's sync clock (rt.clock.mode sync, rt.clock.sync.source can),
with Debian's python-can on SocketCAN (run with /usr/bin/python3 in the PREEMPT_RT guest). On
its own clock, a period P x (1 + X) (X = -0.005: 0.5 % fast against hilsim's nominal P), it
sends a SYNC (COB-ID 0x080, no data) and right after it one MIT command to motor 1: a PD hold
whose torque feed-forward changes every cycle, so the joint's current, and with it the reply,
differs from one tick to the next. hilsim answers every command frame with one reply from the
tick that applied it (replies: tick).

What is judged is behaviour, not timing, so an emulated guest's stalls cannot fail it:
  double   two commands applied in one tick: their replies come from the same tick and are
           byte-identical. Counted over consecutive replies of the judged window.
  missing  a tick without a command: over the window, hilsim's ticks (its shm view's tick
           number at the window's first and last SYNC) outnumber the commands. With no doubles,
           equal counts (+-1 for where the tick falls against the reads) mean no tick went
           without a command.
Two identical replies are counted apart, not judged, when the master itself put the two commands
together, by its own frames' kernel stamps (SO_TIMESTAMP, read back), which the peer's own
scheduling delays cannot change:
  bunched  it sent the two commands less than half a period apart (the guest stalled it between
           its timer and its send);
  late     it sent the first command more than a quarter period after it was due on its own
           schedule (a stall before its SYNC or between the two sends): hilsim's tick, half a
           period after the SYNC was due, may have taken the SYNC and not the command, or the
           late SYNC moved its phase; outside that window, as outside CANopen's synchronous
           window, the command belongs to whichever tick comes next. Judged instead: at most
           10 % of the cycles late.
A cycle the master itself could not send on time (the emulated guest stalled it by more than a
quarter period) is skipped, as a periodic timer would, and counted: its tick has no command.
A free-running tick 0.5 % off beats against the master: a tick more or less every 200 cycles,
and the doubles show. Printed besides (a figure, not judged): the reply phase, kernel receive
stamp of the reply minus that of its SYNC (the peer reads its own frames back).

Also written (for guest-sync.sh's judgement of hilsim's own count), over the whole run: how many
SYNCs left more than a quarter period after they were due, by their kernel stamps.

Phases (seconds): --acquire (not judged: hilsim pulls in), --judge, --silence (SYNC stops,
commands go on: hilsim must free-run and say so), --resume (SYNC again: it locks again). Exit 0
when the judged window had no double and as many ticks as commands (+-1); with --expect-beat
(the wall-clock baseline), when it had not."""
import argparse
import json
import math
import os
import sys
import time

import can

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client  # noqa: E402

SYNC_ID, MIT_ID, MIT_MASTER = 0x080, 1, 0
P_RANGE, V_RANGE, KP_RANGE, KD_RANGE, T_RANGE = (-12.5, 12.5), (-50, 50), (0, 500), (0, 10), (-80, 80)


def f2u(x, lo, hi, bits):
    x = min(max(x, lo), hi)
    return int((x - lo) * ((1 << bits) - 1) / (hi - lo))


def mit_command(p, v, kp, kd, t):
    p, v, kp, kd, t = (f2u(p, *P_RANGE, 16), f2u(v, *V_RANGE, 12), f2u(kp, *KP_RANGE, 12),
                       f2u(kd, *KD_RANGE, 12), f2u(t, *T_RANGE, 12))
    return bytes([p >> 8, p & 0xFF, v >> 4, (v & 0xF) << 4 | kp >> 8, kp & 0xFF, kd >> 4,
                  (kd & 0xF) << 4 | t >> 8, t & 0xFF])


def stats(xs):
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


class Master:
    def __init__(self, channel, period_s, bench):
        self.bus = can.Bus(interface="socketcan", channel=channel, receive_own_messages=True)
        self.shm = hilsim_client.Client(bench)
        self.period = period_s
        self.frames = []  # (kernel stamp, id, data) in bus order, own frames included
        self.k = 0
        self.marks = {}  # phase -> [(shm tick, frame index, commands) at its first and last SYNC]
        self.skipped = {}  # phase -> cycles skipped because the master itself was late
        self.sync = can.Message(arbitration_id=SYNC_ID, is_extended_id=False, data=b"")
        self.sync_due = []  # when each SYNC was due, time.monotonic()
        self.cmd_due = []  # when each command (index self.k) was due
        # kernel stamps (SO_TIMESTAMP) are CLOCK_REALTIME: their offset from time.monotonic()
        self.real_minus_mono = time.time() - time.monotonic()

    def command(self):
        # the feed-forward steps every cycle: about 1 A of joint current per cycle
        t = 6.0 * math.sin(self.k * 2.1)
        self.k += 1
        return can.Message(arbitration_id=MIT_ID, is_extended_id=False,
                           data=mit_command(0.3, 0, 40, 1.0, t))

    def send(self, m):
        for _ in range(100):
            try:
                self.bus.send(m)
                return
            except can.CanError:  # ENOBUFS: the queue is full for a moment
                time.sleep(0.0005)

    def drain(self, until):
        """Reads frames until the time.monotonic() deadline, then what is queued."""
        while True:
            m = self.bus.recv(max(until - time.monotonic(), 0))
            if m is None:
                return
            if not m.is_extended_id and not m.is_error_frame:
                self.frames.append((m.timestamp, m.arbitration_id, bytes(m.data)))

    def run(self, seconds, phase, with_sync):
        n = int(round(seconds / self.period))
        start = time.monotonic()
        for k in range(n):
            self.drain(start + k * self.period)
            edge = k in (0, n - 1)
            if not edge and time.monotonic() > start + (k + 0.25) * self.period:
                # The guest stalled this master: a periodic timer skips the cycle (sending it
                # late would put two cycles in one of hilsim's ticks). Counted, not judged.
                self.skipped[phase] = self.skipped.get(phase, 0) + 1
                continue
            if with_sync:
                self.sync_due.append(start + k * self.period)
                self.send(self.sync)
            self.cmd_due.append(start + k * self.period)  # for the command made below
            if edge:  # hilsim's tick count at the window's edges
                self.marks.setdefault(phase, []).append(
                    (self.shm.read_state().tick, len(self.frames), self.k))
            self.send(self.command())
        self.drain(start + n * self.period)

    def late_syncs(self):
        """SYNCs that left (kernel stamp of the frame read back) more than a quarter period after
        they were due, over the whole run: the master's own stalls."""
        stamps = [t - self.real_minus_mono for t, i, _ in self.frames if i == SYNC_ID]
        return sum(1 for t, due in zip(stamps, self.sync_due) if t - due > self.period / 4)

    def judge(self, phase):
        """Doubles, ticks and commands over a phase's window, and the reply phases."""
        (t0, f0, k0), (t1, f1, k1) = self.marks[phase]
        window = self.frames[f0:f1]
        replies = [d for _, i, d in window if i == MIT_MASTER]
        sent = [t for t, i, _ in window if i == MIT_ID]  # own commands k0.., kernel stamps
        # how long after it was due each command left (kernel stamp, on time.monotonic())
        delay = [t - self.real_minus_mono - self.cmd_due[k0 + j] for j, t in enumerate(sent)
                 if k0 + j < len(self.cmd_due)]
        late_cycles = sum(1 for d in delay if d > self.period / 4)
        doubles = bunched = late = 0
        for k, (a, b) in enumerate(zip(replies, replies[1:])):
            if a != b:
                continue
            # The master itself put the two commands together (see the module's text): its
            # fault, counted apart, not hilsim's.
            if k + 1 < len(sent) and sent[k + 1] - sent[k] < self.period / 2:
                bunched += 1
            elif k < len(delay) and delay[k] > self.period / 4:
                late += 1
            else:
                doubles += 1
        phases, last_sync = [], None
        for t, i, _ in window:
            if i == SYNC_ID:
                last_sync = t
            elif i == MIT_MASTER and last_sync is not None:
                phases.append(t - last_sync)
                last_sync = None
        return {"commands": k1 - k0, "skipped": self.skipped.get(phase, 0), "ticks": t1 - t0,
                "replies": len(replies), "bunched": bunched, "late": late,
                "late_cycles": late_cycles,
                "doubles": doubles, "phases": phases,
                "first_frames": [("%.6f" % t, i, d.hex()) for t, i, d in window[:60]]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--channel", default="vcan0")
    ap.add_argument("--bench", required=True)
    ap.add_argument("--period-ms", type=float, required=True)
    ap.add_argument("--offset", type=float, default=-0.005)
    ap.add_argument("--acquire", type=float, default=3.0)
    ap.add_argument("--judge", type=float, default=20.0)
    ap.add_argument("--silence", type=float, default=0.0)
    ap.add_argument("--resume", type=float, default=0.0)
    ap.add_argument("--expect-beat", action="store_true")
    ap.add_argument("--result", required=True)
    a = ap.parse_args()
    m = Master(a.channel, a.period_ms / 1e3 * (1 + a.offset), a.bench)
    m.send(can.Message(arbitration_id=MIT_ID, is_extended_id=False, data=b"\xff" * 7 + b"\xfc"))
    m.run(a.acquire, "acquire", True)
    m.run(a.judge, "judge", True)
    if a.silence:
        m.run(a.silence, "silence", False)
    if a.resume:
        m.run(a.resume, "resume", True)
    m.bus.shutdown()
    m.shm.detach()

    j = m.judge("judge")
    mean, sd = stats(j["phases"])
    res = {k: v for k, v in j.items() if k != "phases"}
    res.update(period_s=m.period, late_syncs=m.late_syncs(),
               reply_phase_mean_ms=None if mean is None else mean * 1e3,
               reply_phase_sd_ms=None if sd is None else sd * 1e3)
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1)
    missing = j["ticks"] - j["commands"] - j["skipped"]
    print("sync peer: %d cycles with a command, %d skipped (the master late), %d hilsim ticks, %d "
          "replies, %d doubles (two commands in one tick); reply phase after SYNC %.2f ms +- "
          "%.2f ms (sd)" % (j["commands"], j["skipped"], j["ticks"], j["replies"], j["doubles"],
                            (mean or 0) * 1e3, (sd or 0) * 1e3), flush=True)
    if j["bunched"] or j["late"]:
        print("sync peer: %d doubles not judged: the master sent their two commands less than "
              "half a period apart (%d), or the first more than a quarter period after it was "
              "due (%d; %d such cycles in all)" % (j["bunched"] + j["late"], j["bunched"], j["late"],
                                               j["late_cycles"]))
    if not a.expect_beat and j["skipped"] > 0.1 * (j["commands"] + j["skipped"]):
        print("FAIL the master itself was late in more than 10 %% of its cycles (%d)" % j["skipped"])
        return 1
    if not a.expect_beat and j["late_cycles"] > 0.1 * j["commands"]:
        print("FAIL the master sent more than 10 %% of its commands more than a quarter period "
              "late (%d)" % j["late_cycles"])
        return 1
    beat = j["doubles"] > 0 or abs(missing) > 1
    if j["replies"] < j["commands"] - 1:
        print("FAIL %d commands, only %d replies" % (j["commands"], j["replies"]))
        return 1
    if a.expect_beat:
        return 0 if beat else 1
    return 1 if beat else 0


if __name__ == "__main__":
    sys.exit(main())
