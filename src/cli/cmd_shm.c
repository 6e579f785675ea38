/* hilsim shm: list the benches' shared-memory segments and remove one by hand. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "hilsim/ctl.h"
#include "hilsim/shm_server.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim shm list\n"
            "       hilsim shm remove BENCH [--force]\n\n"
            "  list    every /dev/shm/hilsim-* segment: bench, owner pid, alive or dead, state,\n"
            "          last tick (low 32 bits) and size\n"
            "  remove  unlink a dead server's segment (a new 'hilsim run' takes one over by\n"
            "          itself); a live server's segment or a foreign file only with --force\n\n"
            "exit codes: 0 success, 1 runtime failure (or refused), 2 bad usage or bad input\n");
}

static const char *state_name(uint32_t s)
{
    return s == HS_SHM_SERVER_INIT      ? "init"
           : s == HS_SHM_SERVER_RUNNING ? "running"
           : s == HS_SHM_SERVER_STOPPED ? "stopped"
                                        : "?";
}

static int list(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d) {
        fprintf(stderr, "hilsim shm: /dev/shm: %s\n", strerror(errno));
        return HS_EXIT_FAILURE;
    }
    const char *prefix = &HS_SHM_PATH_PREFIX[1]; /* "hilsim-" */
    printf("%-32s %8s %-5s %-8s %10s %8s\n", "BENCH", "PID", "OWNER", "STATE", "TICK", "BYTES");
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        const char *bench = e->d_name + strlen(prefix);
        struct hs_shm_segment_info info;
        struct hs_diag diag;
        memset(&diag, 0, sizeof diag);
        if (hs_shm_server_inspect(bench, &info, &diag) < 0) {
            printf("%-32s %s\n", bench, diag.msg);
            continue;
        }
        if (!info.hilsim) {
            printf("%-32s %8s %-5s %-8s %10s %8llu\n", bench, "-", "-", "foreign", "-",
                   (unsigned long long)info.size);
            continue;
        }
        printf("%-32s %8d %-5s %-8s %10u %8llu\n", bench, (int)info.pid,
               info.alive ? "alive" : "dead", state_name(info.server_state), info.tick,
               (unsigned long long)info.size);
    }
    closedir(d);
    return HS_EXIT_OK;
}

/* The dead bench's control socket goes with its segment (a live one's stays). */
static void remove_socket(const char *bench)
{
    char path[108];
    if (hs_ctl_socket_path(bench, true, path, sizeof path) == 0 && hs_ctl_socket_take(path) == 1)
        printf("removed %s\n", path);
}

static int remove_one(const char *bench, int force)
{
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_shm_server_remove(bench, force, &d);
    remove_socket(bench);
    if (r < 0) {
        hs__cli_print_diag("shm", &d);
        if (r == -EBUSY)
            fprintf(stderr, "hilsim shm: stop that server, or use --force\n");
        return r == -EINVAL ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
    }
    printf("removed /dev/shm%s%s\n", HS_SHM_PATH_PREFIX, bench);
    return HS_EXIT_OK;
}

int hs_cmd_shm(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return HS_EXIT_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "list"))
        return list();
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "remove")) {
        int force = 0;
        const char *bench = NULL;
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--force"))
                force = 1;
            else if (!bench)
                bench = argv[i];
            else
                bench = NULL, i = argc;
        }
        if (bench && (argc == 3 || force))
            return remove_one(bench, force);
    }
    usage(stderr);
    return HS_EXIT_USAGE;
}
