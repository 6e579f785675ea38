#include "hilsim/diag.h"

#include <stdio.h>
#include <string.h>

int hs_diag_vset(struct hs_diag *d, int err, const char *file, int line, int column,
                 const char *fmt, va_list ap)
{
    if (err > 0)
        err = -err;
    if (!d)
        return err;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    d->column = column;
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    return err;
}

int hs_diag_set(struct hs_diag *d, int err, const char *file, int line, int column, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(d, err, file, line, column, fmt, ap);
    va_end(ap);
    return r;
}

void hs_diag_format(const struct hs_diag *d, char *buf, unsigned long size)
{
    if (!size)
        return;
    if (d->file[0] && d->line > 0 && d->column > 0)
        snprintf(buf, size, "%s:%d:%d: %s", d->file, d->line, d->column, d->msg);
    else if (d->file[0] && d->line > 0)
        snprintf(buf, size, "%s:%d: %s", d->file, d->line, d->msg);
    else if (d->file[0])
        snprintf(buf, size, "%s: %s", d->file, d->msg);
    else
        snprintf(buf, size, "%s", d->msg);
}
