/* The control commands' grammar, checked in full before anything reaches the tick: the verb,
 * the arity, every name against the bench, every number finite and within its bound. One
 * error line says which word is wrong and why. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "hilsim/closest_name.h"
#include "hilsim/ctl.h"

#define MAX_WORDS 8
#define VERBS "status, state, push, fault, inject, scenario, clear, stop"

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* Splits a copy of the line on blanks; -E2BIG past MAX_WORDS, -EILSEQ for a control byte. */
static int split(char *buf, char *words[MAX_WORDS], int *ret_n)
{
    int n = 0;
    for (char *p = buf; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        if (n == MAX_WORDS)
            return -E2BIG;
        words[n++] = p;
        while (*p && *p != ' ' && *p != '\t') {
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                return -EILSEQ;
            p++;
        }
        if (*p)
            *p++ = 0;
    }
    *ret_n = n;
    return 0;
}

static int number(const char *word, const char *what, double lo, double hi, double *ret, char *err,
                  size_t size)
{
    char *end;
    errno = 0;
    double v = strtod(word, &end);
    if (end == word || *end)
        return fail(err, size, "%s: '%s' is not a number", what, word);
    if (!isfinite(v) || errno == ERANGE)
        return fail(err, size, "%s: '%s' is not a finite number", what, word);
    if (v < lo || v > hi)
        return fail(err, size, "%s: %g is outside [%g, %g]", what, v, lo, hi);
    *ret = v;
    return 0;
}

static int arity(int n, int want, const char *usage, char *err, size_t size)
{
    if (n != want)
        return fail(err, size, "wrong number of arguments: usage: %s", usage);
    return 0;
}

#define NAMES_LISTED 64 /* names an error may list; past that it says how many there are */

/* An unknown link or joint: the error names the closest valid one (a typo) and lists them. */
static int unknown(const struct hs_ctl_names *names, bool is_joint, const char *word, char *err,
                   size_t size)
{
    const char *what = is_joint ? "joint" : "link";
    int n = snprintf(err, size, "unknown %s '%.60s'", what, word);
    if (!names->name || n < 0 || (size_t)n >= size)
        return -EINVAL;
    char cand[NAMES_LISTED][2 * HS_NAME_MAX + 2];
    const char *ptr[NAMES_LISTED];
    uint32_t count = 0, total = 0;
    char buf[2 * HS_NAME_MAX + 2];
    for (uint32_t i = 0; names->name(names->ctx, is_joint, i, buf, sizeof buf) == 0; i++, total++)
        if (count < NAMES_LISTED) {
            memcpy(cand[count], buf, sizeof buf);
            ptr[count] = cand[count];
            count++;
        }
    const char *best = hs_closest_name(word, ptr, count, sizeof ptr[0]);
    size_t len = (size_t)n;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(err + len, size - len, __VA_ARGS__);                                     \
        if (k_ < 0 || (size_t)k_ >= size - len)                                                    \
            goto cut;                                                                              \
        len += (size_t)k_;                                                                         \
    } while (0)
    if (best)
        ADD(": did you mean '%s'?", best);
    if (!total)
        ADD(" (this bench has no %s a command can name)", is_joint ? "joints" : "movable links");
    for (uint32_t i = 0; i < count; i++)
        ADD("%s%s", i ? ", " : (best ? " valid: " : ": valid: "), ptr[i]);
    if (total > count)
        ADD(" and %u more", total - count);
#undef ADD
    return -EINVAL;
cut: /* the list did not fit: end it visibly */
    if (size > 5)
        snprintf(err + size - 5, 5, " ...");
    return -EINVAL;
}

static int joint(const struct hs_ctl_names *names, const char *word, uint32_t *ret, char *err,
                 size_t size)
{
    int j = names->joint(names->ctx, word);
    if (j < 0)
        return unknown(names, true, word, err, size);
    *ret = (uint32_t)j;
    return 0;
}

#define PUSH_USAGE "push LINK FX FY FZ DURATION_S"
#define SENSOR_USAGE "fault sensor JOINT stuck | fault sensor JOINT offset VALUE"
#define ACT_USAGE "fault actuator JOINT derate SHARE | fault actuator JOINT no-response"

static int push(const struct hs_ctl_names *names, char **w, int n, struct hs_ctl_cmd *c, char *err,
                size_t size)
{
    int r = arity(n, 6, PUSH_USAGE, err, size);
    if (r < 0)
        return r;
    r = names->link(names->ctx, w[1], &c->body, &c->link);
    if (r == -EEXIST)
        return fail(err, size, "link '%s' is in several models: name it MODEL/LINK", w[1]);
    if (r == -EPERM)
        return fail(err, size, "link '%s' belongs to a static model: it cannot move", w[1]);
    if (r < 0)
        return unknown(names, false, w[1], err, size);
    static const char *const axis[3] = {"FX", "FY", "FZ"};
    for (int k = 0; k < 3; k++)
        if ((r = number(w[2 + k], axis[k], -HS_CTL_FORCE_MAX_N, HS_CTL_FORCE_MAX_N, &c->force_n[k],
                        err, size)) < 0)
            return r;
    if ((r = number(w[5], "DURATION_S", 0, HS_CTL_DURATION_MAX_S, &c->value, err, size)) < 0)
        return r;
    if (!(c->value > 0))
        return fail(err, size, "DURATION_S: must be above 0");
    c->kind = HS_CTL_PUSH;
    return 0;
}

static int fault(const struct hs_ctl_names *names, char **w, int n, struct hs_ctl_cmd *c, char *err,
                 size_t size)
{
    if (n < 2)
        return fail(err, size, "wrong number of arguments: usage: %s | %s", SENSOR_USAGE,
                    ACT_USAGE);
    bool sensor = !strcmp(w[1], "sensor");
    if (!sensor && strcmp(w[1], "actuator"))
        return fail(err, size, "unknown fault target '%s' (sensor or actuator)", w[1]);
    const char *usage = sensor ? SENSOR_USAGE : ACT_USAGE;
    if (n < 4)
        return fail(err, size, "wrong number of arguments: usage: %s", usage);
    int r = joint(names, w[2], &c->joint, err, size);
    if (r < 0)
        return r;
    const char *kind = w[3];
    if (sensor && !strcmp(kind, "stuck")) {
        c->kind = HS_CTL_SENSOR_STUCK;
        return arity(n, 4, usage, err, size);
    }
    if (sensor && !strcmp(kind, "offset")) {
        c->kind = HS_CTL_SENSOR_OFFSET;
        if ((r = arity(n, 5, usage, err, size)) < 0)
            return r;
        return number(w[4], "VALUE", -HS_CTL_OFFSET_MAX, HS_CTL_OFFSET_MAX, &c->value, err, size);
    }
    if (!sensor && !strcmp(kind, "derate")) {
        c->kind = HS_CTL_ACT_DERATE;
        if ((r = arity(n, 5, usage, err, size)) < 0)
            return r;
        return number(w[4], "SHARE", 0, 1, &c->value, err, size);
    }
    if (!sensor && !strcmp(kind, "no-response")) {
        c->kind = HS_CTL_ACT_NO_RESPONSE;
        return arity(n, 4, usage, err, size);
    }
    return fail(err, size, "unknown %s fault '%s': usage: %s", w[1], kind, usage);
}

#define INJECT_USAGE "inject {STEP} (one scenario step as a YAML flow mapping)"
#define SCENARIO_USAGE                                                                             \
    "scenario start FILE [--junit FILE] [--result-json FILE] | scenario stop | scenario status"

/* inject: the rest of the line after the verb is the step, checked by the scenario's parser
 * and binding in the server; here only that it is there and holds no control byte. */
static int inject(const char *buf, size_t len, struct hs_ctl_cmd *c, char *err, size_t size)
{
    const char *p = buf;
    while (*p == ' ' || *p == '\t')
        p++;
    p += strlen("inject");
    while (*p == ' ' || *p == '\t')
        p++;
    size_t off = (size_t)(p - buf), n = len - off;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (!n)
        return fail(err, size, "wrong number of arguments: usage: %s", INJECT_USAGE);
    for (size_t k = 0; k < n; k++)
        if (((unsigned char)p[k] < 0x20 && p[k] != '\t') || p[k] == 0x7f)
            return fail(err, size, "control character in the command");
    c->kind = HS_CTL_INJECT;
    c->text = (struct hs_ctl_arg){(uint16_t)off, (uint16_t)n};
    return 0;
}

static struct hs_ctl_arg arg_of(const char *buf, const char *word)
{
    return (struct hs_ctl_arg){(uint16_t)(word - buf), (uint16_t)strlen(word)};
}

static int absolute(const char *word, const char *what, char *err, size_t size)
{
    if (word[0] != '/')
        return fail(err, size,
                    "%s: '%.60s' is not an absolute path (the bench has its own working "
                    "directory; hilsim ctl makes paths absolute)",
                    what, word);
    return 0;
}

static int scenario(const char *buf, char **w, int n, struct hs_ctl_cmd *c, char *err, size_t size)
{
    if (n == 2 && !strcmp(w[1], "stop")) {
        c->kind = HS_CTL_SCENARIO_STOP;
        return 0;
    }
    if (n == 2 && !strcmp(w[1], "status")) {
        c->kind = HS_CTL_SCENARIO_STATUS;
        return 0;
    }
    if (n < 3 || strcmp(w[1], "start") || n % 2 == 0)
        return fail(err, size, "wrong arguments: usage: %s", SCENARIO_USAGE);
    int r = absolute(w[2], "FILE", err, size);
    if (r < 0)
        return r;
    c->file = arg_of(buf, w[2]);
    for (int k = 3; k + 1 < n; k += 2) {
        bool junit = !strcmp(w[k], "--junit");
        if (!junit && strcmp(w[k], "--result-json"))
            return fail(err, size, "unknown option '%.40s': usage: %s", w[k], SCENARIO_USAGE);
        struct hs_ctl_arg *a = junit ? &c->junit : &c->json;
        if (a->len)
            return fail(err, size, "%s given twice", w[k]);
        if ((r = absolute(w[k + 1], w[k], err, size)) < 0)
            return r;
        *a = arg_of(buf, w[k + 1]);
    }
    c->kind = HS_CTL_SCENARIO_START;
    return 0;
}

int hs_ctl_parse(const char *line, size_t size, const struct hs_ctl_names *names,
                 struct hs_ctl_cmd *ret, char *err, size_t errsize)
{
    char buf[HS_CTL_LINE_MAX + 1];
    size_t len = strnlen(line, size);
    if (len > HS_CTL_LINE_MAX)
        return fail(err, errsize, "line longer than %d bytes", HS_CTL_LINE_MAX);
    memcpy(buf, line, len);
    buf[len] = 0;
    if (len && buf[len - 1] == '\n')
        buf[--len] = 0;
    if (len && buf[len - 1] == '\r')
        buf[--len] = 0;
    struct hs_ctl_cmd c = {0};
    const char *first = buf + strspn(buf, " \t");
    if (!strncmp(first, "inject", 6) && (!first[6] || first[6] == ' ' || first[6] == '\t')) {
        int r = inject(buf, len, &c, err, errsize);
        if (r == 0)
            *ret = c;
        return r;
    }
    char *w[MAX_WORDS];
    int n = 0;
    int r = split(buf, w, &n);
    if (r == -E2BIG)
        return fail(err, errsize, "too many words (at most %d)", MAX_WORDS);
    if (r == -EILSEQ)
        return fail(err, errsize, "control character in the command");
    if (n == 0)
        return fail(err, errsize, "empty command (" VERBS ")");
    if (!strcmp(w[0], "status") || !strcmp(w[0], "clear") || !strcmp(w[0], "stop")) {
        c.kind = !strcmp(w[0], "status")  ? HS_CTL_STATUS
                 : !strcmp(w[0], "clear") ? HS_CTL_CLEAR
                                          : HS_CTL_STOP;
        r = arity(n, 1, w[0], err, errsize);
    } else if (!strcmp(w[0], "state")) {
        c.kind = HS_CTL_STATE;
        if (n == 2 && !strcmp(w[1], "--json"))
            c.value = 1;
        else
            r = arity(n, 1, "state [--json]", err, errsize);
    } else if (!strcmp(w[0], "push")) {
        r = push(names, w, n, &c, err, errsize);
    } else if (!strcmp(w[0], "fault")) {
        r = fault(names, w, n, &c, err, errsize);
    } else if (!strcmp(w[0], "scenario")) {
        r = scenario(buf, w, n, &c, err, errsize);
    } else {
        char word[40];
        snprintf(word, sizeof word, "%s", w[0]);
        return fail(err, errsize, "unknown command '%s' (" VERBS ")", word);
    }
    if (r < 0)
        return r;
    *ret = c;
    return 0;
}
