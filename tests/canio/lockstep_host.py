"""The bus host the two-actuator guest peers share (moteus_peer.py, robstride_peer.py): a
python-can bus on SocketCAN and hilsim's read-only shm view of `hilsim run
tests/canio/arm2-<protocol>-guest.yaml`, SHOULDER as unit 1 and ELBOW as unit 2.

Lockstep (the configs' rt.clock.mode lockstep, released by the host's SYNC, a classic 0x080
frame with no data): hear() sends a SYNC, waits for the tick it released and then reads that
tick's answers; the host's clock is the bench's simulated time (ticks x period), so every loop
and duration runs the same however slow the emulated guest is. Without lockstep, the wall clock.

A peer subclasses Host with its protocol: on_frame(message) decodes what the units answer,
measured(unit) gives the joint angle they last reported (rad, or None), and command(unit, ff)
sends the position command with feed-forward ff (N·m) that drive() computes."""
import argparse
import json
import os
import sys
import time

import can

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import hilsim_client  # noqa: E402

SH, EL = 1, 2
TARGET = {SH: 0.8, EL: 1.0}  # rad
JOINT = {SH: "SHOULDER", EL: "ELBOW"}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--channel", default="vcan0")
    return ap.parse_args()


class Host:
    unit_name = "unit"  # in messages: "servo", "motor"

    def __init__(self, channel, bench, fd=False):
        self.bus = can.Bus(interface="socketcan", channel=channel, fd=fd)
        self.shm = hilsim_client.Client(bench)
        self.j = {u: self.shm.find_joint(n) for u, n in JOINT.items()}
        self.sent = {SH: 0, EL: 0}
        self.new = {SH: False, EL: False}  # a report came since the last command
        self.failures = []
        self.integ = {SH: 0.0, EL: 0.0}
        self.sent_at = {SH: 0.0, EL: 0.0}
        self.feed = {SH: False, EL: False}  # drive() commands the unit
        self.lockstep = self.shm.lockstep
        self.period = self.shm.info.tick_period_ns * 1e-9

    def now(self):
        """The host's clock: the bench's simulated time in lockstep, else the wall clock."""
        return self.shm.read_state().tick * self.period if self.lockstep else time.monotonic()

    def tick(self):
        """Lockstep: SYNC releases one tick; waits for it."""
        t = self.shm.read_state().tick
        self.bus.send(can.Message(arbitration_id=0x080, data=b"", is_extended_id=False))
        end = time.monotonic() + 30
        while self.shm.read_state().tick <= t and time.monotonic() < end:
            try:
                self.shm.wait_tick(1.0)  # the futex: no polling on a starved guest
            except TimeoutError:
                pass

    def send_message(self, unit, m):
        for _ in range(200):
            try:
                self.bus.send(m)
                self.sent[unit] += 1
                return
            except can.CanError:  # ENOBUFS: the interface queue is full, retry shortly
                time.sleep(0.001)
        self.check(False, "could not send to %s %d" % (self.unit_name, unit))

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)

    def q(self, unit):
        return self.shm.read_state().q[self.j[unit]]

    def hear(self, timeout):
        """Reads what came within timeout; in lockstep, one tick's answers instead."""
        if self.lockstep:
            self.tick()
            timeout = 0.02  # the tick's answers follow its state by a moment
        m = self.bus.recv(timeout)
        while m is not None:
            self.on_frame(m)
            m = self.bus.recv(0)

    def drive(self):
        """The PI loop over the bus: one command per new report per fed unit, and a kick after
        50 ms of silence, with the integral of the target error (x 300, within ±50 N·m) as
        feed-forward on top of the unit's own PD. Returns the host's time."""
        now = self.now()
        for u in (SH, EL):
            if self.feed[u] and (self.new[u] or now - self.sent_at[u] > 0.05):
                self.new[u] = False
                dt = min(now - self.sent_at[u], 0.05)
                self.sent_at[u] = now
                q = self.measured(u)
                self.integ[u] += (TARGET[u] - (TARGET[u] if q is None else q)) * dt
                self.command(u, max(-50.0, min(50.0, 300 * self.integ[u])))
        return now

    def step(self):
        self.drive()

    def run(self, seconds):
        end = self.now() + seconds
        while self.now() < end:
            self.hear(0.02)
            self.step()

    def finish(self, res, path):
        """Writes the result (with the failures) and returns the exit status."""
        res["sent"] = {JOINT[u].lower(): self.sent[u] for u in (SH, EL)}
        res["failures"] = self.failures
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
        return 1 if self.failures else 0

    def on_frame(self, m):
        raise NotImplementedError

    def measured(self, unit):
        raise NotImplementedError

    def command(self, unit, ff):
        raise NotImplementedError
