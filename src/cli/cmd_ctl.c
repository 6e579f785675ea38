/* hilsim ctl BENCH COMMAND...: one command to a running bench over its control socket
 * (scenarios/README.md, "Live control"), the answer printed. The service checks the command;
 * this side only joins the words into one line. */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "hilsim/ctl.h"

#define ANSWER_TIMEOUT_MS 10000

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim ctl BENCH COMMAND...\n\n"
            "  status                               tick, clock and counters\n"
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
            "exit codes: 0 ok, 1 no bench or no answer, 2 bad usage or a command the bench\n"
            "refused\n");
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

static int read_answer(int fd, char *buf, size_t size)
{
    size_t have = 0;
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
        if (memchr(buf, '\n', have))
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
    char path[108];
    int r = hs_ctl_socket_path(argv[1], true, path, sizeof path);
    if (r < 0) {
        fprintf(stderr, "hilsim ctl: bench '%s': %s\n", argv[1], strerror(-r));
        return HS_EXIT_USAGE;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        fprintf(stderr, "hilsim ctl: %s: %s (is bench '%s' running?)\n", path, strerror(errno),
                argv[1]);
        if (fd >= 0)
            close(fd);
        return HS_EXIT_FAILURE;
    }
    char answer[4096];
    if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len ||
        (r = read_answer(fd, answer, sizeof answer)) < 0) {
        fprintf(stderr, "hilsim ctl: %s: no answer: %s\n", path, strerror(r < 0 ? -r : errno));
        close(fd);
        return HS_EXIT_FAILURE;
    }
    close(fd);
    bool ok = !strncmp(answer, "ok", 2);
    fputs(answer, ok ? stdout : stderr);
    return ok ? HS_EXIT_OK : HS_EXIT_USAGE;
}
