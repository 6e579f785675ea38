/* Shared between the campaign's files; not an interface for other folders. */
#ifndef HS_CAMPAIGN_INTERNAL_H
#define HS_CAMPAIGN_INTERNAL_H

#include <sys/types.h>

/* posix_spawn in a new process group, stdin /dev/null, stdout/stderr to the files. */
int hs__camp_spawn(char *const *argv, const char *out, const char *err, pid_t *ret_pid);
/* The same, waited for: the exit status, 128 + signal, or a negative errno. */
int hs__camp_run_wait(char *const *argv, const char *out, const char *err);

/* Writes text to path through path.tmp and a rename, so a reader (or a resumed campaign)
 * sees the whole file or none. 0 or a negative errno. */
int hs__camp_write_atomic(const char *path, const char *text);

/* Removes a folder tree (a passed run's recording). */
int hs__camp_rmtree(const char *path);

#endif
