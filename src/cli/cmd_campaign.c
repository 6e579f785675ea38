/* hilsim campaign: many scenario runs from one declared matrix (src/campaign/README.md). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "hilsim/campaign.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim campaign run FILE --out DIR [-j|--jobs N] [--shard K/N] [--quiet]\n"
            "       hilsim campaign report DIR\n"
            "       hilsim campaign merge DIR... --out DIR\n"
            "       hilsim campaign slurm FILE --shards N --out DIR\n\n"
            "  run      every run of the campaign FILE (or of shard K of N) not finished in DIR,\n"
            "           N at a time (default: one per core), each in lockstep with the\n"
            "           controller FILE names; then the report. A rerun resumes.\n"
            "  --no-report  (run) leave the aggregate to a later `report` (Slurm shards)\n"
            "  report   the aggregate of DIR's runs: junit.xml, summary.json, summary.txt\n"
            "  merge    the aggregate of several DIRs (shards run apart) into --out\n"
            "  slurm    campaign.sbatch (an array job, a shard per task), merge.sbatch and\n"
            "           submit.sh in DIR; run DIR/submit.sh on the cluster's login node\n\n"
            "exit codes: 0 every run passed, 5 a run failed, 1 a run was an ERROR (time limit,\n"
            "controller crash, plant fault) or a runtime failure, 2 bad usage or bad input\n");
}

static int self(char *out)
{
    ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
    if (n <= 0)
        return -1;
    out[n] = 0;
    return 0;
}

static int load(const char *file, struct hs_campaign *c)
{
    char err[1024];
    if (hs_campaign_load(c, file, err, sizeof err) < 0) {
        fprintf(stderr, "hilsim campaign: %s\n", err);
        hs_campaign_free(c);
        return -1;
    }
    return 0;
}

int hs_cmd_campaign(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? HS_EXIT_USAGE : HS_EXIT_OK;
    }
    const char *sub = argv[1];
    static const struct option longopts[] = {
        {"out", required_argument, 0, 'o'},   {"jobs", required_argument, 0, 'j'},
        {"shard", required_argument, 0, 's'}, {"shards", required_argument, 0, 'S'},
        {"quiet", no_argument, 0, 'q'},       {"no-report", no_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    struct hs_camp_opts o = {
        .jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), .shard_k = 1, .shard_n = 1};
    int shards = 0, opt;
    char exe[PATH_MAX];
    optind = 1;
    while ((opt = getopt_long(argc - 1, argv + 1, "o:j:", longopts, NULL)) != -1) {
        char *end;
        switch (opt) {
        case 'o':
            o.out = optarg;
            break;
        case 'j':
            o.jobs = (int)strtol(optarg, &end, 10);
            if (*end || o.jobs < 1 || o.jobs > 64) {
                fprintf(stderr, "hilsim campaign: -j takes 1 to 64, not '%s'\n", optarg);
                return HS_EXIT_USAGE;
            }
            break;
        case 's':
            if (sscanf(optarg, "%d/%d", &o.shard_k, &o.shard_n) != 2 || o.shard_n < 1 ||
                o.shard_k < 1 || o.shard_k > o.shard_n) {
                fprintf(stderr, "hilsim campaign: --shard K/N with 1 <= K <= N, not '%s'\n",
                        optarg);
                return HS_EXIT_USAGE;
            }
            break;
        case 'S':
            shards = (int)strtol(optarg, &end, 10);
            if (*end || shards < 1 || shards > 100000) {
                fprintf(stderr, "hilsim campaign: --shards takes 1 to 100000, not '%s'\n", optarg);
                return HS_EXIT_USAGE;
            }
            break;
        case 'q':
            o.quiet = 1;
            break;
        case 'n':
            o.no_report = 1;
            break;
        case 'h':
            usage(stdout);
            return HS_EXIT_OK;
        default:
            usage(stderr);
            return HS_EXIT_USAGE;
        }
    }
    char **pos = argv + 1 + optind;
    int npos = argc - 1 - optind;
    if (self(exe) < 0) {
        fprintf(stderr, "hilsim campaign: cannot find this executable\n");
        return HS_EXIT_FAILURE;
    }
    o.hilsim = exe;
    if (!strcmp(sub, "run") || !strcmp(sub, "slurm")) {
        if (npos != 1 || !o.out || (!strcmp(sub, "slurm") && !shards)) {
            usage(stderr);
            return HS_EXIT_USAGE;
        }
        struct hs_campaign c;
        if (load(pos[0], &c) < 0)
            return HS_EXIT_USAGE;
        int r;
        if (!strcmp(sub, "run")) {
            r = hs_campaign_run(&c, &o);
        } else {
            char err[1024];
            r = hs_campaign_slurm(&c, exe, shards, o.out, err, sizeof err) < 0 ? HS_EXIT_FAILURE
                                                                               : HS_EXIT_OK;
            if (r)
                fprintf(stderr, "hilsim campaign slurm: %s\n", err);
            else
                printf("wrote %s/campaign.sbatch (%d array tasks), %s/merge.sbatch and "
                       "%s/submit.sh\n",
                       o.out, shards, o.out, o.out);
        }
        hs_campaign_free(&c);
        return r;
    }
    if (!strcmp(sub, "report")) {
        if (npos != 1 || o.out) {
            usage(stderr);
            return HS_EXIT_USAGE;
        }
        return hs_campaign_report((const char *const *)pos, 1, pos[0], stdout);
    }
    if (!strcmp(sub, "merge")) {
        if (npos < 1 || !o.out) {
            usage(stderr);
            return HS_EXIT_USAGE;
        }
        return hs_campaign_report((const char *const *)pos, npos, o.out, stdout);
    }
    fprintf(stderr, "hilsim campaign: unknown subcommand '%s'\n", sub);
    usage(stderr);
    return HS_EXIT_USAGE;
}
