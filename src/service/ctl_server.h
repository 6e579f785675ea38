/* The control socket's two threads (scenarios/README.md, "Live control"), shared between
 * io_module_ctl.c (the socket thread: accepts, reads lines, answers `status` and `stop`
 * itself, never blocks: non-blocking sockets under one poll, per-client buffers and deadlines)
 * and ctl_worker.c (the worker: every other command, in arrival order, and all file work:
 * reading the scenario a client passed, the recording's copies, the verdict files). The worker
 * is the only producer of the control stage's queue and the only user of its live slots. */
#ifndef HS_SERVICE_CTL_SERVER_H
#define HS_SERVICE_CTL_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hilsim/ctl.h"
#include "hilsim/bench.h"
#include "hilsim/config.h"

#define HS_CTL_CLIENTS_MAX 32 /* connections served at once; more are refused politely */
/* connections one user other than root may hold: on a bench shared by several engineers one
 * of them (a script gone wrong) cannot take every slot from the others */
#define HS_CTL_CLIENTS_PER_USER 8
#define HS_CTL_FDS_MAX 8 /* descriptors one command may pass (SCM_RIGHTS) */
/* an answer: one line, or for `state` the line "ok state BYTES" and that many bytes after it */
#define HS_CTL_ANSWER_MAX (48 * 1024)
/* a `state` answer larger than HS_CTL_ANSWER_MAX (a bench of many robots: six bipeds take
 * 46 kB) goes into a buffer of its own size, up to this */
#define HS_CTL_STATE_MAX (16u << 20)
#define HS_CTL_STATE_TIMEOUT_MS 2000   /* a tick boundary to copy the plant at, at most this */
#define HS_CTL_SCENARIO_MAX (4u << 20) /* a scenario file passed by a client, bytes */
/* How long the stop waits for the worker (its last verdict written) before the process ends
 * without it: a verdict file on a slow or stuck file system cannot hold the bench's exit. */
#define HS_CTL_WORKER_STOP_MS 2000

struct hs_runner;
struct hs_scenario;

/* One command handed to the worker: the line, the descriptors that came with it (owned by the
 * job until the worker closes them), and the answer it writes back. */
struct ctl_job {
    char line[HS_CTL_LINE_MAX + 1];
    size_t len;
    int fds[HS_CTL_FDS_MAX];
    uint32_t nfds;
    char answer[HS_CTL_ANSWER_MAX];
    /* a `state` answer that did not fit answer (use_big): grown to its size by the worker, kept
     * for the slot's next one, freed with the server */
    char *big;
    size_t big_size;
    bool use_big;
};

struct ctl_server {
    struct hs_ctl_stage *stage; /* owned by the bench */
    struct hs_runner *runner;
    struct hs_bench *bench;
    const struct hs_bench_can *can; /* the bench's CAN module (owned by the bench), or NULL */
    struct hs_ctl_names names;
    char path[108];
    uint32_t sock_gid; /* the socket's group, read once it was bound */
    int fd, wake[2], done[2];
    pthread_t thread, worker;
    bool running, worker_running;
    bool worker_stuck; /* the stop did not wait for it: the server is left to it, not freed */
    const char *clock;
    /* worker queue: jobs by client index, in arrival order (guarded by lock) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;
    int queue[HS_CTL_CLIENTS_MAX];
    uint32_t qhead, qlen;
    bool finished[HS_CTL_CLIENTS_MAX]; /* the worker answered that client's job */
    struct ctl_job jobs[HS_CTL_CLIENTS_MAX];
    /* the scenario started here (worker only) */
    char scen_name[HS_NAME_MAX];
    char junit[HS_CTL_LINE_MAX], json[HS_CTL_LINE_MAX];
    int junit_fd, json_fd; /* the verdict files, open since the start */
    double scen_duration_s;
    uint32_t scen_count;
    char verdict[HS_CTL_ANSWER_MAX]; /* the last one's, "" before any ended */
    uint32_t rec_seq;                /* live-step/live-scenario files saved in the recording */
};

/* Worker thread body (ctl_worker.c): answers queued jobs, reaps ended steps and scenarios
 * every 100 ms, and returns once stopping is set. */
void *hs__ctl_worker(void *arg);
/* The worker's job for one line: its answer in job->answer; closes the job's descriptors. */
void hs__ctl_work(struct ctl_server *s, struct ctl_job *job);
/* Frees the ended steps and takes an ended scenario (its verdict written); no_tick: the loop
 * has stopped, so a running one ends here. Worker, or the last thread once both stopped. */
void hs__ctl_reap(struct ctl_server *s, bool no_tick);
/* The `status` answer, from atomics only (socket thread). */
void hs__ctl_status_line(struct ctl_server *s, char *out, size_t size);

#endif
