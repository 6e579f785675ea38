/* The view's HTTP and WebSocket server (libwebsockets, one thread). Files are lws mounts (the
 * page, three.js / urdf-loader / uPlot from node_modules, the exported URDFs); the WebSocket
 * "hilsim" carries, per session: the bench description once, the status twice a second, and the
 * newest frame at the display rate. A frame is written only when lws says the socket can take
 * it, so a slow browser gets fewer frames, never a backlog. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <libwebsockets.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "view_internal.h"

_Static_assert(HS_VIEW_PRE >= LWS_PRE, "buffer headroom for lws_write");

/* Root poses come from the control socket's plant copy (a bounded copy in the bench's tick per
 * request): at the display rate, but no more than this, whatever --rate says. */
#define POSE_HZ_MAX 30

struct session {
    struct session *next;
    struct lws *wsi;
    uint64_t id;
    uint64_t sent_frame, sent_status, sent_pose, sent_scen;
    bool info_sent;
    struct hs_view_buf reply; /* an answer or an error for this session only */
    bool reply_pending;
    char rx[HS_VIEW_MSG_MAX + 1];
    size_t rx_len;
    bool rx_bad; /* the message being received is too long or binary */
};

struct view {
    const struct hs_view_opts *o;
    struct hs_view_source src;
    struct hs_view_ctl *ctl;
    struct lws_context *ctx;
    lws_sorted_usec_list_t sul;
    struct hs_view_buf frame, status, info, pose, scen, answer;
    uint64_t frame_gen, status_gen, ctl_gen, pose_gen, pose_src_gen, scen_gen, scen_src_gen;
    struct session *sessions;
    unsigned nsessions;
    uint64_t next_id;
    uint64_t bytes_sent, frames_sent, msgs_refused, sessions_refused;
    bool source_gone;
    int64_t end_ns;
    char dir[64]; /* the view's own files (URDFs), removed at exit */
    char web[PATH_MAX];
    char vendor[3][PATH_MAX + 32];
};

static volatile sig_atomic_t stop_requested;
static struct lws_context *signal_ctx;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
    if (signal_ctx)
        lws_cancel_service(signal_ctx);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const struct lws_protocols protocols[];

static void make_status(struct view *v, const char *line)
{
    struct hs_view_counts c = {.clients = v->nsessions,
                               .bytes = v->bytes_sent,
                               .frames = v->frames_sent,
                               .refused = v->msgs_refused,
                               .sessions_refused = v->sessions_refused,
                               .control = v->o->allow_control,
                               .source_gone = v->source_gone};
    /* out of memory: no status this time (an empty one is never sent) */
    (void)hs__view_status_msg(line, &c, &v->status);
    v->status_gen++;
}

static void reply(struct session *s, const char *type, const char *text)
{
    if (hs__view_reply_msg(type, text, &s->reply) < 0)
        return; /* out of memory: the session hears nothing rather than half a message */
    s->reply_pending = true;
    lws_callback_on_writable(s->wsi);
}

/* Display-rate work: the newest frame, the status, answers from the control socket. */
static void on_timer(lws_sorted_usec_list_t *sul)
{
    struct view *v = lws_container_of(sul, struct view, sul);
    int64_t now = now_ns();
    bool wake = false;
    if (!v->source_gone) {
        int r = v->src.frame(v->src.ctx, now, &v->frame);
        if (r > 0) {
            v->frame_gen++;
            wake = true;
        } else if (r < 0) {
            v->source_gone = true;
            fprintf(stderr, "hilsim view: the source ended (%s); still serving the last frame\n",
                    strerror(-r));
        }
    }
    static int64_t last_status;
    char line[4096] = "";
    uint64_t gen = v->ctl ? hs_view_ctl_status(v->ctl, line, sizeof line) : 0;
    if (gen != v->ctl_gen || now - last_status > 500000000) {
        v->ctl_gen = gen;
        last_status = now;
        make_status(v, line);
        wake = true;
    }
    if (v->ctl) {
        uint64_t pg = hs_view_ctl_pose(v->ctl, v->pose_src_gen, &v->pose);
        if (pg != v->pose_src_gen) {
            v->pose_src_gen = pg;
            v->pose_gen++;
            wake = true;
        }
        uint64_t sg = hs_view_ctl_scen(v->ctl, v->scen_src_gen, &v->scen);
        if (sg != v->scen_src_gen) {
            v->scen_src_gen = sg;
            v->scen_gen++;
            wake = true;
        }
    }
    uint64_t sid;
    if (v->ctl && hs_view_ctl_answer(v->ctl, &sid, &v->answer)) {
        const char *answer = hs_view_buf_text(&v->answer);
        for (struct session *s = v->sessions; s; s = s->next)
            if (s->id == sid)
                reply(s, !strncmp(answer, "ok", 2) ? "answer" : "error", answer);
    }
    if (wake)
        lws_callback_on_writable_all_protocol(v->ctx, &protocols[1]);
    if (v->end_ns && now >= v->end_ns) {
        stop_requested = 1;
        lws_cancel_service(v->ctx);
    }
    lws_sul_schedule(v->ctx, 0, &v->sul, on_timer, 1000000 / (lws_usec_t)v->o->rate_hz);
}

static bool request_authorised(struct view *v, struct lws *wsi)
{
    if (!v->o->token)
        return true;
    char args[512] = "", cookie[512] = "";
    /* Each query argument is its own fragment: look at each. */
    for (int i = 0; i < 16; i++) {
        if (lws_hdr_copy_fragment(wsi, args, sizeof args, WSI_TOKEN_HTTP_URI_ARGS, i) <= 0)
            break;
        if (hs_view_token_ok(v->o->token, args, NULL))
            return true;
    }
    if (lws_hdr_copy(wsi, cookie, sizeof cookie, WSI_TOKEN_HTTP_COOKIE) > 0 &&
        hs_view_token_ok(v->o->token, NULL, cookie))
        return true;
    return false;
}

static int http_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                   size_t len)
{
    struct view *v = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
        /* The web directory holds the npm install too: only the page and /vendor are served. */
        if (!strncmp(in, "/node_modules", 13) || !strncmp(in, "/package", 8)) {
            lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
            return 1;
        }
        if (!request_authorised(v, wsi)) {
            lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN,
                                   "this view needs its token: open it with ?token=...");
            return 1;
        }
        return 0;
    case LWS_CALLBACK_ADD_HEADERS: {
        /* The page's own requests (scripts, modules, the WebSocket) carry no ?token=: a
         * request that had it leaves the token in a cookie for them. */
        if (!v->o->token)
            return 0;
        struct lws_process_html_args *args = in;
        char cookie[HS_VIEW_TOKEN_MAX + 64];
        int n = snprintf(cookie, sizeof cookie,
                         "hilsim_token=%s; Path=/; HttpOnly; SameSite=Strict", v->o->token);
        unsigned char *p = (unsigned char *)args->p;
        if (lws_add_http_header_by_name(
                wsi, (const unsigned char *)"set-cookie:", (const unsigned char *)cookie, n, &p,
                (unsigned char *)args->p + args->max_len))
            return 1;
        args->p = (char *)p;
        return 0;
    }
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static void on_message(struct view *v, struct session *s)
{
    char err[256];
    struct hs_view_msg m;
    if (s->rx_bad) {
        v->msgs_refused++;
        reply(s, "error", "refused: binary or longer than 2048 bytes");
        return;
    }
    if (hs_view_msg_parse(s->rx, s->rx_len, &m, err, sizeof err) < 0) {
        v->msgs_refused++;
        reply(s, "error", err);
        return;
    }
    if (m.kind == HS_VIEW_MSG_CTL) {
        if (!v->o->allow_control || !v->ctl) {
            v->msgs_refused++;
            reply(s, "error", "read-only view: controls need hilsim view --allow-control");
        } else if (!hs_view_ctl_allowed(m.line)) {
            v->msgs_refused++;
            reply(s, "error", "not a browser command (push, fault, clear, inject, scenario)");
        } else if (hs_view_ctl_submit(v->ctl, m.line, s->id) < 0) {
            reply(s, "error", "busy: another command is on its way to the bench");
        }
        return;
    }
    if (!v->src.control) {
        v->msgs_refused++;
        reply(s, "error", "a live bench has no timeline (play, pause, seek are for recordings)");
        return;
    }
    v->src.control(v->src.ctx, &m);
    lws_callback_on_writable_all_protocol(v->ctx, &protocols[1]);
}

static int write_text(struct view *v, struct session *s, struct hs_view_buf *b)
{
    int n = lws_write(s->wsi, (unsigned char *)hs_view_buf_text(b), b->len, LWS_WRITE_TEXT);
    if (n < (int)b->len)
        return -1;
    v->bytes_sent += b->len;
    return 0;
}

static int ws_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                 size_t len)
{
    struct view *v = lws_context_user(lws_get_context(wsi));
    struct session *s = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return request_authorised(v, wsi) ? 0 : 1;
    case LWS_CALLBACK_ESTABLISHED:
        if (v->nsessions >= HS_VIEW_CLIENTS_MAX) {
            v->sessions_refused++;
            lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                             (unsigned char *)"too many viewers", 16);
            return -1;
        }
        memset(s, 0, sizeof *s);
        s->wsi = wsi;
        s->id = ++v->next_id;
        s->next = v->sessions;
        v->sessions = s;
        v->nsessions++;
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLOSED:
        if (!s->wsi)
            return 0; /* refused at ESTABLISHED */
        for (struct session **p = &v->sessions; *p; p = &(*p)->next)
            if (*p == s) {
                *p = s->next;
                v->nsessions--;
                break;
            }
        hs_view_buf_free(&s->reply);
        s->wsi = NULL;
        return 0;
    case LWS_CALLBACK_RECEIVE:
        if (!s->wsi)
            return -1; /* refused at ESTABLISHED: lws may still deliver before it closes */
        if (lws_frame_is_binary(wsi) || s->rx_len + len > HS_VIEW_MSG_MAX)
            s->rx_bad = true;
        else {
            memcpy(s->rx + s->rx_len, in, len);
            s->rx_len += len;
        }
        if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) {
            s->rx[s->rx_len] = 0;
            on_message(v, s);
            s->rx_len = 0;
            s->rx_bad = false;
        }
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        if (!s->wsi)
            return -1;
        if (lws_send_pipe_choked(wsi)) {
            lws_callback_on_writable(wsi);
            return 0;
        }
        int r = 0;
        if (s->reply_pending) {
            s->reply_pending = false;
            r = write_text(v, s, &s->reply);
        } else if (!s->info_sent) {
            s->info_sent = true;
            r = write_text(v, s, &v->info);
        } else if (s->sent_status != v->status_gen && v->status.len) {
            s->sent_status = v->status_gen;
            r = write_text(v, s, &v->status);
        } else if (s->sent_pose != v->pose_gen && v->pose.len) {
            s->sent_pose = v->pose_gen;
            r = write_text(v, s, &v->pose);
        } else if (s->sent_scen != v->scen_gen && v->scen.len) {
            s->sent_scen = v->scen_gen;
            r = write_text(v, s, &v->scen);
        } else if (s->sent_frame != v->frame_gen && v->frame.len) {
            s->sent_frame = v->frame_gen;
            r = write_text(v, s, &v->frame);
            v->frames_sent++;
        } else {
            return 0;
        }
        if (r < 0)
            return -1;
        if (s->reply_pending || s->sent_status != v->status_gen || s->sent_frame != v->frame_gen ||
            s->sent_pose != v->pose_gen || s->sent_scen != v->scen_gen)
            lws_callback_on_writable(wsi);
        return 0;
    }
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"http", http_cb, 0, 0, 0, NULL, 0},
    {"hilsim", ws_cb, sizeof(struct session), HS_VIEW_MSG_MAX, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* The models' meshes: binary STL, written by the URDF export (the triangles each model holds). */
static const struct lws_protocol_vhost_options mime_stl = {NULL, NULL, ".stl", "model/stl"};
static const struct lws_protocol_vhost_options mime_urdf = {&mime_stl, NULL, ".urdf",
                                                            "application/xml"};
static const struct lws_protocol_vhost_options mime_json = {&mime_urdf, NULL, ".json",
                                                            "application/json"};
static const struct lws_protocol_vhost_options mime_mjs = {&mime_json, NULL, ".mjs",
                                                           "text/javascript"};

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The page from --web, else the source tree when this hilsim runs from its build directory,
 * else the installed copy. */
static int find_web(struct view *v)
{
    if (v->o->web_dir) {
        snprintf(v->web, sizeof v->web, "%s", v->o->web_dir);
    } else {
        char exe[PATH_MAX], build[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        bool from_build = realpath(HS_VIEW_BUILD_DIR, build) &&
                          !strncmp(exe, build, strlen(build)) && exe[strlen(build)] == '/';
        snprintf(v->web, sizeof v->web, "%s", from_build ? HS_VIEW_WEB_SRC : HS_VIEW_WEB_INSTALL);
    }
    static const char *const pkgs[3] = {"three", "urdf-loader", "uplot"};
    for (int i = 0; i < 3; i++) {
        int n = snprintf(v->vendor[i], sizeof v->vendor[i], "%s/node_modules/%s", v->web, pkgs[i]);
        if (n < 0 || (size_t)n >= sizeof v->vendor[i] || !is_dir(v->vendor[i])) {
            fprintf(stderr,
                    "hilsim view: %s is missing: the page's packages are not installed (run "
                    "scripts/setup.sh, or npm ci in web/)\n",
                    v->vendor[i]);
            return -ENOENT;
        }
    }
    return 0;
}

static int serve(struct view *v)
{
    const struct hs_view_opts *o = v->o;
    struct lws_http_mount m_robot = {.mountpoint = "/robot",
                                     .origin = v->dir,
                                     .origin_protocol = LWSMPRO_FILE,
                                     .protocol = "http",
                                     .mountpoint_len = 6,
                                     .extra_mimetypes = &mime_mjs};
    struct lws_http_mount m_uplot = {.mount_next = &m_robot,
                                     .mountpoint = "/vendor/uplot",
                                     .origin = v->vendor[2],
                                     .origin_protocol = LWSMPRO_FILE,
                                     .protocol = "http",
                                     .mountpoint_len = 13,
                                     .extra_mimetypes = &mime_mjs};
    struct lws_http_mount m_urdf = {.mount_next = &m_uplot,
                                    .mountpoint = "/vendor/urdf-loader",
                                    .origin = v->vendor[1],
                                    .origin_protocol = LWSMPRO_FILE,
                                    .protocol = "http",
                                    .mountpoint_len = 19,
                                    .extra_mimetypes = &mime_mjs};
    struct lws_http_mount m_three = {.mount_next = &m_urdf,
                                     .mountpoint = "/vendor/three",
                                     .origin = v->vendor[0],
                                     .origin_protocol = LWSMPRO_FILE,
                                     .protocol = "http",
                                     .mountpoint_len = 13,
                                     .extra_mimetypes = &mime_mjs};
    struct lws_http_mount m_root = {.mount_next = &m_three,
                                    .mountpoint = "/",
                                    .origin = v->web,
                                    .def = "index.html",
                                    .origin_protocol = LWSMPRO_FILE,
                                    .protocol = "http",
                                    .mountpoint_len = 1,
                                    .extra_mimetypes = &mime_mjs};

    lws_set_log_level(0, NULL); /* hostile input would flood the log: the view counts it instead */
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = o->port;
    info.iface = o->listen;
    info.protocols = protocols;
    info.mounts = &m_root;
    info.user = v;
    info.timeout_secs = 10; /* a connection that sends nothing is dropped */
    info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
    /* An IPv4 address binds only with IPv6 off (lws would otherwise listen on every address):
     * the test checks the listening socket's address. */
    struct in_addr a4;
    if (inet_pton(AF_INET, o->listen, &a4) == 1)
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    info.fd_limit_per_thread = 1024;
    v->ctx = lws_create_context(&info);
    if (!v->ctx) {
        fprintf(stderr, "hilsim view: cannot listen on %s port %d (in use, or a bad address)\n",
                o->listen, o->port);
        return -EADDRINUSE;
    }
    struct lws_vhost *vh = lws_get_vhost_by_name(v->ctx, "default");
    int port = vh ? lws_get_vhost_listen_port(vh) : o->port;
    printf("hilsim view: http://%s:%d/%s%s\n", o->listen, port, o->token ? "?token=" : "",
           o->token ? o->token : "");
    fflush(stdout);
    signal_ctx = v->ctx;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (o->duration_s > 0)
        v->end_ns = now_ns() + (int64_t)(o->duration_s * 1e9);
    lws_sul_schedule(v->ctx, 0, &v->sul, on_timer, 1000);
    while (!stop_requested)
        if (lws_service(v->ctx, 0) < 0)
            break;
    signal_ctx = NULL;
    lws_context_destroy(v->ctx);
    return 0;
}

/* The view's own files: model-N.urdf and the meshes the export wrote beside each, in
 * model-N_meshes/ (nothing else is ever written there). */
static void remove_dir(const char *dir)
{
    char p[PATH_MAX];
    for (unsigned i = 0; i < 64; i++) {
        snprintf(p, sizeof p, "%s/model-%u.urdf", dir, i);
        unlink(p);
        snprintf(p, sizeof p, "%s/model-%u_meshes", dir, i);
        DIR *d = opendir(p);
        if (!d)
            continue;
        for (struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] != '.')
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
        rmdir(p);
    }
    rmdir(dir);
}

int hs_view_run(const struct hs_view_opts *o)
{
    struct view *v = calloc(1, sizeof *v);
    if (!v)
        return -ENOMEM;
    v->o = o;
    char err[512] = "";
    json_t *models = NULL;
    int r = find_web(v);
    if (r < 0)
        goto out;
    snprintf(v->dir, sizeof v->dir, "/tmp/hilsim-view-XXXXXX");
    if (!mkdtemp(v->dir)) {
        r = -errno;
        fprintf(stderr, "hilsim view: %s: %s\n", v->dir, strerror(errno));
        v->dir[0] = 0;
        goto out;
    }
    if (o->config) {
        if ((r = hs_view_robot_export(o->config, v->dir, &models, err, sizeof err)) < 0) {
            fprintf(stderr, "hilsim view: %s\n", err);
            goto out;
        }
    } else if (!(models = json_array())) {
        r = -ENOMEM;
        goto out;
    }
    r = o->record_dir ? hs_view_record_open(o, &v->src, err, sizeof err)
                      : hs_view_live_open(o->bench, &v->src, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "hilsim view: %s\n", err[0] ? err : strerror(-r));
        goto out;
    }
    if (!o->record_dir &&
        (r = hs_view_ctl_start(o->bench, o->rate_hz < POSE_HZ_MAX ? o->rate_hz : POSE_HZ_MAX,
                               &v->ctl)) < 0)
        goto out;
    json_t *source = v->src.info(v->src.ctx);
    r = hs__view_info_msg(source, models, o->allow_control, o->rate_hz, &v->info);
    models = NULL; /* the message took it */
    if (r >= 0)
        r = serve(v);
out:
    hs_view_ctl_stop(v->ctl);
    if (v->src.destroy)
        v->src.destroy(v->src.ctx);
    if (v->dir[0])
        remove_dir(v->dir);
    json_decref(models);
    hs_view_buf_free(&v->frame);
    hs_view_buf_free(&v->status);
    hs_view_buf_free(&v->pose);
    hs_view_buf_free(&v->scen);
    hs_view_buf_free(&v->answer);
    hs_view_buf_free(&v->info);
    free(v);
    return r;
}
