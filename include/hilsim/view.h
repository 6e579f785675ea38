/* hilsim view: a separate, non-real-time process that shows a running bench (or a recording)
 * in a browser. It attaches to the bench's shm segment read-only (hs_client_attach_readonly:
 * the mapping is PROT_READ) and asks the control socket for status; the RT loop never knows it
 * is there. HTTP + WebSocket come from libwebsockets, one thread: the page, its node_modules
 * (three.js, urdf-loader, uPlot) and the robot's URDF are static files; the state goes out on the
 * WebSocket as JSON at the display rate, a frame only when the socket drained the last one.
 * Reference: src/view/README.md. */
#ifndef HS_VIEW_H
#define HS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_VIEW_RATE_DEFAULT 30 /* frames per second to each browser */
#define HS_VIEW_RATE_MAX 120
#define HS_VIEW_CLIENTS_MAX 32 /* WebSocket sessions; more are refused */
#define HS_VIEW_MSG_MAX 2048   /* one message from a browser */
#define HS_VIEW_TOKEN_MAX 128
#define HS_VIEW_WHATIF_SETS_MAX 32

struct hs_view_opts {
    const char *bench;      /* live: the bench name (shm segment, control socket) */
    const char *config;     /* the bench's config: its models are drawn (NULL: plots only) */
    const char *record_dir; /* recording mode instead of live (NULL: live) */
    /* Recording mode: a what-if replayed beside it (hs_replay_run): another config (NULL: the
     * recording's own) and KEY=VALUE overrides; off unless whatif is set. */
    bool whatif;
    const char *whatif_config;
    const char *const *whatif_sets;
    uint32_t whatif_nsets;
    const char *listen;  /* address, default 127.0.0.1 */
    int port;            /* default 8765; 0 picks a free one (printed) */
    const char *token;   /* required for a non-loopback listen address */
    const char *web_dir; /* the page (NULL: the source tree's web/ or the installed one) */
    unsigned rate_hz;    /* frames per second, 1..HS_VIEW_RATE_MAX */
    bool allow_control;  /* browsers may send push / fault / clear / scenario commands */
    double duration_s;   /* stop after this long (0: until SIGINT/SIGTERM) */
};

/* Runs until SIGINT/SIGTERM or the duration: 0, or a negative errno with a message on stderr. */
int hs_view_run(const struct hs_view_opts *opts);

/* ---- pieces, each in its own file, testable alone ---- */

/* view_msg.c: one message from a browser (any bytes). */
enum hs_view_msg_kind {
    HS_VIEW_MSG_CTL,
    HS_VIEW_MSG_SEEK,
    HS_VIEW_MSG_PLAY,
    HS_VIEW_MSG_PAUSE,
    HS_VIEW_MSG_SPEED
};
struct hs_view_msg {
    enum hs_view_msg_kind kind;
    char line[1024]; /* ctl: one control-socket command, no newline */
    double value;    /* seek: tick; speed: factor */
};
/* 0 with *ret filled, or -EINVAL with a one-line reason in err. Never reads past size. */
int hs_view_msg_parse(const char *data, size_t size, struct hs_view_msg *ret, char *err,
                      size_t errsize);
/* The control commands a browser may send with --allow-control: push, fault, clear, inject,
 * scenario, state (not stop: a browser does not end the bench). */
bool hs_view_ctl_allowed(const char *line);

/* view_pose.c: the bench's `state --json` answer (any bytes) reduced to the page's "pose"
 * message: {"type":"pose","tick":N,"t":S,"roots":[[LINK,x,y,z,qw,qx,qy,qz],...]}, one entry per
 * model (its root link, the first of its links), into out; when the answer has them, then
 * "contacts":[[px,py,pz,fx,fy,fz],...] (the last physics step's contact points, world frame, m,
 * and the force on the robot's link, N), "contacts_dropped":N (the points the bench left out)
 * "solver":[penetration_m, joint_error_m, force_jump_n] (null: not finite) and
 * "phases":[[PHASE,p50,p99,max],...] (the tick's phases in µs over the ticks since the bench's
 * copy before; null where it had none). The number of
 * roots, or -EINVAL with the reason in err, or -ENOSPC when out is too small; out is "" on any
 * error. */
#define HS_VIEW_POSE_MAX 16384
#define HS_VIEW_CONTACTS_MAX 256 /* contact points a pose message carries at most */
int hs_view_pose_parse(const char *data, size_t size, char *out, size_t outsize, char *err,
                       size_t errsize);

/* view_scen.c: the same answer's "scenario" member (the scenario started live, its steps and
 * expectations: scenarios/README.md, `state`) checked and written again as the page's message
 * {"type":"scenario","scenario":null|{name, state, ticks, duration_s, verdict, steps:
 * [{name, kind, onset_tick, active_ticks}], expectations: [{name, line, status, tick, value,
 * opened_tick}]}} into out. Its length; 0 (out "") when the answer has no "scenario" (an older
 * bench); -EINVAL with the reason in err; -ENOSPC when out is too small; out is "" on error. */
#define HS_VIEW_SCEN_MAX 32768
int hs_view_scen_parse(const char *data, size_t size, char *out, size_t outsize, char *err,
                       size_t errsize);

/* view_token.c: whether a request carries the token (?token=T in the URI args, or the cookie
 * hilsim_token=T). Constant time in the token's length. */
bool hs_view_token_ok(const char *token, const char *args, const char *cookie);
/* Whether addr is a loopback address (127.0.0.0/8, ::1, localhost). */
bool hs_view_addr_loopback(const char *addr);

#endif
