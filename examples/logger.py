#!/usr/bin/env python3
"""Logs a hilsim bench's joint states to CSV, one row per tick seen, through the ctypes
bindings (python/hilsim_client.py). Attaches as a read-only observer: it never claims the
commands, so it runs alongside a controller.

    logger.py BENCH OUT.csv [--ticks N] [--timeout S]
"""

import argparse
import csv
import errno
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import hilsim_client  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench")
    ap.add_argument("out")
    ap.add_argument("--ticks", type=int, default=0, help="stop after N ticks (0: until the "
                    "server stops)")
    ap.add_argument("--timeout", type=float, default=1.0, help="give up after S s without a tick")
    args = ap.parse_args()
    try:
        client = hilsim_client.Client(args.bench)
    except OSError as e:
        print("logger: %s" % e, file=sys.stderr)
        return 1
    rows = 0
    with client, open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        # the column names every hilsim CSV uses (docs/recording.md, "CSV columns"), then the
        # logger's own: the tick waited for, ticks missed, the snapshot's tick, its clock
        header = ["time_s"]
        for name in client.joint_names:
            header += ["%s.q" % name, "%s.dq" % name, "%s.tau" % name, "%s.current_A" % name,
                       "%s.encoder_count" % name]
        header += ["tick", "missed", "state_tick", "mono_ns"]
        w.writerow(header)
        while args.ticks == 0 or rows < args.ticks:
            try:
                tick, missed = client.wait_tick(args.timeout)
                st = client.read_state()
            except TimeoutError:
                break
            except OSError as e:
                if e.errno == errno.ESHUTDOWN:  # the bench stopped: the normal end of a run
                    break
                print("logger: stopped: %s" % e, file=sys.stderr)
                break
            # tick: the one waited for; the snapshot may already be newer (state_tick).
            row = ["%.9f" % st.sim_time_s]
            for j in range(client.info.joint_count):
                row += [repr(st.q[j]), repr(st.dq[j]), repr(st.tau[j]), repr(st.current_a[j]),
                        st.encoder_count[j]]
            row += [tick, missed, st.tick, st.mono_ns]
            w.writerow(row)
            rows += 1
        missed_total = client.missed_ticks
    print("logger: %d ticks logged to %s (%d missed)" % (rows, args.out, missed_total))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
