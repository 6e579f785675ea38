/* URDF attribute access with errors that name file:line, the element and the attribute. */
#include <errno.h>
#include <libxml/xmlstring.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

static int line_of(const xmlNode *n)
{
    long l = n ? xmlGetLineNo(n) : 0;
    return l > 0 && l < 0x7fffffff ? (int)l : 0;
}

int hs__urdf_err(struct hs__urdf *u, const xmlNode *n, int err, const char *fmt, ...)
{
    char msg[HS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n && n->type == XML_ELEMENT_NODE)
        return hs_diag_set(u->diag, err, u->file, line_of(n), 0, "<%s>: %s", (const char *)n->name,
                           msg);
    return hs_diag_set(u->diag, err, u->file, line_of(n), 0, "%s", msg);
}

int hs__urdf_warn(struct hs__urdf *u, const xmlNode *n, const char *fmt, ...)
{
    struct hs_model *m = u->m;
    if (m->nwarnings >= 1000)
        return 0; /* enough to see the pattern */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (m->nwarnings == u->warnings_cap) {
        uint32_t cap = u->warnings_cap ? 2 * u->warnings_cap : 8;
        char **w = realloc(m->warnings, cap * sizeof *w);
        if (!w)
            return -ENOMEM;
        m->warnings = w;
        u->warnings_cap = cap;
    }
    char *s = NULL;
    if (asprintf(&s, "%s:%d: %s", u->file, line_of(n), msg) < 0)
        return -ENOMEM;
    m->warnings[m->nwarnings++] = s;
    return 0;
}

bool hs__urdf_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0;
}

const xmlNode *hs__urdf_child(const xmlNode *n, const char *name)
{
    for (const xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (hs__urdf_is(c, name))
            return c;
    return NULL;
}

int hs__urdf_attr_str(struct hs__urdf *u, const xmlNode *n, const char *attr, bool required,
                      char *buf, size_t size)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    buf[0] = '\0';
    if (!v) {
        if (required)
            return hs__urdf_err(u, n, -EINVAL, "missing attribute '%s'", attr);
        return 0;
    }
    size_t len = strlen((const char *)v);
    if (len >= size) {
        int r = hs__urdf_err(u, n, -EINVAL, "attribute '%s' is longer than %zu characters", attr,
                             size - 1);
        xmlFree(v);
        return r;
    }
    memcpy(buf, v, len + 1);
    xmlFree(v);
    return 0;
}

static int parse_numbers(struct hs__urdf *u, const xmlNode *n, const char *attr, const char *s,
                         int count, double *ret)
{
    const char *p = s;
    for (int i = 0; i < count; i++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v))
            return hs__urdf_err(u, n, -EINVAL,
                                "attribute '%s' needs %d finite number%s, got \"%.80s\"", attr,
                                count, count > 1 ? "s" : "", s);
        ret[i] = v;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p)
        return hs__urdf_err(u, n, -EINVAL, "attribute '%s' needs %d number%s, got \"%.80s\"", attr,
                            count, count > 1 ? "s" : "", s);
    return 0;
}

int hs__urdf_attr_vec(struct hs__urdf *u, const xmlNode *n, const char *attr, int count,
                      const double *def, double *ret)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (!v) {
        if (!def)
            return hs__urdf_err(u, n, -EINVAL, "missing attribute '%s'", attr);
        memcpy(ret, def, (size_t)count * sizeof *ret);
        return 0;
    }
    int r = parse_numbers(u, n, attr, (const char *)v, count, ret);
    xmlFree(v);
    return r;
}

int hs__urdf_attr_num(struct hs__urdf *u, const xmlNode *n, const char *attr, bool required,
                      double def, double *ret)
{
    return hs__urdf_attr_vec(u, n, attr, 1, required ? NULL : &def, ret);
}

void hs__urdf_rpy(const double rpy[3], double R[9])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
    double cy = cos(rpy[2]), sy = sin(rpy[2]);
    /* R = Rz(yaw) Ry(pitch) Rx(roll) */
    R[0] = cy * cp;
    R[1] = cy * sp * sr - sy * cr;
    R[2] = cy * sp * cr + sy * sr;
    R[3] = sy * cp;
    R[4] = sy * sp * sr + cy * cr;
    R[5] = sy * sp * cr - cy * sr;
    R[6] = -sp;
    R[7] = cp * sr;
    R[8] = cp * cr;
}

int hs__urdf_origin(struct hs__urdf *u, const xmlNode *n, struct hs_pose *ret)
{
    static const double zero[3] = {0, 0, 0};
    hs_pose_identity(ret);
    const xmlNode *o = hs__urdf_child(n, "origin");
    if (!o)
        return 0;
    double rpy[3];
    int r = hs__urdf_attr_vec(u, o, "xyz", 3, zero, ret->p);
    if (r == 0)
        r = hs__urdf_attr_vec(u, o, "rpy", 3, zero, rpy);
    if (r == 0)
        hs__urdf_rpy(rpy, ret->R);
    return r;
}

int hs__urdf_text_num(struct hs__urdf *u, const xmlNode *n, double *ret)
{
    xmlChar *t = xmlNodeGetContent(n);
    char *end = NULL;
    double v = t ? strtod((const char *)t, &end) : NAN;
    bool ok = t && end != (char *)t && isfinite(v);
    while (ok && *end && strchr(" \t\r\n", *end))
        end++;
    ok = ok && !*end;
    xmlFree(t);
    if (!ok)
        return hs__urdf_err(u, n, -EINVAL, "expected one finite number");
    *ret = v;
    return 0;
}
