/* The diagnostic stream's text protocol, enough for moteus_tool's --info, --stop and
 * --dump-config (facts from mjbots/moteus docs/protocol/diagnostic.md and mjlib's
 * micro/telemetry_manager.cc, persistent_config.cc, command_manager.cc):
 * - one command per line (CR or LF ends it), answered on the same stream;
 * - `tel get NAME` and `tel schema NAME`: "emit NAME\r\n" or "schema NAME\r\n", a little-endian
 *   uint32 size and the binary data or schema (mjlib's telemetry format, which moteus/reader.py
 *   reads); channels "firmware" (version, serial_number, model, family, hwrev) and "git" (hash,
 *   dirty, timestamp); `tel stop`, `tel rate`, `tel fmt`, `tel text`: OK (hilsim emits no
 *   periodic telemetry and answers `tel get` in binary only); `tel list`;
 * - `conf enumerate [GROUP]`: "name value" lines then OK; `conf get NAME`: the value line;
 *   `conf set NAME VALUE` changes the gains and limits hilsim models (in RAM, as the firmware);
 *   `conf write`/`load`/`default`: OK; errors "ERR ..." as moteus_tool expects;
 * - `d stop`: the servo stops. Other `d` commands (calibration, PWM) are not modelled: ERR.
 * RT-safe: no allocation, no stdio; an answer that does not fit the output buffer is dropped
 * whole, as the firmware drops a command that arrives while it is still writing. */
#include <math.h>
#include <string.h>

#include "moteus.h"

struct out {
    uint8_t b[HS_MT_DIAG_OUT];
    unsigned n;
    bool full;
};

static void put(struct out *o, const void *p, unsigned n)
{
    if (o->n + n > sizeof o->b) {
        o->full = true;
        return;
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, (unsigned)strlen(s));
}

static void put_u32(struct out *o, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(o, b, 4);
}

static void put_u8(struct out *o, uint8_t v)
{
    put(o, &v, 1);
}

/* "%f" without stdio: six decimals, nan and inf spelled as the firmware prints them. */
static void put_num(struct out *o, double v)
{
    if (isnan(v)) {
        puts_(o, "nan");
        return;
    }
    if (v < 0)
        puts_(o, "-"), v = -v;
    if (isinf(v) || v >= 1e15) {
        puts_(o, "inf");
        return;
    }
    double ip = floor(v);
    long long frac = llround((v - ip) * 1e6);
    if (frac >= 1000000)
        ip += 1, frac -= 1000000;
    char d[32];
    unsigned k = 0;
    long long i = (long long)ip;
    do {
        d[k++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    while (k)
        put(o, &d[--k], 1);
    char f[8] = {'.'};
    for (int j = 6; j >= 1; j--, frac /= 10)
        f[j] = (char)('0' + frac % 10);
    put(o, f, 7);
}

static void put_str(struct out *o, const char *s) /* mjlib telemetry string: varuint length */
{
    unsigned n = (unsigned)strlen(s);
    put_u8(o, (uint8_t)n);
    put(o, s, n);
}

enum { T_FINAL = 0, T_BOOL = 2, T_UINT = 4, T_OBJECT = 16, T_ARRAY = 19 };

static void field(struct out *o, const char *name, const uint8_t *type, unsigned n)
{
    put_u8(o, 0); /* flags */
    put_str(o, name);
    put_u8(o, 0); /* aliases */
    put(o, type, n);
    put_u8(o, 0); /* no default */
}

static void schema_end(struct out *o)
{
    static const uint8_t fin[] = {0, 0, 0, T_FINAL, 0};
    put(o, fin, sizeof fin);
}

static const uint8_t u8_t[] = {T_UINT, 1}, u32_t[] = {T_UINT, 4}, u64_t[] = {T_UINT, 8},
                     bool_t[] = {T_BOOL}, serial_t[] = {T_ARRAY, 3, T_UINT, 4},
                     hash_t[] = {T_ARRAY, 20, T_UINT, 1};

static void serial(const struct hs_mt_node *n, uint32_t s[3])
{
    s[0] = 0x68696c73u, s[1] = 0x696d0000u, s[2] = n->cfg.servo_id; /* "hilsim", the ID */
}

static bool tel_body(const struct hs_mt_node *n, const char *name, bool schema, struct out *o)
{
    if (!strcmp(name, "firmware")) {
        if (schema) {
            put_u8(o, T_OBJECT), put_u8(o, 0);
            field(o, "version", u32_t, 2), field(o, "serial_number", serial_t, 4);
            field(o, "model", u32_t, 2), field(o, "family", u8_t, 2), field(o, "hwrev", u8_t, 2);
            schema_end(o);
        } else {
            uint32_t s[3];
            serial(n, s);
            put_u32(o, HS_MT_FIRMWARE_VERSION);
            for (int i = 0; i < 3; i++)
                put_u32(o, s[i]);
            put_u32(o, HS_MT_MODEL_NUMBER), put_u8(o, 0), put_u8(o, 0);
        }
        return true;
    }
    if (!strcmp(name, "git")) {
        if (schema) {
            put_u8(o, T_OBJECT), put_u8(o, 0);
            field(o, "hash", hash_t, 4), field(o, "dirty", bool_t, 1);
            field(o, "timestamp", u64_t, 2);
            schema_end(o);
        } else {
            static const uint8_t zero[20 + 1 + 8];
            put(o, zero, sizeof zero); /* no firmware build: a zero hash, clean, time 0 */
        }
        return true;
    }
    return false;
}

static void tel(const struct hs_mt_node *n, const char *args, struct out *o)
{
    char name[48] = {0};
    const char *sp = strchr(args, ' ');
    size_t cmdlen = sp ? (size_t)(sp - args) : strlen(args);
    const char *rest = sp ? sp + 1 : "";
    size_t nl = strcspn(rest, " ");
    memcpy(name, rest, nl < sizeof name - 1 ? nl : sizeof name - 1);
    if ((cmdlen == 3 && !strncmp(args, "get", 3)) || (cmdlen == 6 && !strncmp(args, "schema", 6))) {
        bool schema = cmdlen == 6;
        struct out body = {.n = 0};
        if (!tel_body(n, name, schema, &body)) {
            puts_(o, "unknown name\r\n");
            return;
        }
        puts_(o, schema ? "schema " : "emit "), puts_(o, name), puts_(o, "\r\n");
        put_u32(o, body.n);
        put(o, body.b, body.n);
    } else if (cmdlen == 4 && !strncmp(args, "list", 4)) {
        puts_(o, "firmware\r\ngit\r\nOK\r\n");
    } else if ((cmdlen == 4 && !strncmp(args, "rate", 4)) ||
               (cmdlen == 3 && !strncmp(args, "fmt", 3))) {
        struct out scratch = {.n = 0};
        puts_(o, tel_body(n, name, true, &scratch) ? "OK\r\n" : "unknown name\r\n");
    } else if ((cmdlen == 4 && !strncmp(args, "stop", 4)) ||
               (cmdlen == 4 && !strncmp(args, "text", 4))) {
        puts_(o, "OK\r\n");
    } else {
        puts_(o, "unknown command\r\n");
    }
}

/* The configuration hilsim models, by the firmware's names. */
enum conf_key {
    C_ID,
    C_KP,
    C_KI,
    C_KD,
    C_ILIMIT,
    C_TIMEOUT,
    C_VLIM,
    C_ALIM,
    C_MAXVEL,
    C_MAXCUR,
    C_ZERO_CAPTURE,
    C_MAX
};
static const char *const conf_names[C_MAX] = {
    "id.id",
    "servo.pid_position.kp",
    "servo.pid_position.ki",
    "servo.pid_position.kd",
    "servo.pid_position.ilimit",
    "servo.default_timeout_s",
    "servo.default_velocity_limit",
    "servo.default_accel_limit",
    "servo.max_velocity",
    "servo.max_current_A",
    "servo.velocity_zero_capture_threshold",
};

static double conf_value(const struct hs_mt_node *n, enum conf_key k)
{
    const struct hs_mt_config *c = &n->cfg;
    switch (k) {
    case C_ID:
        return c->servo_id;
    case C_KP:
        return c->kp_nm_rev;
    case C_KD:
        return c->kd_nm_s_rev;
    case C_TIMEOUT:
        return (double)c->default_timeout_ns * 1e-9;
    case C_VLIM:
        return c->default_velocity_limit_rev_s;
    case C_ALIM:
        return c->default_accel_limit_rev_s2;
    case C_MAXVEL:
        return c->max_velocity_rev_s;
    case C_MAXCUR:
        return c->max_torque_nm / c->torque_constant_nm_a;
    case C_ZERO_CAPTURE:
        return 0.05;
    default: /* ki, ilimit: hilsim's position loop has no integral */
        return 0;
    }
}

/* false: not settable here */
static bool conf_set(struct hs_mt_node *n, enum conf_key k, double v)
{
    struct hs_mt_config *c = &n->cfg;
    switch (k) {
    case C_KP:
        if (!(v >= 0 && v <= 1e5))
            return false;
        c->kp_nm_rev = v;
        return true;
    case C_KD:
        if (!(v >= 0 && v <= 1e4))
            return false;
        c->kd_nm_s_rev = v;
        return true;
    case C_TIMEOUT:
        if (!(v >= 0 && v <= 10))
            return false;
        c->default_timeout_ns = llround(v * 1e9);
        return true;
    case C_VLIM:
    case C_ALIM:
        if (!(isnan(v) || (v > 0 && v <= 1e5)))
            return false;
        *(k == C_VLIM ? &c->default_velocity_limit_rev_s : &c->default_accel_limit_rev_s2) = v;
        return true;
    case C_MAXVEL:
        if (!(v > 0 && v <= 1e5))
            return false;
        c->max_velocity_rev_s = v;
        return true;
    default:
        return false;
    }
}

/* A decimal number ("nan" too) without strtod, whose long inputs may allocate: false when the
 * text is not one. */
static bool parse_num(const char *p, double *ret)
{
    if (!strncmp(p, "nan", 3) && !p[3]) {
        *ret = NAN;
        return true;
    }
    double sign = 1, v = 0, scale = 1;
    if (*p == '-' || *p == '+')
        sign = *p++ == '-' ? -1 : 1;
    bool digits = false, dot = false;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            digits = true;
            if (dot)
                scale /= 10, v += (*p - '0') * scale;
            else
                v = v * 10 + (*p - '0');
        } else if (*p == '.' && !dot) {
            dot = true;
        } else if ((*p == 'e' || *p == 'E') && digits) {
            int e = 0, es = 1;
            p++;
            if (*p == '-' || *p == '+')
                es = *p++ == '-' ? -1 : 1;
            if (!*p)
                return false;
            for (; *p >= '0' && *p <= '9'; p++)
                e = e < 400 ? e * 10 + (*p - '0') : e;
            if (*p)
                return false;
            v *= pow(10, es * e);
            break;
        } else {
            return false;
        }
    }
    if (!digits)
        return false;
    *ret = sign * v;
    return true;
}

static int conf_find(const char *name, size_t len)
{
    for (int k = 0; k < C_MAX; k++)
        if (strlen(conf_names[k]) == len && !strncmp(conf_names[k], name, len))
            return k;
    return -1;
}

static bool known_group(const char *name, size_t len)
{
    static const char *const groups[] = {"id", "servo", "uuid"};
    size_t g = strcspn(name, ".");
    if (g > len)
        g = len;
    for (unsigned i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strlen(groups[i]) == g && !strncmp(groups[i], name, g))
            return true;
    return false;
}

static void conf(struct hs_mt_node *n, const char *args, struct out *o)
{
    const char *sp = strchr(args, ' ');
    size_t cmdlen = sp ? (size_t)(sp - args) : strlen(args);
    const char *rest = sp ? sp + 1 : "";
    size_t nl = strcspn(rest, " ");
    if (cmdlen == 9 && !strncmp(args, "enumerate", 9)) {
        bool uuid = nl == 4 && !strncmp(rest, "uuid", 4);
        if (nl && !uuid && !known_group(rest, nl)) {
            puts_(o, "ERR unknown group\r\n");
            return;
        }
        if (!nl || !uuid)
            for (int k = 0; k < C_MAX; k++) {
                size_t g = strcspn(conf_names[k], ".");
                if (nl && (g != nl || strncmp(conf_names[k], rest, nl)))
                    continue;
                puts_(o, conf_names[k]), puts_(o, " "), put_num(o, conf_value(n, (enum conf_key)k));
                puts_(o, "\r\n");
            }
        if (!nl || uuid) { /* a fixed UUID per servo: "hilsim", the ID */
            static const uint8_t base[16] = {'h', 'i', 'l', 's', 'i', 'm'};
            for (int i = 0; i < 16; i++) {
                char key[] = "uuid.uuid.00";
                key[10] = (char)('0' + i / 10), key[11] = (char)('0' + i % 10);
                if (i < 10)
                    key[10] = (char)('0' + i), key[11] = 0;
                puts_(o, key), puts_(o, " ");
                unsigned v = i == 15 ? n->cfg.servo_id : base[i];
                char d[4] = {0};
                int k = 0;
                do {
                    d[2 - k++] = (char)('0' + v % 10);
                    v /= 10;
                } while (v);
                put(o, d + 3 - k, (unsigned)k);
                puts_(o, "\r\n");
            }
        }
        puts_(o, "OK\r\n");
    } else if (cmdlen == 3 && !strncmp(args, "get", 3)) {
        int k = conf_find(rest, nl);
        if (k < 0) {
            puts_(o, known_group(rest, nl) ? "ERR error reading\r\n" : "ERR unknown group\r\n");
            return;
        }
        put_num(o, conf_value(n, (enum conf_key)k));
        puts_(o, "\r\n");
    } else if (cmdlen == 3 && !strncmp(args, "set", 3)) {
        int k = conf_find(rest, nl);
        const char *val = rest + nl + (rest[nl] ? 1 : 0);
        double v = 0;
        if (k < 0 && !known_group(rest, nl))
            puts_(o, "ERR unknown group\r\n");
        else if (k < 0 || !parse_num(val, &v) || !conf_set(n, (enum conf_key)k, v))
            puts_(o, "ERR error setting\r\n");
        else
            puts_(o, "OK\r\n");
    } else if ((cmdlen == 5 && !strncmp(args, "write", 5)) ||
               (cmdlen == 4 && !strncmp(args, "load", 4)) ||
               (cmdlen == 7 && !strncmp(args, "default", 7))) {
        puts_(o, "OK\r\n"); /* no persistent storage: the config file is hilsim's */
    } else {
        puts_(o, "ERR unknown command\r\n");
    }
}

void hs__mt_diag_line(struct hs_mt_node *n, const char *line, unsigned len)
{
    char buf[HS_MT_DIAG_LINE + 1];
    if (len > HS_MT_DIAG_LINE)
        len = HS_MT_DIAG_LINE;
    memcpy(buf, line, len);
    buf[len] = 0;
    static struct out o; /* tick thread only: the answer before it is known to fit */
    o.n = 0, o.full = false;
    if (!strncmp(buf, "tel ", 4))
        tel(n, buf + 4, &o);
    else if (!strncmp(buf, "conf ", 5))
        conf(n, buf + 5, &o);
    else if (!strcmp(buf, "d stop")) {
        n->mode = HS_MT_MODE_STOPPED;
        n->fault = 0;
        n->base.cmd.seq++;
        puts_(&o, "OK\r\n");
    } else
        puts_(&o, "ERR unknown command\r\n");
    struct hs_mt_diag *d = &n->diag;
    if (d->out_off) { /* what was polled is gone: the rest to the front */
        memmove(d->out, d->out + d->out_off, d->out_len - d->out_off);
        d->out_len -= d->out_off, d->out_off = 0;
    }
    if (o.full || d->out_len + o.n > HS_MT_DIAG_OUT) {
        n->base.stats.tx_overflow++; /* dropped whole */
        return;
    }
    memcpy(d->out + d->out_len, o.b, o.n);
    d->out_len += o.n;
}
