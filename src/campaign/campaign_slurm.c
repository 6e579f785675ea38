/* `hilsim campaign slurm`: the campaign as a Slurm array job. Each array task runs one shard
 * into the shared output folder (runs are resumable and each run's result is its own file, so
 * tasks do not collide, and a requeued task skips what it finished); a merge job that depends on
 * the whole array writes the aggregate. The lab's scheduler does the scheduling. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "campaign_internal.h"
#include "hilsim/campaign.h"

/* Single quotes for sh, so any path survives. */
static void shq(char *out, size_t outlen, const char *s)
{
    size_t n = 0;
    out[n++] = '\'';
    for (; *s && n + 6 < outlen; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = 0;
}

int hs_campaign_slurm(const struct hs_campaign *c, const char *hilsim, int shards,
                      const char *outdir, char *err, size_t errlen)
{
    char exe[PATH_MAX], file[PATH_MAX], out[PATH_MAX], absout[PATH_MAX];
    if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", outdir, strerror(errno));
        return -errno;
    }
    /* Array tasks start in the submitting folder, maybe on another node: absolute paths. */
    if (!realpath(hilsim, exe) || !realpath(c->file, file) || !realpath(outdir, absout)) {
        snprintf(err, errlen, "cannot resolve %s, %s or %s: %s", hilsim, c->file, outdir,
                 strerror(errno));
        return -errno;
    }
    char qexe[PATH_MAX * 2], qfile[PATH_MAX * 2], qout[PATH_MAX * 2];
    shq(qexe, sizeof qexe, exe);
    shq(qfile, sizeof qfile, file);
    shq(qout, sizeof qout, absout);
    char text[32768];
    int len = snprintf(text, sizeof text,
                       "#!/bin/sh\n"
                       "# hilsim campaign %s as a Slurm array: shard K of %d per task (written by\n"
                       "# `hilsim campaign slurm`; submit with submit.sh).\n"
                       "#SBATCH --job-name=hilsim-%s\n"
                       "#SBATCH --array=1-%d\n"
                       "#SBATCH --output=%s/slurm-%%A_%%a.out\n"
                       "#SBATCH --time=%d\n"
                       "exec %s campaign run %s --shard \"$SLURM_ARRAY_TASK_ID/%d\" --out %s \\\n"
                       "  -j \"${SLURM_CPUS_PER_TASK:-1}\" --no-report\n",
                       c->name, shards, c->name, shards, absout,
                       (int)((c->time_limit_s * c->runs / shards + 59) / 60) + 5, qexe, qfile,
                       shards, qout);
    snprintf(out, sizeof out, "%s/campaign.sbatch", outdir);
    int r = len < 0 || len >= (int)sizeof text ? -ENAMETOOLONG : hs__camp_write_atomic(out, text);
    if (r == 0) {
        len = snprintf(
            text, sizeof text,
            "#!/bin/sh\n"
            "# The aggregate of every shard (runs after the whole array, whatever its tasks'\n"
            "# exit statuses: a failed run is a result, not a job failure).\n"
            "#SBATCH --job-name=hilsim-%s-merge\n"
            "#SBATCH --output=%s/slurm-merge-%%j.out\n"
            "exec %s campaign report %s\n",
            c->name, absout, qexe, qout);
        snprintf(out, sizeof out, "%s/merge.sbatch", outdir);
        r = len < 0 || len >= (int)sizeof text ? -ENAMETOOLONG : hs__camp_write_atomic(out, text);
    }
    if (r == 0) {
        len = snprintf(
            text, sizeof text,
            "#!/bin/sh\n"
            "# Submits the array and its merge job; prints both job ids.\n"
            "set -e\n"
            "array=$(sbatch --parsable %s/campaign.sbatch)\n"
            "merge=$(sbatch --parsable --dependency=afterany:\"${array%%%%;*}\" %s/merge.sbatch)\n"
            "echo \"$array $merge\"\n",
            qout, qout);
        snprintf(out, sizeof out, "%s/submit.sh", outdir);
        r = len < 0 || len >= (int)sizeof text ? -ENAMETOOLONG : hs__camp_write_atomic(out, text);
        if (r == 0 && chmod(out, 0755) < 0)
            r = -errno;
    }
    if (r < 0)
        snprintf(err, errlen, "%s: %s", out, strerror(-r));
    return r;
}
