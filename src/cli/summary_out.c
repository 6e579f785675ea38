/* A summary printed in memory, then written with a bounded wait (summary_out.h). */
#include "summary_out.h"

#include <stdlib.h>
#include <unistd.h>

#include "hilsim/bounded_write.h"
#include "hilsim/log.h"

void hs__summary_begin(struct hs__summary_out *s)
{
    s->text = NULL;
    s->len = 0;
    s->f = open_memstream(&s->text, &s->len);
    if (!s->f)
        s->f = stdout; /* no memory for the stream: print as before, unbounded */
}

void hs__summary_end(struct hs__summary_out *s)
{
    if (s->f == stdout)
        return;
    fclose(s->f);
    s->f = NULL;
    fflush(stdout); /* nothing is normally pending: the run prints its lines on stderr */
    long w = hs_write_bounded(STDOUT_FILENO, s->text, s->len, HS_SUMMARY_WAIT_MS);
    if (w >= 0 && (size_t)w < s->len)
        hs_log(HS_LOG_WARNING,
               "standard output took no more within %d ms: %zu of the summary's %zu bytes "
               "dropped",
               HS_SUMMARY_WAIT_MS, s->len - (size_t)w, s->len);
    free(s->text);
    s->text = NULL;
}
