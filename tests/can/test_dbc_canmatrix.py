#!/usr/bin/python3
"""hilsim's DBC reading against canmatrix (Debian 12's python3-canmatrix) as an oracle, on the
real files of ../shared/can/opendbc, read in place. For every signal both tools load: the same
geometry (start bit, length, byte order, sign, factor, offset), and the same physical value for
random payloads decoded by `hilsim can decode` and by canmatrix. Skips (exit 77) without
canmatrix or the shared folder. Counts where the tools differ on purpose are in
test_dbc_opendbc.c."""
import json
import logging
import os
import random
import subprocess
import sys

SKIP = 77
HILSIM = os.environ.get("HILSIM", "hilsim")
DIR = os.path.join(os.environ.get("HS_SHARED_DIR", ""), "can", "opendbc")

try:
    logging.disable(logging.CRITICAL)
    import canmatrix.formats
except ImportError:
    print("skip: python3-canmatrix not installed")
    sys.exit(SKIP)
if not os.path.isdir(DIR):
    print("skip: no", DIR)
    sys.exit(SKIP)


def frame_text(m, data):
    ident = "%08X" % m["id"] if m["extended"] else "%03X" % m["id"]
    return ident + "#" + data.hex().upper()


def dbc_start_bit(sig):
    # canmatrix keeps Motorola start bits in its own numbering; ask for the DBC's
    if sig.is_little_endian:
        return sig.get_startbit(bit_numbering=1, start_little=True)
    return sig.get_startbit(bit_numbering=1)


def main():
    rng = random.Random(11)
    files = sorted(f for f in os.listdir(DIR) if f.endswith(".dbc"))
    compared_sig = compared_val = 0
    failures = []
    for name in files:
        path = os.path.join(DIR, name)
        db = canmatrix.formats.loadp(path)[""]
        cm = {(f.arbitration_id.id, f.arbitration_id.extended): f for f in db.frames}
        out = subprocess.run([HILSIM, "can", "dbc", "--json", path], capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            failures.append("%s: hilsim refused it: %s" % (name, out.stderr.strip()))
            continue
        for m in json.loads(out.stdout)["messages"]:
            f = cm.get((m["id"], m["extended"]))
            if f is None or f.is_complex_multiplexed:
                continue
            for s in m["signals"]:
                c = f.signal_by_name(s["name"])
                if c is None:
                    continue
                compared_sig += 1
                want = (dbc_start_bit(c), c.size, c.is_little_endian, c.is_signed,
                        float(c.factor), float(c.offset))
                got = (s["start_bit"], s["length"], s["byte_order"] == "intel", s["signed"],
                       s["factor"], s["offset"])
                if want != got:
                    failures.append("%s %s.%s: hilsim %s, canmatrix %s" %
                                    (name, m["name"], s["name"], got, want))
            if not 0 < m["length"] <= 8:
                continue
            for _ in range(3):
                data = bytes(rng.getrandbits(8) for _ in range(m["length"]))
                o = subprocess.run([HILSIM, "can", "decode", path, frame_text(m, data)],
                                   capture_output=True, text=True, check=False)
                if o.returncode != 0:
                    failures.append("%s: decode %s failed" % (name, frame_text(m, data)))
                    continue
                try:
                    dec = f.decode(data)
                except ValueError:
                    break  # canmatrix cannot decode a message holding a signal past its end
                for line in o.stdout.splitlines()[1:]:
                    if " = " not in line:
                        continue
                    sig, rest = line.strip().split(" = ", 1)
                    if sig not in dec:
                        continue
                    got_v = float(rest.split()[0])
                    want_v = float(dec[sig].phys_value)
                    compared_val += 1
                    if abs(got_v - want_v) > 1e-9 * (1 + abs(want_v)):
                        failures.append("%s %s %s: hilsim %r, canmatrix %r" %
                                        (name, frame_text(m, data), sig, got_v, want_v))
    print("%d files, %d signals, %d decoded values compared" %
          (len(files), compared_sig, compared_val))
    for f in failures[:20]:
        print("FAIL", f)
    if compared_sig < 1000 or compared_val < 1000:
        print("FAIL: too little compared")
        return 1
    return 1 if failures else 0


sys.exit(main())
