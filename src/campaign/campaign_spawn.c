/* Child processes of a campaign: each in its own process group (so a run's hilsim and its
 * controller, and whatever they start, are ended together), stdin from /dev/null, output to
 * files in the run's folder. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "campaign_internal.h"

extern char **environ;

int hs__camp_spawn(char *const *argv, const char *out, const char *errpath, pid_t *ret_pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int r = posix_spawn_file_actions_init(&fa);
    if (r)
        return -r;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    r = posix_spawnp(ret_pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return -r;
}

int hs__camp_run_wait(char *const *argv, const char *out, const char *errpath)
{
    pid_t pid;
    int r = hs__camp_spawn(argv, out, errpath, &pid);
    if (r < 0)
        return r;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
