"""Read a hilsim recording folder (hilsim run --record DIR) with the standard library only.

The format is documented in src/record/README.md. Every record's CRC-32 is checked; a
truncated or corrupted file raises RecordingError naming the file and the byte offset, except
in a recording whose run did not finish (manifest "complete": false, a crash): there every
whole tick before the first damage is recovered, a RecordingWarning says how many and where the
damage starts, and rec.damage holds that text (None when nothing was damaged).

    import hilsim_record
    rec = hilsim_record.open_recording("/var/lib/hilsim/rec/arm2-20261125T231500Z")
    t = rec.times()                       # seconds from the first tick
    q = rec.column("SHOULDER.q")          # one value per recorded tick
    for cmd in rec.shm: ...               # dicts: ord, joint, shm_mode, mode, q, dq, ...
    for ev in rec.events: ...             # dicts: kind, tick, a, b, text
    for f in rec.frames("main"): ...      # dicts: time_us, rx, id, ext, fd, rtr, err, data
    rec.write_csv("run.csv")              # what PlotJuggler opens

The candump logs are also plain can-utils logs: python-can reads them with
can.CanutilsLogReader (the trailing R/T is its is_rx).

Version 3 recordings keep their records in blocks, compressed with zstd unless the run had
record.compression: none; reading a compressed one needs the `zstandard` module (Debian's
python3-zstandard). Versions 1 and 2 need only the standard library.
"""

import hashlib
import json
import os
import stat
import struct
import warnings
import zlib

try:
    import zstandard
except ImportError:  # only compressed (version 3, zstd) blocks need it
    zstandard = None

__all__ = ["RecordingError", "RecordingWarning", "Recording", "open_recording",
           "parse_candump_line"]

STATE_MAGIC = b"HSRSTATE"
ITEMS_MAGIC = b"HSRITEMS"
VERSION = 3  # 2 (bare records) and 1 (six values per sensor whatever its kind) are still read
HEADER = struct.Struct("<8sIIIIII")  # magic, version, header_size, record_size, nj, ns, nb
# version 3: HEADER, then run_id, segment, codec, records, body_bytes, header_crc, pad
HEADER3 = struct.Struct("<8sIIIIII16sIIQQII")
BLOCK = struct.Struct("<IIII")  # magic, nrecords, stored, crc
BLOCK_RAW, BLOCK_ZSTD = 0x30425348, 0x5A425348
BLOCK_MAX = 1 << 20  # raw bytes of a block at most (or one record)
OPEN = 0xFFFFFFFFFFFFFFFF
SEGMENTS_MAX = 1000000
PREFIX = struct.Struct("<QqqII")  # tick, now_ns, real_ns, flags, crc
ITEM_HEAD = struct.Struct("<BBHIQq")  # type, tx, bus, crc, ord, real_ns
ITEM_SIZE = 112
SHM_STALE = 0xFFFFFFFF

STATE_WARMUP, STATE_SAFE_HOLD, STATE_FAULT = 1, 2, 4
# A joint's seven recorded values, named as every hilsim CSV names them (docs/recording.md,
# "CSV columns"; the manifest's joint_fields keep the stored format's short names).
JOINT_FIELDS = ("q", "dq", "tau", "current_A", "encoder_position", "encoder_velocity",
                "encoder_count")
SENSOR_FIELDS_V1 = ("x", "y", "z", "tx", "ty", "tz")
BODY_FIELDS = ("x", "y", "z", "qw", "qx", "qy", "qz")
EVENT_KINDS = {1: "overrun", 2: "skip", 3: "safe-hold", 4: "stop", 5: "stall",
               6: "plant-fault", 7: "shm-refused", 8: "scenario", 9: "lockstep", 10: "note",
               11: "live"}


class RecordingError(ValueError):
    """A recording that does not check out; the message names the file and byte offset."""


class RecordingWarning(UserWarning):
    """A crashed run's recording was read up to its first damage."""


class _Damage(Exception):
    """Where a crashed run's files stop being whole (salvaging only)."""


MANIFEST_MAX = 64 << 20  # bytes, as the C reader (src/record/README.md, "Bounds")
TEXT_FILE_MAX = 16 << 20


def _read_file(path, limit=None):
    """A regular file of the recording, whole: no FIFO or device (opened without waiting),
    no symbolic link, at most limit bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise RecordingError(f"{path}: cannot open: {e.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RecordingError(f"{path}: cannot open: not a regular file (a FIFO, device or "
                                 f"socket)")
        if limit is not None and st.st_size > limit:
            raise RecordingError(f"{path}: larger than the {limit} bytes a reader takes")
        data = fh.read(st.st_size if limit is None else limit + 1)
        if limit is not None and len(data) > limit:
            raise RecordingError(f"{path}: larger than the {limit} bytes a reader takes")
        return data


def _seg_name(base, segment, ext):
    """A segment's file name as the writer gives it: state.bin, state.3.bin."""
    return f"{base}.{segment}.{ext}" if segment else f"{base}.{ext}"


def _plain(name):
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name


class _Head:
    """A binary file's header (version 3: also what ties it to its run and bounds it)."""

    def __init__(self, path, data, magic, salvage):
        if len(data) < HEADER.size:
            raise RecordingError(f"{path}: truncated file header at byte offset {len(data)}")
        m, version, hsize, rsize, nj, ns, nb = HEADER.unpack_from(data, 0)
        if m != magic:
            raise RecordingError(f"{path}: bad magic at byte offset 0")
        if not 1 <= version <= VERSION:
            raise RecordingError(f"{path}: format version {version} at byte offset 8, "
                                 f"this reader reads 1 to {VERSION}")
        if hsize != (HEADER3.size if version >= 3 else HEADER.size):
            raise RecordingError(f"{path}: unexpected header size at byte offset 12")
        self.rsize, self.nj, self.ns, self.nb, self.version = rsize, nj, ns, nb, version
        self.size, self.run_id, self.segment = hsize, None, None
        self.records = self.body_bytes = OPEN
        if version < 3:
            return
        if len(data) < HEADER3.size:
            raise RecordingError(f"{path}: truncated file header at byte offset {len(data)}")
        f = HEADER3.unpack_from(data, 0)
        self.run_id, self.segment, codec, self.records, self.body_bytes, crc = f[7:13]
        if zlib.crc32(data[:72] + b"\0\0\0\0" + data[76:80]) != crc:
            raise RecordingError(f"{path}: corrupted file header (header_crc mismatch) at byte "
                                 f"offset 72")
        if codec > 1:
            raise RecordingError(f"{path}: unknown codec at byte offset 52")
        if (self.records == OPEN) != (self.body_bytes == OPEN):
            raise RecordingError(f"{path}: records and body_bytes disagree at byte offset 56")
        if self.records == OPEN and not salvage:
            raise RecordingError(f"{path}: never closed (records at byte offset 56 still open), "
                                 f"yet the manifest says the run completed")
        if self.records != OPEN and len(data) - HEADER3.size > self.body_bytes:
            raise RecordingError(f"{path}: {len(data) - HEADER3.size} bytes after the header, "
                                 f"more than the {self.body_bytes} its body_bytes (byte offset "
                                 f"64) says")


def _blocks(path, data, head, salvage):
    """Version 3: (file offset of its block, record) for every record of the whole blocks."""
    rsize, off, n = head.rsize, HEADER3.size, 0
    limit = max(BLOCK_MAX, rsize)
    out = []

    def damage(msg):
        msg = f"{path}: {msg}"
        if not salvage:
            raise RecordingError(msg)
        raise _Damage(msg)

    try:
        while off < len(data):
            if len(data) - off < BLOCK.size:
                damage(f"truncated block header at byte offset {off}")
            magic, nrec, stored, crc = BLOCK.unpack_from(data, off)
            if magic not in (BLOCK_RAW, BLOCK_ZSTD):
                damage(f"not a block (bad magic) at byte offset {off}")
            raw = nrec * rsize
            if not nrec or raw > limit or (magic == BLOCK_RAW and stored != raw):
                damage(f"implausible block size at byte offset {off}")
            avail = len(data) - off - BLOCK.size
            if stored > avail:
                damage(f"truncated block at byte offset {off} ({avail} of {stored} bytes)")
            payload = data[off + BLOCK.size:off + BLOCK.size + stored]
            if zlib.crc32(payload, zlib.crc32(data[off:off + 12])) != crc:
                damage(f"corrupted block (CRC mismatch) at byte offset {off}")
            if magic == BLOCK_ZSTD:
                if zstandard is None:
                    raise RecordingError(f"{path}: compressed with zstd: reading it needs the "
                                         f"zstandard module (Debian: python3-zstandard)")
                try:
                    body = zstandard.ZstdDecompressor().decompress(payload,
                                                                   max_output_size=raw)
                except zstandard.ZstdError:
                    body = b""
                if len(body) != raw:
                    damage(f"corrupted block at byte offset {off} (not one zstd frame of its "
                           f"{nrec} records)")
                body = _unshuffle(body, nrec, rsize)
            else:
                body = payload
            out.extend((off, body[i * rsize:(i + 1) * rsize]) for i in range(nrec))
            n += nrec
            off += BLOCK.size + stored
        if head.records != OPEN and n != head.records:
            damage(f"record count differs at byte offset {off} ({n} records, the header at "
                   f"byte offset 56 says {head.records})")
    except _Damage as e:
        return out, e
    return out, None


def _unshuffle(body, n, size):
    """A zstd block's records are byte-shuffled: byte j of record i at j * n + i."""
    out = bytearray(len(body))
    for j in range(size):
        out[j::size] = body[j * n:(j + 1) * n]
    return bytes(out)


def _records(path, data, rsize, salvage=False, head=None):
    if head is not None and head.version >= 3:
        recs, dmg = _blocks(path, data, head, salvage)
        yield from recs
        if dmg:
            raise dmg
        return
    yield from _records_v2(path, data, rsize, salvage)


def _records_v2(path, data, rsize, salvage):
    body = len(data) - HEADER.size
    n, rest = divmod(body, rsize)
    if rest:
        msg = (f"{path}: truncated record at byte offset {HEADER.size + n * rsize} "
               f"({rest} of {rsize} bytes)")
        if not salvage:
            raise RecordingError(msg)
    for i in range(n):
        off = HEADER.size + i * rsize
        yield off, data[off:off + rsize]
    if rest:
        raise _Damage(msg)


def _crc_ok(rec, crc_at):
    zeroed = rec[:crc_at] + b"\0\0\0\0" + rec[crc_at + 4:]
    return zlib.crc32(zeroed) == struct.unpack_from("<I", rec, crc_at)[0]


def parse_candump_line(line):
    """One can-utils log line -> dict, or None when it is not one."""
    parts = line.split()
    if len(parts) not in (3, 4) or not (parts[0].startswith("(") and parts[0].endswith(")")):
        return None
    rx = True
    if len(parts) == 4:
        if parts[3] not in ("R", "T"):
            return None
        rx = parts[3] == "R"
    ident, sep, data = parts[2].partition("#")
    if not sep or len(ident) not in (3, 8):
        return None
    sec, _, usec = parts[0][1:-1].partition(".")
    can_id = int(ident, 16)
    f = {"time_us": int(sec) * 1000000 + int(usec), "iface": parts[1], "rx": rx,
         "ext": len(ident) == 8 and not can_id & 0x20000000, "err": bool(
             len(ident) == 8 and can_id & 0x20000000), "fd": False, "rtr": False,
         "id": can_id & 0x1FFFFFFF, "data": b""}
    if data.startswith("#"):
        f["fd"], data = True, data[2:]
    elif data[:1] in ("R", "r"):
        f["rtr"], data = True, ""
    f["data"] = bytes.fromhex(data)
    return f


class Recording:
    def __init__(self, path):
        self.path = path
        mpath = os.path.join(path, "manifest.json")
        try:
            self.manifest = json.loads(_read_file(mpath, MANIFEST_MAX))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            pos = getattr(e, "pos", getattr(e, "start", 0))
            raise RecordingError(f"{mpath}: {getattr(e, 'msg', e)} at byte offset {pos}") \
                from None
        if not isinstance(self.manifest, dict):
            raise RecordingError(f"{mpath}: not a hilsim recording manifest")
        if self.manifest.get("format") != "hilsim-recording":
            raise RecordingError(f"{mpath}: not a hilsim recording manifest")
        sig = self.manifest["signals"]
        self.joints = list(sig["joints"])
        self.version = self.manifest.get("format_version")
        if self.version not in range(1, VERSION + 1):
            raise RecordingError(f"{mpath}: format_version {self.version}; this reader reads "
                                 f"1 to {VERSION}")
        self.sensors = [s["name"] for s in sig["sensors"]]
        # each sensor's values as its kind declares them (version 1: six, whatever the kind)
        self.sensor_fields = [list(SENSOR_FIELDS_V1) if self.version == 1 else list(s["fields"])
                              for s in sig["sensors"]]
        self.bodies = list(sig["bodies"])
        self.signals = ([f"{j}.{f}" for j in self.joints for f in JOINT_FIELDS] +
                        [f"{s}.{f}" for s, fs in zip(self.sensors, self.sensor_fields)
                         for f in fs] +
                        [f"{b}.{f}" for b in self.bodies for f in BODY_FIELDS])
        self.ticks, self.now_ns, self.real_ns, self.flags, self.rows = [], [], [], [], []
        self.rx_counts = []  # per tick: frames the tick took from each CAN bus
        self.shm, self.events = [], []
        self._frames = {}
        buses = [b["name"] for b in self.manifest.get("can_buses", [])]
        # keep_segments may have deleted the first segments: rows then start at the run's
        # state first_ord (shm and event "ord" count from the run's start)
        self.first_ord = self.manifest["segments"][0].get("first_ord", 0)
        self.salvage = self.manifest.get("complete") is not True
        self.damage = None
        self.unlisted = None  # version 3: a segment the crash kept out of the manifest
        self.run_id = None
        if self.version >= 3:
            rid = self.manifest.get("run_id")
            try:
                self.run_id = bytes.fromhex(rid) if isinstance(rid, str) else b""
            except ValueError:
                self.run_id = b""
            if len(self.run_id) != 16 or not any(self.run_id):
                raise RecordingError(f"{mpath}: run_id: not 32 hex digits")
        for b in buses:
            self._frames.setdefault(b, [])
        segs = self.manifest["segments"]
        for i, seg in enumerate(segs):
            self._segment(mpath, i, seg, buses)
            if self.damage:
                break
        index = (segs[-1].get("index", 0) + 1) if segs else 0
        # a crash between creating the next segment's files and rewriting the manifest: the
        # segment is found by the writer's naming rule, its headers must carry the run id
        while self.version >= 3 and self.salvage and not self.damage and \
                index < SEGMENTS_MAX and \
                os.path.lexists(os.path.join(path, _seg_name("state", index, "bin"))):
            seg = {"index": index, "state": _seg_name("state", index, "bin"),
                   "shm": _seg_name("shm", index, "bin"),
                   "events": _seg_name("events", index, "bin"),
                   "can": {b: _seg_name(f"can-{b}", index, "log") for b in buses}}
            self._segment(mpath, len(segs), seg, buses)
            if self.unlisted is None:
                self.unlisted = (f"segment {index} ({seg['state']}) is not in the manifest (the "
                                 f"run crashed before rewriting it): read by the writer's "
                                 f"naming rule and the run id")
                warnings.warn(f"{path}: {self.unlisted}", RecordingWarning, stacklevel=3)
            index += 1
        if self.damage:
            self._trim()
            last = f" (up to tick {self.ticks[-1]})" if self.ticks else ""
            warnings.warn(f"{path}: damaged recording (the run crashed?): {len(self.ticks)} "
                          f"whole ticks recovered{last}; the damage starts at {self.damage}",
                          RecordingWarning, stacklevel=3)

    def _segment(self, mpath, i, seg, buses):
        files = [seg["state"], seg["shm"], seg["events"]] + [seg["can"][b] for b in buses]
        for f in files:
            if not _plain(f):
                raise RecordingError(f"{mpath}: segments[{i}]: '{str(f)[:64]}' is not a "
                                     f"file name in the recording's folder")
        self._seg = seg.get("index", i)
        bounds, counts = seg.get("bytes", {}), seg.get("records", {})
        for key in ("state", "shm", "events"):
            for what, d in (("bytes", bounds), ("records", counts)):
                v = d.get(key)
                if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                    raise RecordingError(f"{mpath}: segments[{i}].{what}.{key}: not a "
                                         f"non-negative integer")
        readers = [(self._read_state, "state"), (self._read_items, "shm"),
                   (self._read_items, "events")]
        for read, key in readers:
            before = len(self.ticks) if key == "state" else len(self.shm) + len(self.events)
            try:
                read(os.path.join(self.path, seg[key]), bounds.get(key), f"segments[{i}]."
                     f"bytes.{key}")
            except _Damage as e:
                self.damage = self.damage or str(e)
            got = (len(self.ticks) if key == "state" else len(self.shm) + len(self.events)) \
                - before
            if not self.damage and key in counts and counts[key] != got:
                raise RecordingError(f"{mpath}: segments[{i}].records.{key} {counts[key]}: "
                                     f"{seg[key]} holds {got}")
        # a closed segment's log: its size and SHA-256 as the run wrote it tie it to the run
        cbytes, csha = seg.get("can_bytes", {}), seg.get("can_sha256", {})
        for b in buses:
            limit, want = cbytes.get(b), csha.get(b)
            if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                      or limit < 0):
                raise RecordingError(f"{mpath}: segments[{i}].can_bytes.{b}: not a "
                                     f"non-negative integer")
            if want is not None and (not isinstance(want, str) or len(want) != 64):
                raise RecordingError(f"{mpath}: segments[{i}].can_sha256.{b}: not a SHA-256 "
                                     f"(64 hex digits)")
            if limit is None or want is None:
                limit = want = None
            try:
                self._read_candump(os.path.join(self.path, seg["can"][b]), self._frames[b],
                                   limit, want, f"segments[{i}].can_bytes.{b}",
                                   f"segments[{i}].can_sha256.{b}")
            except _Damage as e:
                self.damage = self.damage or str(e)

    def _trim(self):
        """After damage: only the ticks whose received frames survived, and their items."""
        buses = [b["name"] for b in self.manifest.get("can_buses", [])]
        have = [sum(f["rx"] for f in self._frames[b]) for b in buses]
        need = [0] * len(buses)
        n = 0
        for counts in self.rx_counts:
            need = [x + c for x, c in zip(need, counts)]
            if any(x > h for x, h in zip(need, have)):
                break
            n += 1
        for lst in (self.ticks, self.now_ns, self.real_ns, self.flags, self.rows,
                    self.rx_counts):
            del lst[n:]
        if not self.manifest.get("dropped", {}).get("states"):
            end = self.first_ord + n
            self.shm = [c for c in self.shm if c["ord"] < end]
            self.events = [e for e in self.events if e["ord"] < end]

    def _file(self, path, magic=None, limit=None, field=None):
        """A segment file; salvaging, a missing file or a header the crash cut is damage.
        limit: the manifest's bound on its size (field names it); without one, a closed
        version 3 file's own header bounds it."""
        if limit is None and magic and self.version >= 3:
            limit = self._header_bound(path)
            field = "header's body_bytes" if limit is not None else None
        try:
            data = _read_file(path, limit)
        except RecordingError as e:
            if self.salvage and not os.path.lexists(path):
                raise _Damage(f"{path}: missing file") from None
            if limit is not None and "larger than" in str(e):
                self._foreign(path)
                if field == "header's body_bytes":
                    raise RecordingError(f"{path}: larger than the {limit} bytes its header "
                                         f"says (body_bytes at byte offset 64)") from None
                raise RecordingError(f"{path}: larger than the {limit} bytes the manifest's "
                                     f"{field} says") from None
            raise
        hmin = HEADER3.size if self.version >= 3 else HEADER.size
        if magic and self.salvage and len(data) < hmin:
            raise _Damage(f"{path}: truncated file header at byte offset {len(data)}")
        return data

    def _header_bound(self, path):
        """A closed version 3 file's size by its own header, or None."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            head = os.pread(fd, HEADER3.size, 0)
        finally:
            os.close(fd)
        if len(head) < HEADER3.size or HEADER.unpack_from(head)[1] < 3:
            return None
        f = HEADER3.unpack_from(head)
        if f[10] == OPEN or zlib.crc32(head[:72] + b"\0\0\0\0" + head[76:80]) != f[12]:
            return None
        return HEADER3.size + f[11]

    def _foreign(self, path):
        """A file larger than the manifest says: its header alone tells another run's."""
        if self.version < 3:
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            head = os.pread(fd, HEADER3.size, 0)
        finally:
            os.close(fd)
        if len(head) == HEADER3.size and HEADER.unpack_from(head)[1] >= 3 and \
                head[32:48] != self.run_id:
            raise RecordingError(f"{path}: run_id {head[32:48].hex()} at byte offset 32 is not "
                                 f"the manifest's run_id {self.run_id.hex()}: a file of another "
                                 f"run")

    def _head(self, path, data, magic):
        h = _Head(path, data, magic, self.salvage)
        if h.version != self.version:
            raise RecordingError(f"{path}: format version differs from the manifest's at byte "
                                 f"offset 8")
        if h.version >= 3:
            if h.run_id != self.run_id:
                raise RecordingError(f"{path}: run_id {h.run_id.hex()} at byte offset 32 is not "
                                     f"the manifest's run_id {self.run_id.hex()}: a file of "
                                     f"another run")
            if h.segment != self._seg:
                raise RecordingError(f"{path}: segment {h.segment} at byte offset 48: the file "
                                     f"of segment {self._seg} expected")
        return h

    def _read_state(self, path, limit=None, field=None):
        data = self._file(path, STATE_MAGIC, limit, field)
        head = self._head(path, data, STATE_MAGIC)
        rsize, nj, ns, nb, version = head.rsize, head.nj, head.ns, head.nb, head.version
        # the header counts sensors in version 1 (six values each), their values in version 2
        nsv = sum(len(f) for f in self.sensor_fields)
        want_ns = len(self.sensors) if version == 1 else nsv
        n = nj * len(JOINT_FIELDS) + nsv + nb * 7
        nbus = len(self.manifest.get("can_buses", []))
        words = nbus + (nbus & 1)  # u32 frame counts per bus, padded to 8 bytes
        if version != self.version or \
                (nj, ns, nb) != (len(self.joints), want_ns, len(self.bodies)) or \
                rsize != PREFIX.size + 8 * n + 4 * words:
            raise RecordingError(f"{path}: layout differs from the manifest at byte offset 16")
        cfmt = struct.Struct("<" + "I" * nbus)
        fmt = struct.Struct("<" + "d" * n)
        counts = [j * len(JOINT_FIELDS) + 6 for j in range(nj)]
        for off, rec in _records(path, data, rsize, self.salvage, head):
            if not _crc_ok(rec, 28):
                msg = f"{path}: corrupted state record (CRC mismatch) at byte offset {off}"
                raise (_Damage if self.salvage else RecordingError)(msg)
            tick, now, real, flags, _ = PREFIX.unpack_from(rec, 0)
            row = list(fmt.unpack_from(rec, PREFIX.size))
            for c in counts:  # the encoder counter is stored as its uint64 bits
                row[c] = float(struct.unpack_from("<Q", rec, PREFIX.size + 8 * c)[0])
            self.ticks.append(tick)
            self.now_ns.append(now)
            self.real_ns.append(real)
            self.flags.append(flags)
            self.rows.append(row)
            self.rx_counts.append(cfmt.unpack_from(rec, PREFIX.size + 8 * n))

    def _read_items(self, path, limit=None, field=None):
        data = self._file(path, ITEMS_MAGIC, limit, field)
        head = self._head(path, data, ITEMS_MAGIC)
        rsize = head.rsize
        if rsize != ITEM_SIZE:
            raise RecordingError(f"{path}: unexpected record size at byte offset 16")
        for off, rec in _records(path, data, rsize, self.salvage, head):
            if not _crc_ok(rec, 4):
                msg = f"{path}: corrupted record (CRC mismatch) at byte offset {off}"
                raise (_Damage if self.salvage else RecordingError)(msg)
            typ, _, _, _, ordinal, real = ITEM_HEAD.unpack_from(rec, 0)
            if typ == 1:
                joint, shm_mode, mode, _ = struct.unpack_from("<IIII", rec, 24)
                v = struct.unpack_from("<7d", rec, 40)
                rx_time, seq = struct.unpack_from("<qQ", rec, 96)
                self.shm.append(dict(ord=ordinal, real_ns=real, joint=joint,
                                     stale=shm_mode == SHM_STALE, shm_mode=shm_mode, mode=mode,
                                     q=v[0], dq=v[1], kp=v[2], kd=v[3], tau_ff=v[4],
                                     current=v[5], velocity=v[6], rx_time_ns=rx_time, seq=seq))
            elif typ == 2:
                kind, _, tick, a, b = struct.unpack_from("<IIQqq", rec, 24)
                text = rec[56:104].split(b"\0", 1)[0].decode("utf-8", "replace")
                self.events.append(dict(ord=ordinal, real_ns=real,
                                        kind=EVENT_KINDS.get(kind, str(kind)), tick=tick, a=a,
                                        b=b, text=text))
            else:
                raise RecordingError(f"{path}: unknown record type {typ} at byte offset {off}")

    def _read_candump(self, path, out, limit=None, sha=None, field=None, sha_field=None):
        off = 0
        try:  # a log has no binary header: its size alone is checked against the bound
            data = self._file(path) if limit is None else _read_file(path, limit)
        except RecordingError as e:
            if limit is not None and "larger than" in str(e):
                raise RecordingError(f"{path}: larger than the {limit} bytes the manifest's "
                                     f"{field} says") from None
            raise
        if sha is not None:
            got = hashlib.sha256(data).hexdigest()
            if got != sha.lower():
                raise RecordingError(f"{path}: its SHA-256 {got} is not the manifest's "
                                     f"{sha_field} {sha}: not the log this run wrote (another "
                                     f"run's, or changed since)")
        cut = None
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            if not self.salvage:
                raise RecordingError(f"{path}: truncated line at byte offset {cut} (no newline)")
            data = data[:cut]
        for n, raw in enumerate(data.split(b"\n")[:-1] if data else [], 1):
            line = raw.decode("ascii", "replace").strip()
            if line:
                f = parse_candump_line(line)
                if f is None:
                    raise RecordingError(f"{path}:{n}: not a candump log line at byte "
                                         f"offset {off}")
                out.append(f)
            off += len(raw) + 1
        if cut is not None:
            raise _Damage(f"{path}: truncated line (no newline) at byte offset {cut}")
        return out

    def frames(self, bus):
        return self._frames[bus]

    def times(self):
        t0 = self.now_ns[0] if self.now_ns else 0
        return [(t - t0) / 1e9 for t in self.now_ns]

    def column(self, name):
        k = self.signals.index(name)
        return [row[k] for row in self.rows]

    def write_csv(self, path):
        with open(path, "w") as fh:
            fh.write(",".join(["time_s"] + self.signals) + "\n")
            for t, row in zip(self.times(), self.rows):
                fh.write(",".join([f"{t:.9f}"] + [repr(v) for v in row]) + "\n")


def open_recording(path):
    return Recording(path)
