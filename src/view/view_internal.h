/* Shared by the files of src/view only. */
#ifndef HS_VIEW_INTERNAL_H
#define HS_VIEW_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/view.h"

#include <jansson.h>

/* view_pose.c: a `state --json` answer parsed once (NULL, with the reason in err, when it is not
 * JSON); hs__view_pose_from and hs__view_scen_from (view_scen.c) reduce the parsed answer as
 * hs_view_pose_parse and hs_view_scen_parse reduce its bytes. */
json_t *hs__view_state_load(const char *data, size_t size, char *err, size_t errsize);
int hs__view_pose_from(json_t *root, char *out, size_t outsize, char *err, size_t errsize);
int hs__view_scen_from(json_t *root, char *out, size_t outsize, char *err, size_t errsize);

/* A growing text buffer with LWS_PRE bytes of headroom before the text (lws_write writes the
 * WebSocket header there). */
#define HS_VIEW_PRE 16
struct hs_view_buf {
    char *mem; /* HS_VIEW_PRE + cap bytes */
    size_t len, cap;
    bool oom;
};
void hs_view_buf_reset(struct hs_view_buf *b);
void hs_view_buf_printf(struct hs_view_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void hs_view_buf_doubles(struct hs_view_buf *b, const double *v, size_t n, size_t stride);
/* A JSON string, quoted and escaped. */
void hs_view_buf_str(struct hs_view_buf *b, const char *s);
void hs_view_buf_free(struct hs_view_buf *b);
static inline char *hs_view_buf_text(struct hs_view_buf *b)
{
    return b->mem ? b->mem + HS_VIEW_PRE : (char *)"";
}

/* view_json.c: the view's messages built with jansson. A number rounded to the digits the page gets
 * (%.*g, or %.*f for hs__view_fixed), null when not finite; an array of n numbers every stride
 * doubles (NULL when out of memory); text as a JSON string ('?' for every byte past ASCII when
 * it is not UTF-8; NULL when out of memory). */
json_t *hs__view_num(double x, int digits);
json_t *hs__view_fixed(double x, int decimals);
json_t *hs__view_nums(const double *v, size_t n, size_t stride, int digits);
json_t *hs__view_text(const char *s);
/* Insertions that take val whatever happens; a failure sets *bad. */
void hs__view_set(json_t *obj, const char *key, json_t *val, bool *bad);
void hs__view_add(json_t *arr, json_t *val, bool *bad);
/* The message (a reference this takes, and drops) into a fixed buffer (outsize > 0): its
 * length; -ENOMEM with out "" when it is NULL or bad (an insertion failed) or memory ran out: a
 * message is whole or not sent; -ENOSPC (out "") when it does not fit. */
int hs__view_dumpb(json_t *msg, bool bad, char *out, size_t outsize);

/* The signals' digits: the page's plots and scene always had six (a pose, nine). */
#define HS_VIEW_DIGITS 6

/* Where the frames come from: a live bench or a recording. */
struct hs_view_source {
    void *ctx;
    /* The page's description of the bench (joints, readings, models), as JSON into out. */
    int (*info)(void *ctx, struct hs_view_buf *out);
    /* The newest frame into out: 1 when it is new since the last call, 0 when unchanged,
     * negative errno when the source is gone for good. Called at the display rate. */
    int (*frame)(void *ctx, int64_t now_ns, struct hs_view_buf *out);
    /* Timeline control (recordings; NULL for live). */
    void (*control)(void *ctx, const struct hs_view_msg *m);
    void (*destroy)(void *ctx);
};

int hs_view_live_open(const char *bench, struct hs_view_source *ret, char *err, size_t errsize);
/* A recording, and with o->whatif its replay under the what-if config beside it (run once, at
 * open: as fast as the machine allows). */
int hs_view_record_open(const struct hs_view_opts *o, struct hs_view_source *ret, char *err,
                        size_t errsize);

/* The models of a config written as URDF into dir (one <model>.urdf each) and described as a
 * JSON array into out: [{"name","urdf","static","position","rotation"}]. */
int hs_view_robot_export(const char *config, const char *dir, struct hs_view_buf *out, char *err,
                         size_t errsize);

/* The control socket, on a thread of its own (a slow bench never stalls the page): status every
 * half second, the root poses (`state --json`, view_pose.c) state_hz times a second (0: never),
 * and one command at a time for a browser. */
struct hs_view_ctl;
int hs_view_ctl_start(const char *bench, unsigned state_hz, struct hs_view_ctl **ret);
void hs_view_ctl_stop(struct hs_view_ctl *c); /* accepts NULL */
/* The last status answer into buf (empty when none yet); returns its generation (changes with
 * every new answer). */
uint64_t hs_view_ctl_status(struct hs_view_ctl *c, char *buf, size_t size);
/* The newest "pose" message into out when its generation differs from have; returns the
 * generation (0 until the first root poses arrived). */
uint64_t hs_view_ctl_pose(struct hs_view_ctl *c, uint64_t have, struct hs_view_buf *out);
/* The same for the "scenario" message (view_scen.c), raised only when its text changed. */
uint64_t hs_view_ctl_scen(struct hs_view_ctl *c, uint64_t have, struct hs_view_buf *out);
/* Queues line for the socket: 0, -EBUSY while another command is in flight. */
int hs_view_ctl_submit(struct hs_view_ctl *c, const char *line, uint64_t session);
/* An answer that came back: 1 with session and answer filled, 0 when none. */
int hs_view_ctl_answer(struct hs_view_ctl *c, uint64_t *ret_session, struct hs_view_buf *out);

#endif
