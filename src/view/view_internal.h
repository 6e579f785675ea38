/* Shared by the files of src/view only. */
#ifndef HS_VIEW_INTERNAL_H
#define HS_VIEW_INTERNAL_H

#include <pthread.h>
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

/* A message's bytes, with LWS_PRE bytes of headroom before the text (lws_write writes the
 * WebSocket header there). */
#define HS_VIEW_PRE 16
struct hs_view_buf {
    char *mem; /* HS_VIEW_PRE + cap bytes */
    size_t len, cap;
};
/* A copy of text (a message built elsewhere: the control thread's pose and scenario, an answer);
 * -ENOMEM leaves it empty. */
int hs_view_buf_set(struct hs_view_buf *b, const char *text);
void hs_view_buf_free(struct hs_view_buf *b);
static inline char *hs_view_buf_text(struct hs_view_buf *b)
{
    return b->mem ? b->mem + HS_VIEW_PRE : (char *)"";
}

/* view_json.c: the one way the view writes JSON. A number rounded to the digits the page gets
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
/* The message (a reference these take, and drop) into out: 0, or -ENOMEM with out empty when
 * it is NULL or bad (an insertion failed) or memory ran out: a message is whole or not sent. */
int hs__view_dump(json_t *msg, bool bad, struct hs_view_buf *out);
/* The same into a fixed buffer (outsize > 0): its length, -ENOSPC when it does not fit,
 * -ENOMEM; out is "" on error. */
int hs__view_dumpb(json_t *msg, bool bad, char *out, size_t outsize);

/* The signals' digits: the page's plots and scene always had six (a pose, nine). */
#define HS_VIEW_DIGITS 6

/* Where the frames come from: a live bench or a recording. */
struct hs_view_source {
    void *ctx;
    /* The page's description of the bench (joints, readings), a new reference (NULL: out of
     * memory). */
    json_t *(*info)(void *ctx);
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
 * JSON array in *ret: [{"name","urdf","static","position","rotation","force_sensors"}]. */
int hs_view_robot_export(const char *config, const char *dir, json_t **ret, char *err,
                         size_t errsize);

/* view_out.c: the server's own messages. {"type":"info","source":..,"models":..,"control":..,
 * "rate_hz":..} (takes source and models), {"type":"status","line":..,"view":{..}} and a
 * session's {"type":TYPE,"text":..}; 0 or -ENOMEM (out empty). */
struct hs_view_counts {
    unsigned clients;
    uint64_t bytes, frames, refused, sessions_refused;
    bool control, source_gone;
};
int hs__view_info_msg(json_t *source, json_t *models, bool control, unsigned rate_hz,
                      struct hs_view_buf *out);
int hs__view_status_msg(const char *line, const struct hs_view_counts *c, struct hs_view_buf *out);
int hs__view_reply_msg(const char *type, const char *text, struct hs_view_buf *out);

/* view_live.c: a live frame from what the segment gave (joints: nj, values: nv readings). */
struct hs_client_state;
int hs__view_live_frame(const struct hs_client_state *st, uint32_t nj, const double *values,
                        uint32_t nv, bool stopped, struct hs_view_buf *out);

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
