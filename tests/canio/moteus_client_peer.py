"""moteus_client_peer.py --bench NAME --result FILE.json [--channel vcan0]

mjbots' own moteus Python client and moteus_tool (../shared/clients/python, used in place through
PYTHONPATH) against `hilsim run tests/canio/arm2-moteus-guest.yaml` in the PREEMPT_RT guest,
CAN FD on vcan0. SHOULDER is servo 1, ELBOW servo 2 (gains 1257 N·m/rev, 50 N·m·s/rev).

Lockstep: the bench ticks only on this host's SYNC (0x080). A pump thread releases ticks
(lockstep_host.Host.tick) and samples the joint's true angle from hilsim's shm view at every
tick, so the client's calls (which wait for replies the ticks send) run on the bench's simulated
time, and every check below is judged on simulated time and the joint's true angle, never on the
wall clock.

Checks and tolerances (rad and rev at the output, simulated time):
- query: mode 0, position = the true angle within 1e-3 rev, torque 0 within 0.01 N·m before
  any command (stopped: the output is off); a query with d_current (and q_current) still
  carries position, velocity and torque;
- position hold (set_position to 0.8 rad, the elbow held where it is): after 4 s the joint is
  still within 1e-3 rad over the last second, and within 0.15 rad of the target (the static lag
  tau_g/kp of a PD without integral, as the firmware's default ki x ilimit = 0);
- velocity with nan position, -0.03 rev/s, joint under gravity: over 2 s (after 0.5 s) the
  joint moves at -0.03 rev/s within 10 % (the issue: it fell at +0.17 rev/s);
- a limited trajectory (velocity_limit 0.05 rev/s, accel_limit 0.1 rev/s², to 0.8 rad) with
  set_position_wait_complete: it returns with the trajectory complete, the joint's speed over
  any 0.25 s never exceeds 0.05 rev/s by more than 20 % (the PD's tracking; without the limit
  the move takes 0.1 s) and the joint arrives after the trapezoid's d/v + v/a within 0.5 s;
- stop: mode 0 and torque ~0; brake: mode 15;
- moteus_tool --info (serial number, model, git hash, UUID), --dump-config (the node's kp),
  --stop (the servo stops), each within 300 s of wall time (the emulated guest is slow).
Exit 0 when every check passed."""
import asyncio
import json
import math
import os
import subprocess
import sys
import threading
import time

import moteus
import moteus.multiplex as mp

from lockstep_host import SH, Host, parse_args

TWO_PI = 2 * math.pi
R = moteus.Register


class Pump(threading.Thread):
    """Releases lockstep ticks and samples (simulated time, SHOULDER angle) at each. Back to back
    while the script waits on simulated time (fast), else one per 20 ms of wall time: enough
    for every reply the client and moteus_tool wait for, and the bench's simulated time (which
    `hilsim run --duration` counts) stays below the wall time they take."""

    def __init__(self, host):
        super().__init__(daemon=True)
        self.host, self.stop, self.trace, self.lock = host, False, [], threading.Lock()
        self.fast = 0

    def run(self):
        while not self.stop:
            if not self.fast:
                time.sleep(0.02)
            self.host.tick()
            st = self.host.shm.read_state()
            with self.lock:
                self.trace.append((st.tick * self.host.period, st.q[self.host.j[SH]]))

    def now(self):
        with self.lock:
            return self.trace[-1][0] if self.trace else 0.0

    def q_at(self, t):
        with self.lock:
            for tt, q in reversed(self.trace):
                if tt <= t:
                    return q
        return None

    def window(self, t0, t1):
        with self.lock:
            return [(t, q) for t, q in self.trace if t0 <= t <= t1]


async def sim_sleep(pump, seconds):
    end = pump.now() + seconds
    pump.fast += 1
    while pump.now() < end:
        await asyncio.sleep(0.005)
    pump.fast -= 1


async def hold_for(pump, c, seconds, others=(), **kw):
    """Resends the command every 50 ms of simulated time (a host's loop), query on; OTHERS
    (controllers) are told to hold where they are."""
    end = pump.now() + seconds
    r = None
    while pump.now() < end:
        r = await c.set_position(query=True, **kw)
        for o in others:
            await o.set_position(position=math.nan, velocity=0)
        await sim_sleep(pump, 0.05)
    return r


def say(what):
    print("[wall %.1f s] %s" % (time.monotonic() - T0, what), flush=True)


T0 = time.monotonic()


def tool(h, args, out):
    cmd = [sys.executable, "-m", "moteus.moteus_tool", "--can-chan", "vcan0", "-t", "1"] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        h.check(False, "moteus_tool %s: no answer within 300 s" % " ".join(args))
        return None
    out[" ".join(args)] = p.stdout[-20000:]  # whole (a dump is 600 bytes): a failed check shows it
    h.check(p.returncode == 0, "moteus_tool %s: exit %d %s" % (" ".join(args), p.returncode,
                                                              p.stderr[-400:].strip()))
    return p.stdout if p.returncode == 0 else None


async def script(h, pump, res):
    transport = moteus.PythonCan(channel="vcan0")
    c = moteus.Controller(id=1, transport=transport)
    elbow = moteus.Controller(id=2, transport=transport)

    # query at rest
    r = await c.query()
    v = r.values
    q_true = h.q(SH) / TWO_PI
    h.check(v[R.MODE] == 0, "query: mode stopped (%s)" % v[R.MODE])
    h.check(abs(v[R.POSITION] - q_true) < 1e-3,
            "query: position %.5f rev = true %.5f rev" % (v[R.POSITION], q_true))
    h.check(abs(v[R.TORQUE]) < 0.01, "query: torque %.4f N·m before any command" % v[R.TORQUE])
    qr = moteus.QueryResolution()
    qr.q_current = mp.F32
    qr.d_current = mp.F32
    cd = moteus.Controller(id=1, transport=transport, query_resolution=qr)
    v = (await cd.query()).values
    h.check(all(k in v for k in (R.POSITION, R.VELOCITY, R.TORQUE, R.D_CURRENT)),
            "query with d_current: position, velocity, torque and d current all answered (%s)"
            % sorted(int(k) for k in v))

    # position hold at 0.8 rad (the elbow held where it is: a swinging forearm is not the
    # shoulder's business)
    say("hold")
    target = 0.8 / TWO_PI
    await hold_for(pump, c, 4.0, others=[elbow], position=target, velocity=0)
    t = pump.now()
    q1, q0 = pump.q_at(t), pump.q_at(t - 1.0)
    h.check(abs(q1 - q0) < 1e-3, "hold: still within 1e-3 rad over 1 s (moved %.5f)" % (q1 - q0))
    h.check(abs(q1 - 0.8) < 0.15, "hold: %.4f rad, within 0.15 rad of 0.8" % q1)
    res["hold_q_rad"] = q1

    # velocity control with the position unset, under gravity
    say("velocity")
    vel = -0.03
    t0 = pump.now()
    await hold_for(pump, c, 2.5, others=[elbow], position=math.nan, velocity=vel)
    ta, tb = t0 + 0.5, t0 + 2.5
    qa, qb = pump.q_at(ta), pump.q_at(tb)
    rate = (qb - qa) / (tb - ta) / TWO_PI
    res["velocity_rev_s"] = rate
    h.check(abs(rate - vel) < 0.003,
            "velocity nan position: joint moved at %.4f rev/s, commanded %.3f (10 %%)" % (rate, vel))

    # a limited trajectory from rest, waited on with the client's own call; the acceleration
    # ramp (0.5 s) is about the arm's PD period, so the joint follows the drive's velocity
    # profile without a step's overshoot
    await hold_for(pump, c, 1.0, others=[elbow], position=math.nan, velocity=0)
    say("trajectory")
    vlim, alim = 0.05, 0.1
    start_q = h.q(SH)
    t0 = pump.now()
    pump.fast += 1  # the client's 25 ms wall-clock polls: simulated time runs meanwhile
    r = await asyncio.wait_for(
        c.set_position_wait_complete(position=target, velocity=0, velocity_limit=vlim,
                                     accel_limit=alim, query=True), 600)
    pump.fast -= 1
    t1 = pump.now()
    h.check(r is not None and r.values.get(R.TRAJECTORY_COMPLETE),
            "set_position_wait_complete returned with the trajectory complete")
    d = abs(0.8 - start_q) / TWO_PI
    want = d / vlim + vlim / alim
    w = pump.window(t0, t1)
    # the joint's speed over 0.25 s windows: the drive limits its control velocity; the joint
    # follows it through an underdamped PD (about 0.45 s period here), whose swing a window
    # of half a period averages out
    speeds = [abs(b[1] - a[1]) / (b[0] - a[0]) / TWO_PI
              for a in w for b in w if 0.25 <= b[0] - a[0] < 0.26]
    vmax = max(speeds) if speeds else float("nan")
    arrive = next((t for t, q in w if abs(q - w[-1][1]) < 0.01 * TWO_PI * d + 1e-3), t1)
    res["trajectory"] = dict(distance_rev=d, want_s=want, took_s=t1 - t0, vmax_rev_s=vmax)
    h.check(vmax <= vlim * 1.2, "trajectory: joint speed at most %.4f rev/s (limit %.2f)"
            % (vmax, vlim))
    h.check(abs((arrive - t0) - want) < 0.5,
            "trajectory: arrived after %.2f s, trapezoid %.2f s" % (arrive - t0, want))

    # stop, brake
    say("stop, brake")
    r = await c.set_stop(query=True)
    await sim_sleep(pump, 0.1)
    v = (await c.query()).values
    h.check(v[R.MODE] == 0 and abs(v[R.TORQUE]) < 0.01,
            "stop: mode %s, torque %.4f" % (v[R.MODE], v[R.TORQUE]))
    r = await c.set_brake(query=True)
    await sim_sleep(pump, 0.1)
    v = (await c.query()).values
    h.check(v[R.MODE] == 15, "brake: mode %s" % v[R.MODE])

    # moteus_tool: info, dump-config, stop (from position mode)
    outs = {}
    say("moteus_tool")
    o = tool(h, ["--info"], outs)
    if o is not None:
        try:
            info = json.loads(o)
            h.check(info.get("serial_number") and "model" in info and "git_hash" in info and
                    info.get("uuid"), "moteus_tool --info: %s" % info)
        except ValueError:
            h.check(False, "moteus_tool --info: not JSON: %r" % o[-300:])
    o = tool(h, ["--dump-config"], outs)
    h.check(o is not None and "servo.pid_position.kp 1257.000000" in o,
            "moteus_tool --dump-config: the node's kp")
    await c.set_position(position=math.nan, velocity=0)
    v = (await c.query()).values
    h.check(v[R.MODE] == 10, "before --stop: position mode (%s)" % v[R.MODE])
    tool(h, ["--stop"], outs)
    v = (await c.query()).values
    h.check(v[R.MODE] == 0, "moteus_tool --stop: mode %s" % v[R.MODE])
    res["tool"] = outs
    say("done")


def main():
    args = parse_args()
    h = Host(args.channel, args.bench, fd=True)
    # this bus only sends SYNCs: it hears nothing (an unread socket would only fill)
    h.bus.set_filters([{"can_id": 0x1FFFFFFF, "can_mask": 0x1FFFFFFF, "extended": True}])
    h.check(h.lockstep, "the bench runs in lockstep")
    pump = Pump(h)
    pump.start()
    res = {}
    try:
        asyncio.run(asyncio.wait_for(script(h, pump, res), 1800))
    except Exception as e:  # a hang or a client error is a failed check, with its reason
        h.check(False, "client: %s: %s" % (type(e).__name__, e))
    pump.stop = True
    pump.join(60)
    # the node counters are the wire's business here: guest-moteus-client.sh checks none is bad
    h.sent = {SH: 0, 2: 0}
    print(json.dumps({k: v for k, v in res.items() if k != "tool"}, indent=1))
    return h.finish(res, args.result)


if __name__ == "__main__":
    sys.exit(main())
