"""ctypes bindings for libhilsim-client (include/hilsim/client.h): attach to a hilsim bench's
shared memory, wait for ticks, read state snapshots and write joint commands.

The library is found, in order, through the HILSIM_CLIENT_LIB environment variable (a path),
ctypes.util.find_library("hilsim-client") (installed), or a build tree next to this file
(../build*/src/client/libhilsim-client.so).

    from hilsim_client import Client, MODE_POSITION_PD
    with Client("mybench") as c:
        elbow = c.find_joint("RARM_ELBOW")
        c.claim()
        while True:
            tick, missed = c.wait_tick(timeout_s=0.1)
            st = c.read_state()
            c.write_command(elbow, MODE_POSITION_PD, q=0.5, kp=50.0, kd=1.0)

In lockstep (c.lockstep is True: `hilsim run --clock lockstep`), the bench runs the next tick
only after the owner calls step(); every tick is seen exactly once, as fast as both sides go:

        while True:
            tick, missed = c.wait_tick(timeout_s=5.0)   # missed is always 0 here
            st = c.read_state()
            c.write_command(elbow, MODE_POSITION_PD, q=0.5, kp=50.0, kd=1.0)
            c.step()                                    # releases tick + 1
"""

import ctypes
import ctypes.util
import errno
import glob
import os
import time

ABI_VERSION = 1

KIND_JOINT, KIND_IMU, KIND_FORCE = 1, 2, 3
(MODE_DISABLED, MODE_TORQUE, MODE_CURRENT, MODE_VELOCITY, MODE_POSITION_PD,
 MODE_BRAKE) = range(6)
CLIENT_NONE, CLIENT_ACTIVE, CLIENT_LOST = range(3)
BENCH_SAFE_HOLD = 1 << 0  # HS_SHM_BENCH_SAFE_HOLD: the bench holds every joint, commands ignored
BENCH_FAULT = 1 << 1  # HS_SHM_BENCH_FAULT: the plant faulted (world diverged); hilsim stops
CLOCK_WALL, CLOCK_LOCKSTEP, CLOCK_SYNC = range(3)  # enum hs_shm_clock_mode (ClientInfo.clock_mode)

_u32, _i32, _u64, _i64, _f64 = (ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_int64,
                                ctypes.c_double)


class JointState(ctypes.Structure):
    _fields_ = [("q", _f64), ("dq", _f64), ("tau", _f64), ("current_a", _f64),
                ("encoder_count", _i64)]


class ImuState(ctypes.Structure):
    _fields_ = [("accel_mps2", _f64 * 3), ("gyro_rad_s", _f64 * 3)]


class FtState(ctypes.Structure):
    _fields_ = [("force_n", _f64 * 3), ("torque_nm", _f64 * 3)]


class ClientInfo(ctypes.Structure):
    _fields_ = [("abi_version", _u32), ("joint_count", _u32), ("imu_count", _u32),
                ("ft_count", _u32), ("tick_period_ns", _u64), ("command_timeout_ns", _u64),
                ("client_timeout_ns", _u64), ("server_pid", _i32), ("clock_mode", _u32)]


class ClientState(ctypes.Structure):
    _fields_ = [("tick", _u64), ("sim_time_s", _f64), ("mono_ns", _i64), ("command_seq", _u64),
                ("client_status", _u32), ("stale_joints", _u32), ("bench_flags", _u64),
                ("joints", ctypes.POINTER(JointState)), ("imus", ctypes.POINTER(ImuState)),
                ("fts", ctypes.POINTER(FtState))]


class ReadingDesc(ctypes.Structure):
    """struct hs_shm_reading_desc: one sensor of any kind in the readings section (ABI 1.3)."""
    _fields_ = [("name", ctypes.c_char * 48), ("kind", ctypes.c_char * 16),
                ("unit", ctypes.c_char * 16), ("value_count", _u32), ("value_index", _u32),
                ("group", _u32), ("reserved", _u32), ("param", _f64 * 4)]


class ReadingStamp(ctypes.Structure):
    _fields_ = [("samples", _u64), ("time_ns", _i64)]


class Reading:
    """One sensor's reading: name, kind ("accel", "gyro", "force", "range", ...), unit, params,
    samples (a change means a new sample or scan), time_ns and values (a list of floats)."""

    def __init__(self, desc, stamp, values):
        self.name = desc.name.decode()
        self.kind = desc.kind.decode()
        self.unit = desc.unit.decode()
        self.group = desc.group
        self.param = list(desc.param)
        self.samples = stamp.samples
        self.time_ns = stamp.time_ns
        self.values = values[desc.value_index:desc.value_index + desc.value_count]


class Command(ctypes.Structure):
    _fields_ = [("mode", _u32), ("reserved", _u32), ("q", _f64), ("dq", _f64), ("tau_ff", _f64),
                ("current_a", _f64), ("kp", _f64), ("kd", _f64)]


# Must match the C ABI (shm_abi.h static asserts); a mismatch means this file is out of date.
assert ctypes.sizeof(JointState) == 40 and ctypes.sizeof(ImuState) == 48
assert ctypes.sizeof(FtState) == 48 and ctypes.sizeof(Command) == 56
assert ctypes.sizeof(ReadingDesc) == 128 and ctypes.sizeof(ReadingStamp) == 16


class HilsimError(OSError):
    """A negative errno from libhilsim-client, with its message."""

    def __init__(self, err, message):
        super().__init__(err, message)


def _find_library():
    path = os.environ.get("HILSIM_CLIENT_LIB")
    if path:
        return path
    found = ctypes.util.find_library("hilsim-client")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    for pattern in ("../build/src/client/libhilsim-client.so",
                    "../build*/src/client/libhilsim-client.so"):
        hits = sorted(glob.glob(os.path.join(here, pattern)))
        if hits:
            return hits[0]
    raise OSError("libhilsim-client.so not found: set HILSIM_CLIENT_LIB to its path")


_lib = None


def _library():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(_find_library())
    p = ctypes.c_void_p
    sigs = {
        "hs_client_attach": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(p), ctypes.c_char_p,
                                            ctypes.c_size_t]),
        "hs_client_detach": (None, [p]),
        "hs_client_get_info": (ctypes.c_int, [p, ctypes.POINTER(ClientInfo)]),
        "hs_client_find_joint": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.POINTER(_u32)]),
        "hs_client_find_sensor": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.POINTER(_u32),
                                                 ctypes.POINTER(_u32)]),
        "hs_client_joint_name": (ctypes.c_char_p, [p, _u32]),
        "hs_client_joint_unit": (ctypes.c_char_p, [p, _u32]),
        "hs_client_wait_tick": (ctypes.c_int, [p, _i64, ctypes.POINTER(_u64),
                                               ctypes.POINTER(_u32)]),
        "hs_client_missed_ticks": (_u64, [p]),
        "hs_client_read_state": (ctypes.c_int, [p, ctypes.POINTER(ClientState)]),
        "hs_client_claim": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_size_t]),
        "hs_client_release": (None, [p]),
        "hs_client_write_command": (ctypes.c_int, [p, _u32, ctypes.POINTER(Command)]),
        "hs_client_write_commands": (ctypes.c_int, [p, ctypes.POINTER(Command), _u32]),
        "hs_client_last_command_seq": (_u64, [p]),
        "hs_client_heartbeat": (None, [p]),
        "hs_client_step": (ctypes.c_int, [p]),
        "hs_client_server_check": (ctypes.c_int, [p]),
        "hs_client_reading_count": (_u32, [p]),
        "hs_client_reading_value_count": (_u32, [p]),
        "hs_client_reading": (ctypes.POINTER(ReadingDesc), [p, _u32]),
        "hs_client_read_readings": (ctypes.c_int, [p, ctypes.POINTER(_u64),
                                                   ctypes.POINTER(ReadingStamp),
                                                   ctypes.POINTER(_f64)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def _check(r, what):
    if r < 0:
        raise HilsimError(-r, "%s: %s" % (what, os.strerror(-r)))
    return r


class Snapshot:
    """A copy of one consistent state snapshot (plain Python values)."""

    def __init__(self, st, nj, ni, nf):
        self.tick = st.tick
        self.sim_time_s = st.sim_time_s
        self.mono_ns = st.mono_ns
        self.command_seq = st.command_seq
        self.client_status = st.client_status
        self.stale_joints = st.stale_joints
        self.bench_flags = st.bench_flags
        self.safe_hold = bool(st.bench_flags & BENCH_SAFE_HOLD)
        self.fault = bool(st.bench_flags & BENCH_FAULT)
        self.q = [st.joints[i].q for i in range(nj)]
        self.dq = [st.joints[i].dq for i in range(nj)]
        self.tau = [st.joints[i].tau for i in range(nj)]
        self.current_a = [st.joints[i].current_a for i in range(nj)]
        self.encoder_count = [st.joints[i].encoder_count for i in range(nj)]
        self.imu_accel = [tuple(st.imus[i].accel_mps2) for i in range(ni)]
        self.imu_gyro = [tuple(st.imus[i].gyro_rad_s) for i in range(ni)]
        self.ft_force = [tuple(st.fts[i].force_n) for i in range(nf)]
        self.ft_torque = [tuple(st.fts[i].torque_nm) for i in range(nf)]


class Client:
    """One attachment to a bench. Not thread-safe: use it from one thread."""

    def __init__(self, bench):
        self._lib = _library()
        self._c = ctypes.c_void_p()
        err = ctypes.create_string_buffer(512)
        r = self._lib.hs_client_attach(bench.encode(), ctypes.byref(self._c), err, len(err))
        if r < 0:
            raise HilsimError(-r, err.value.decode(errors="replace"))
        self.bench = bench
        self.info = ClientInfo()
        self._lib.hs_client_get_info(self._c, ctypes.byref(self.info))
        nj, ni, nf = self.info.joint_count, self.info.imu_count, self.info.ft_count
        self._joints = (JointState * max(nj, 1))()
        self._imus = (ImuState * max(ni, 1))()
        self._fts = (FtState * max(nf, 1))()
        self._state = ClientState(joints=self._joints, imus=self._imus, fts=self._fts)
        self._cmds = (Command * max(nj, 1))()
        self.joint_names = [self._lib.hs_client_joint_name(self._c, i).decode()
                            for i in range(nj)]
        self.joint_units = [self._lib.hs_client_joint_unit(self._c, i).decode()
                            for i in range(nj)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()

    def __del__(self):
        self.detach()

    def detach(self):
        if getattr(self, "_c", None) and self._c.value:
            self._lib.hs_client_detach(self._c)
            self._c = ctypes.c_void_p()

    def find_joint(self, name):
        idx = _u32()
        _check(self._lib.hs_client_find_joint(self._c, name.encode(), ctypes.byref(idx)),
               "joint %r" % name)
        return idx.value

    def find_sensor(self, name):
        """Returns (kind, index): kind KIND_IMU or KIND_FORCE."""
        kind, idx = _u32(), _u32()
        _check(self._lib.hs_client_find_sensor(self._c, name.encode(), ctypes.byref(kind),
                                               ctypes.byref(idx)), "sensor %r" % name)
        return kind.value, idx.value

    def reading_names(self):
        """Names of every sensor in the readings section (any kind; empty before ABI 1.3)."""
        n = self._lib.hs_client_reading_count(self._c)
        return [self._lib.hs_client_reading(self._c, i).contents.name.decode() for i in range(n)]

    def read_readings(self):
        """Returns (tick, {name: Reading}) for every sensor of one published tick."""
        n = self._lib.hs_client_reading_count(self._c)
        nv = self._lib.hs_client_reading_value_count(self._c)
        stamps, values, tick = (ReadingStamp * max(n, 1))(), (_f64 * max(nv, 1))(), _u64()
        _check(self._lib.hs_client_read_readings(self._c, ctypes.byref(tick), stamps, values),
               "read_readings")
        vals = list(values)[:nv]
        out = {}
        for i in range(n):
            r = Reading(self._lib.hs_client_reading(self._c, i).contents, stamps[i], vals)
            out[r.name] = r
        return tick.value, out

    def wait_tick(self, timeout_s=1.0):
        """Blocks until a new tick; returns (tick, missed). TimeoutError if none came."""
        tick, missed = _u64(), _u32()
        r = self._lib.hs_client_wait_tick(self._c, int(timeout_s * 1e9), ctypes.byref(tick),
                                          ctypes.byref(missed))
        if r == -errno.ETIMEDOUT:
            raise TimeoutError("no tick from bench %r within %.3f s" % (self.bench, timeout_s))
        _check(r, "wait_tick")
        return tick.value, missed.value

    def server_check(self):
        """Raises HilsimError with errno ESHUTDOWN (the server stopped) or EIDRM (it is gone:
        crashed, or replaced by a new server) when this attachment is over; then detach and
        attach again. Not for every cycle: a stat and a /proc read."""
        _check(self._lib.hs_client_server_check(self._c), "server_check")

    @property
    def missed_ticks(self):
        return self._lib.hs_client_missed_ticks(self._c)

    def read_state(self):
        """The newest published state. A copy torn by a publish each time the C call tried
        (-EAGAIN: its retries are bounded for real-time callers) is tried again for up to 1 s:
        a Python caller preempted in the middle of its copy on a loaded machine is no error."""
        r = self._lib.hs_client_read_state(self._c, ctypes.byref(self._state))
        deadline = time.monotonic() + 1.0
        while r == -errno.EAGAIN and time.monotonic() < deadline:
            time.sleep(0.0005)
            r = self._lib.hs_client_read_state(self._c, ctypes.byref(self._state))
        _check(r, "read_state")
        return Snapshot(self._state, self.info.joint_count, self.info.imu_count,
                        self.info.ft_count)

    def claim(self):
        err = ctypes.create_string_buffer(256)
        r = self._lib.hs_client_claim(self._c, err, len(err))
        if r < 0:
            raise HilsimError(-r, err.value.decode(errors="replace"))

    def release(self):
        self._lib.hs_client_release(self._c)

    def write_command(self, joint, mode, q=0.0, dq=0.0, tau_ff=0.0, current_a=0.0, kp=0.0,
                      kd=0.0):
        cmd = Command(mode=mode, q=q, dq=dq, tau_ff=tau_ff, current_a=current_a, kp=kp, kd=kd)
        _check(self._lib.hs_client_write_command(self._c, joint, ctypes.byref(cmd)),
               "write_command")

    def write_commands(self, commands):
        """commands: a sequence of dicts (mode, q, dq, tau_ff, current_a, kp, kd) for joints
        0..len-1, written as one consistent update."""
        for i, c in enumerate(commands):
            self._cmds[i] = Command(**c)
        _check(self._lib.hs_client_write_commands(self._c, self._cmds, len(commands)),
               "write_commands")

    @property
    def lockstep(self):
        """True when the bench runs in lockstep: call step() once per tick."""
        return self.info.clock_mode == CLOCK_LOCKSTEP

    def step(self):
        """Lockstep: done with the tick wait_tick returned (commands written, or none: the
        previous ones stay); releases the next tick. Owner only (claim first)."""
        _check(self._lib.hs_client_step(self._c), "step")

    @property
    def last_command_seq(self):
        return self._lib.hs_client_last_command_seq(self._c)
