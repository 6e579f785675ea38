/* hilsim view: the bench, or a recording, in a browser (src/view/README.md). A process of its
 * own beside the bench; it only reads the bench's shm segment and asks its control socket. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "hilsim/config.h"
#include "hilsim/diag.h"
#include "hilsim/view.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim view BENCH|CONFIG.yaml [options]\n"
            "       hilsim view --record DIR [options]\n\n"
            "Serves a page that draws the bench's robot and plots its signals live (or plays a\n"
            "recording of hilsim run --record on a timeline). Read-only: it attaches to the\n"
            "bench's shared memory as a client that cannot write.\n\n"
            "  BENCH                 the bench's name; the robot is drawn with --config\n"
            "  CONFIG.yaml           the bench's config: its name and models (as --config)\n"
            "  --config FILE         the config the robot is drawn from\n"
            "  --record DIR          a recording instead of a live bench\n"
            "  --what-if CONFIG      with --record: replay it under CONFIG and show both, the\n"
            "                        difference plotted and the first divergence marked\n"
            "  --what-if-set K=V     the same under the recording's config with K=V changed\n"
            "                        (repeatable; with --what-if: that config changed)\n"
            "  --listen ADDR         listen address (default 127.0.0.1); another than loopback\n"
            "                        needs --token\n"
            "  --port N              TCP port (default 8765; 0: any free one, printed)\n"
            "  --token T             browsers must open the page with ?token=T\n"
            "  --rate HZ             frames per second to each browser (1..%d, default %d)\n"
            "  --allow-control       browsers may push, fault, clear and start/stop scenarios\n"
            "                        (through the control socket, with this user's rights)\n"
            "  --web DIR             the page's directory (default: the installed one)\n"
            "  --duration S          stop after S seconds (default: until SIGINT/SIGTERM)\n\n"
            "exit codes: 0 ok, 1 no bench / cannot listen, 2 bad usage\n",
            HS_VIEW_RATE_MAX, HS_VIEW_RATE_DEFAULT);
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static int number(const char *opt, const char *val, double lo, double hi, double *ret)
{
    char *end;
    errno = 0;
    double d = strtod(val, &end);
    if (errno || end == val || *end || !(d >= lo && d <= hi)) {
        fprintf(stderr, "hilsim view: %s '%s': expected a number in [%g, %g]\n", opt, val, lo, hi);
        return -1;
    }
    *ret = d;
    return 0;
}

int hs_cmd_view(int argc, char **argv)
{
    struct hs_view_opts o = {.listen = "127.0.0.1", .port = 8765, .rate_hz = HS_VIEW_RATE_DEFAULT};
    const char *target = NULL;
    const char *sets[HS_VIEW_WHATIF_SETS_MAX];
    o.whatif_sets = sets;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return HS_EXIT_OK;
        } else if (!strcmp(a, "--allow-control")) {
            o.allow_control = true;
            continue;
        } else if (a[0] == '-' && a[1] == '-' && !val) {
            fprintf(stderr, "hilsim view: %s needs a value\n", a);
            return HS_EXIT_USAGE;
        } else if (!strcmp(a, "--config")) {
            o.config = val;
        } else if (!strcmp(a, "--record")) {
            o.record_dir = val;
        } else if (!strcmp(a, "--what-if")) {
            o.whatif = true;
            o.whatif_config = val;
        } else if (!strcmp(a, "--what-if-set")) {
            if (o.whatif_nsets == HS_VIEW_WHATIF_SETS_MAX) {
                fprintf(stderr, "hilsim view: at most %d --what-if-set\n", HS_VIEW_WHATIF_SETS_MAX);
                return HS_EXIT_USAGE;
            }
            o.whatif = true;
            sets[o.whatif_nsets++] = val;
        } else if (!strcmp(a, "--listen")) {
            o.listen = val;
        } else if (!strcmp(a, "--token")) {
            o.token = val;
        } else if (!strcmp(a, "--web")) {
            o.web_dir = val;
        } else if (!strcmp(a, "--port")) {
            if (number(a, val, 0, 65535, &d) < 0)
                return HS_EXIT_USAGE;
            o.port = (int)d;
        } else if (!strcmp(a, "--rate")) {
            if (number(a, val, 1, HS_VIEW_RATE_MAX, &d) < 0)
                return HS_EXIT_USAGE;
            o.rate_hz = (unsigned)d;
        } else if (!strcmp(a, "--duration")) {
            if (number(a, val, 0, 1e9, &d) < 0)
                return HS_EXIT_USAGE;
            o.duration_s = d;
        } else if (a[0] == '-') {
            fprintf(stderr, "hilsim view: unknown option '%s'\n", a);
            usage(stderr);
            return HS_EXIT_USAGE;
        } else if (!target) {
            target = a;
            continue;
        } else {
            fprintf(stderr, "hilsim view: one BENCH or CONFIG only ('%s' too)\n", a);
            return HS_EXIT_USAGE;
        }
        i++;
    }
    if (!target == !o.record_dir) {
        fprintf(stderr, "hilsim view: give a BENCH (or its CONFIG.yaml) or --record DIR\n");
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    if (o.whatif && !o.record_dir) {
        fprintf(stderr, "hilsim view: --what-if and --what-if-set need --record DIR\n");
        return HS_EXIT_USAGE;
    }
    if (!hs_view_addr_loopback(o.listen) && (!o.token || strlen(o.token) < 16)) {
        fprintf(stderr,
                "hilsim view: listening on %s (not loopback) needs --token T, at least 16 "
                "characters: anyone who reaches the port would see the bench%s\n",
                o.listen, o.allow_control ? " and control it" : "");
        return HS_EXIT_USAGE;
    }
    if (o.token && (strlen(o.token) > HS_VIEW_TOKEN_MAX || strpbrk(o.token, "&;= \t\r\n"))) {
        fprintf(stderr, "hilsim view: --token: at most %d characters, none of & ; = or blanks\n",
                HS_VIEW_TOKEN_MAX);
        return HS_EXIT_USAGE;
    }
    char bench[HS_NAME_MAX];
    if (target && (has_suffix(target, ".yaml") || has_suffix(target, ".yml"))) {
        const struct hs_config *cfg = NULL;
        struct hs_diag d = {0};
        if (hs_config_load(target, &cfg, &d) < 0) {
            char msg[512];
            hs_diag_format(&d, msg, sizeof msg);
            fprintf(stderr, "hilsim view: %s\n", msg);
            return HS_EXIT_USAGE;
        }
        snprintf(bench, sizeof bench, "%s", cfg->bench.name);
        hs_config_free(cfg);
        if (!o.config)
            o.config = target;
        target = bench;
    }
    o.bench = target;
    int r = hs_view_run(&o);
    return r == 0 ? HS_EXIT_OK : r == -EINVAL ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
}
