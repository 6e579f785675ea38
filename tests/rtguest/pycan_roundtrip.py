"""pycan_roundtrip.py BUS...: with python-can on SocketCAN, sends a standard and an extended
frame on each bus and checks each arrives unchanged on that bus and on no other. Exits 1 on any
mismatch. Run with /usr/bin/python3 (Debian's python3-can) inside the rtguest guest."""
import sys

import can

TIMEOUT_S = 5.0


def frames_for(index):
    return [
        can.Message(arbitration_id=0x100 + index, data=bytes([index, 0xA5, 0x5A]), is_extended_id=False),
        can.Message(arbitration_id=0x1ABCDE00 + index, data=bytes(range(8)), is_extended_id=True),
    ]


def same(sent, got):
    return (got is not None and got.arbitration_id == sent.arbitration_id
            and got.is_extended_id == sent.is_extended_id and bytes(got.data) == bytes(sent.data))


def main(buses):
    # Receivers first: a SocketCAN socket sees only frames sent after it is bound.
    rx = {name: can.Bus(interface="socketcan", channel=name) for name in buses}
    tx = {name: can.Bus(interface="socketcan", channel=name) for name in buses}
    failed = False
    try:
        for index, name in enumerate(buses):
            for frame in frames_for(index):
                tx[name].send(frame)
                got = rx[name].recv(timeout=TIMEOUT_S)
                ok = same(frame, got)
                failed |= not ok
                print(f"{name}: sent {frame.arbitration_id:X}#{bytes(frame.data).hex()} "
                      f"received {'the same' if ok else got}")
        # Every frame was consumed where it was sent, so anything left is a leak between buses.
        for name in buses:
            stray = rx[name].recv(timeout=0.2)
            if stray is not None:
                failed = True
                print(f"{name}: unexpected frame {stray}")
    finally:
        for bus in list(rx.values()) + list(tx.values()):
            bus.shutdown()
    print(f"python-can {can.__version__}: {'FAILED' if failed else 'all frames round-tripped'}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: pycan_roundtrip.py BUS...")
    sys.exit(main(sys.argv[1:]))
