/* hilsim ctl BENCH COMMAND...: one command to a running bench over its control socket
 * (scenarios/README.md, "Live control"), the answer printed. The service checks the command;
 * this side joins the words into one line and opens the files the command names (a scenario
 * file and the path CSVs it names, the verdict files, an injected path step's CSV) with the
 * caller's own rights, passing the descriptors with the line (SCM_RIGHTS): the bench opens no
 * path a client names. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "hilsim/ctl.h"
#include "hilsim/scenario.h"
#include "hilsim/scenario_live.h"

#define MAX_FDS 8 /* the server's HS_CTL_FDS_MAX */

#define ANSWER_TIMEOUT_MS 10000

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim ctl BENCH COMMAND...\n\n"
            "  status                               tick, clock and counters\n"
            "  state [--json]                       the plant at the next tick boundary: links'\n"
            "                                       poses (position, quaternion, roll pitch\n"
            "                                       yaw), joints (true q, dq; motor torque;\n"
            "                                       encoder as reported), sensor readings\n"
            "  inject '{STEP}'                      any scenario step, as one YAML flow mapping\n"
            "                                       (scenarios/README.md), e.g.\n"
            "      '{sensor_fault: {kind: noise, joint: ELBOW, value: 0.01}, duration_s: 1}'\n"
            "      '{friction: {material1: default, material2: default, mu: 0.2}}'\n"
            "                                       it starts at the next tick (or after_s later)\n"
            "  scenario start FILE [--junit F] [--result-json F]\n"
            "                                       play a scenario file from the next tick;\n"
            "                                       verdict files default next to the socket\n"
            "  scenario stop                        end it now (its verdict is written)\n"
            "  scenario status                      running, or the last verdict and its files\n"
            "  short for common steps:\n"
            "  push LINK FX FY FZ DURATION_S        external force (N, world frame) on a link's\n"
            "                                       centre of mass; LINK or MODEL/LINK\n"
            "  fault sensor JOINT stuck             the joint's reading repeats exactly\n"
            "  fault sensor JOINT offset VALUE      the position reads VALUE (rad or m) more\n"
            "  fault actuator JOINT derate SHARE    the drive delivers SHARE (0..1) of its output\n"
            "  fault actuator JOINT no-response     the drive keeps its last command\n"
            "  clear                                end every live step (injected or short)\n"
            "  stop                                 stop the run (as SIGTERM: safe stop)\n\n"
            "The socket is hilsim-BENCH.ctl in $HILSIM_CTL_DIR, /run/hilsim, $XDG_RUNTIME_DIR\n"
            "or /tmp; only root, the bench's user and members of the socket's group may use it.\n"
            "Files are opened here, with your rights, and passed to the bench, which opens\n"
            "none by name. exit codes: 0 ok, 1 no bench or no answer, 2 bad usage, a file\n"
            "that cannot be opened, no permission, or a command the bench refused\n");
}

/* scenario start's paths, made absolute here: the bench runs in its own directory. */
static const char *absolute(const char *path, char *buf, size_t size)
{
    if (path[0] == '/')
        return path;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return path; /* the bench refuses the relative path with its reason */
    int n = snprintf(buf, size, "%s/%s", cwd, path);
    return n < 0 || (size_t)n >= size ? path : buf;
}

/* A file the command names, opened here: regular files only, never waiting on a FIFO.
 * write: created if missing, not emptied (the bench empties it when it writes the verdict). */
static int open_file(const char *path, bool write)
{
    int fd = open(path, (write ? O_WRONLY | O_CREAT : O_RDONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
                  0644);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fprintf(stderr, "hilsim ctl: %s: not a regular file\n", path);
        return -1;
    }
    if (fd < 0)
        fprintf(stderr, "hilsim ctl: %s: cannot open%s: %s\n", path, write ? " for writing" : "",
                strerror(errno));
    return fd;
}

/* The descriptors for the line, in the server's order: scenario start's file, --junit,
 * --result-json, then the path CSVs the scenario names; inject's path CSV. 0, or -1 said. */
static int open_files(int argc, char **argv, bool start, int *fds, int *ret_n)
{
    char abs[HS_CTL_LINE_MAX];
    int n = 0;
    if (start) {
        const char *file = absolute(argv[4], abs, sizeof abs);
        if ((fds[n++] = open_file(file, false)) < 0)
            return -1;
        for (const char *opt = "--junit"; opt; opt = opt[2] == 'j' ? "--result-json" : NULL)
            for (int i = 5; i + 1 < argc; i++)
                if (!strcmp(argv[i], opt)) {
                    if ((fds[n++] = open_file(argv[i + 1], true)) < 0)
                        return -1;
                    break;
                }
        /* the CSVs it names, read as the bench will: a file that does not parse passes none
         * and the bench says why */
        struct hs_scenario_spec *spec = NULL;
        struct hs_diag d = {0};
        if (hs_scenario_parse_file(file, &spec, &d) == 0) {
            uint32_t m = hs_scenario_spec_file_count(spec);
            if (m > (uint32_t)(MAX_FDS - n)) {
                hs_scenario_spec_free(spec);
                fprintf(stderr, "hilsim ctl: %s: names more path files than can be passed (%d)\n",
                        file, MAX_FDS - n);
                *ret_n = n;
                return -1;
            }
            for (uint32_t k = 0; k < m; k++)
                if ((fds[n++] = open_file(hs_scenario_spec_file(spec, k), false)) < 0) {
                    hs_scenario_spec_free(spec);
                    *ret_n = n;
                    return -1;
                }
        }
        hs_scenario_spec_free(spec);
    } else if (argc > 3 && !strcmp(argv[2], "inject")) {
        char text[HS_CTL_LINE_MAX + 2], csv[4096], cwd[4096];
        size_t len = 0;
        for (int i = 3; i < argc && len < sizeof text; i++)
            len +=
                (size_t)snprintf(text + len, sizeof text - len, "%s%s", i > 3 ? " " : "", argv[i]);
        if (len < sizeof text && getcwd(cwd, sizeof cwd) &&
            hs_scenario_live_step_file(text, len, cwd, csv, sizeof csv) == 1 &&
            (fds[n++] = open_file(csv, false)) < 0)
            return -1;
    }
    *ret_n = n;
    return 0;
}

/* connect(2) bounded by the answer's deadline: a bench whose listen backlog is full (a client
 * flooding it, or a stalled bench) would hold a blocking connect for as long as it stays full.
 * A non-blocking AF_UNIX connect says EAGAIN then; retried every 10 ms. */
static int connect_bounded(int fd, const struct sockaddr_un *a)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    const struct timespec nap = {0, 10000000};
    for (int waited_ms = 0;; waited_ms += 10) {
        if (connect(fd, (const struct sockaddr *)a, sizeof *a) == 0)
            break;
        if (errno != EAGAIN && errno != EINTR)
            return -errno;
        if (waited_ms >= ANSWER_TIMEOUT_MS)
            return -ETIMEDOUT;
        nanosleep(&nap, NULL);
    }
    return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

/* One answer line; for `state` ("ok state BYTES") the line and the BYTES after it. */
static int read_answer(int fd, char *buf, size_t size)
{
    size_t have = 0, want = 0; /* want: the whole answer's length, once the header is in */
    while (have + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ANSWER_TIMEOUT_MS);
        if (r == 0)
            return -ETIMEDOUT;
        if (r < 0 && errno != EINTR)
            return -errno;
        if (r < 0)
            continue;
        ssize_t n = recv(fd, buf + have, size - 1 - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        have += (size_t)n;
        const char *nl = memchr(buf, '\n', have);
        if (nl && !want) {
            unsigned long body = 0;
            size_t hl = (size_t)(nl - buf) + 1;
            if (!strncmp(buf, "ok state ", 9) && sscanf(buf + 9, "%lu", &body) == 1 &&
                body < size - hl)
                want = hl + body;
            else
                want = hl;
        }
        if (want && have >= want)
            break;
    }
    buf[have] = 0;
    return have ? 0 : -ECONNRESET;
}

int hs_cmd_ctl(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return HS_EXIT_OK;
    }
    if (argc < 3) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    char line[HS_CTL_LINE_MAX + 2];
    size_t len = 0;
    bool start = argc > 4 && !strcmp(argv[2], "scenario") && !strcmp(argv[3], "start");
    for (int i = 2; i < argc; i++) {
        char abs[HS_CTL_LINE_MAX];
        const char *w = argv[i];
        if (start &&
            (i == 4 || !strcmp(argv[i - 1], "--junit") || !strcmp(argv[i - 1], "--result-json")))
            w = absolute(w, abs, sizeof abs);
        int n = snprintf(line + len, sizeof line - len, "%s%s", i > 2 ? " " : "", w);
        if (n < 0 || (size_t)n >= sizeof line - len - 1) {
            fprintf(stderr, "hilsim ctl: command longer than %d bytes\n", HS_CTL_LINE_MAX);
            return HS_EXIT_USAGE;
        }
        len += (size_t)n;
    }
    line[len++] = '\n';
    int fds[MAX_FDS], nfds = 0;
    for (int k = 0; k < MAX_FDS; k++)
        fds[k] = -1;
    if (open_files(argc, argv, start, fds, &nfds) < 0) {
        for (int k = 0; k < MAX_FDS; k++)
            if (fds[k] >= 0)
                close(fds[k]);
        return HS_EXIT_USAGE;
    }
    char path[108];
    int r = hs_ctl_socket_path(argv[1], true, path, sizeof path);
    if (r < 0) {
        fprintf(stderr, "hilsim ctl: bench '%s': %s\n", argv[1], strerror(-r));
        return HS_EXIT_USAGE;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int cr = fd < 0 ? -errno : connect_bounded(fd, &a);
    if (cr < 0) {
        int e = -cr;
        if (e == ETIMEDOUT)
            fprintf(stderr,
                    "hilsim ctl: %s: the bench accepted no connection within %d s (its backlog "
                    "is full)\n",
                    path, ANSWER_TIMEOUT_MS / 1000);
        else if (e == EACCES || e == EPERM)
            fprintf(stderr,
                    "hilsim ctl: %s: permission denied: only root, the bench's user and members "
                    "of the socket's group may use bench '%s'\n",
                    path, argv[1]);
        else
            fprintf(stderr, "hilsim ctl: %s: %s (is bench '%s' running?)\n", path, strerror(e),
                    argv[1]);
        if (fd >= 0)
            close(fd);
        return e == EACCES || e == EPERM ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
    }
    /* the line and its descriptors in one message; the answer is read even when the send
     * failed: a bench that refused the connection has said why before closing it */
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
    } ctrl;
    struct iovec iov = {.iov_base = line, .iov_len = len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        memset(&ctrl, 0, sizeof ctrl);
        m.msg_control = ctrl.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(h), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t sent = sendmsg(fd, &m, MSG_NOSIGNAL);
    int send_err = sent < 0 ? errno : 0;
    for (int k = 0; k < nfds; k++)
        close(fds[k]);
    static char answer[64 * 1024]; /* `state` of a large bench */
    r = read_answer(fd, answer, sizeof answer);
    close(fd);
    if (r < 0) {
        fprintf(stderr, "hilsim ctl: %s: no answer: %s\n", path,
                strerror(send_err               ? send_err
                         : sent != (ssize_t)len ? EIO
                                                : -r));
        return HS_EXIT_FAILURE;
    }
    bool ok = !strncmp(answer, "ok", 2);
    const char *shown = answer;
    if (!strncmp(answer, "ok state ", 9) && strchr(answer, '\n'))
        shown = strchr(answer, '\n') + 1; /* the body only: text or JSON to read or parse */
    fputs(shown, ok ? stdout : stderr);
    if (answer[0] && answer[strlen(answer) - 1] != '\n')
        fputc('\n', ok ? stdout : stderr);
    return ok ? HS_EXIT_OK : HS_EXIT_USAGE;
}
