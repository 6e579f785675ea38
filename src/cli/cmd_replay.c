/* hilsim replay: a recording (hilsim run --record) replayed offline and compared, or a candump
 * log from elsewhere driving a bench open loop (--import). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands.h"

#include "hilsim/log.h"
#include "hilsim/record.h"

#define MAX_SIGNALS 64

struct replay_opts {
    const char *dir, *config, *out, *plot, *import, *scenario;
    bool no_scenario, no_live;
    double until_s, tolerance, extra_s;
    const char *signals[MAX_SIGNALS];
    uint32_t nsignals;
    const char *sets[MAX_SIGNALS];
    uint32_t nsets;
    bool events;
};

static void usage(FILE *f)
{
    fprintf(
        f, "usage: hilsim replay DIR [options]\n"
           "       hilsim replay --import LOG --config CONFIG [options]\n\n"
           "Rebuilds the bench from the recording DIR (hilsim run --record DIR), feeds it the\n"
           "recorded inputs at their ticks (CAN frames hilsim received, shm commands, the\n"
           "warm-up and safe hold as they happened) offline, as fast as the machine can, and\n"
           "compares the replayed plant state with the recorded one: it reports the first tick\n"
           "and signal where they differ by more than the tolerance (bit-exact by default).\n"
           "With --config or --set a changed config replays the same inputs: the \"what if\".\n"
           "The run's scenario (scenario.yaml) is played again and its step events checked.\n"
           "A recording whose first segments record.keep_segments deleted replays from its\n"
           "first kept state (a checkpoint: it matches within a tolerance, not bit for bit).\n"
           "--import drives CONFIG's bench open loop from a candump log recorded elsewhere\n"
           "(every frame offered to the bus whose interface the line names; with one bus, all).\n\n"
           "options:\n"
           "  --until S          replay the first S seconds only\n"
           "  --tolerance X      allowed |recorded - replayed| per signal (default 0: bit-exact)\n"
           "  --config FILE      rebuild from FILE instead of the recording's copy\n"
           "  --set KEY=VALUE    override one config key for a \"what if\", checked as in the\n"
           "                     file (physics.friction=0.3, controller.defaults.kp=50,\n"
           "                     physics.gravity=[0,0,-3.7]); repeatable\n"
           "  --scenario FILE    play FILE instead of the recording's scenario copy\n"
           "  --no-scenario      play no scenario (the recording's is played by default)\n"
           "  --no-live          inject none of the run's live control (hilsim ctl inject,\n"
           "                     scenario start/stop), which is injected again by default\n"
           "  --out FILE.csv     time, then each signal recorded and replayed (PlotJuggler)\n"
           "  --plot FILE.svg|FILE.png  chosen signals over time, recorded beside replayed\n"
           "                     (FILE.png: a PNG image, otherwise SVG)\n"
           "  --signal NAME      a signal for --out/--plot (e.g. joint1.q, base.z); repeatable;\n"
           "                     default: every signal (CSV), every joint's q (plot)\n"
           "  --events           list the recording's events\n"
           "  --import LOG       a candump log to drive CONFIG's bench with (no comparison)\n"
           "  --extra S          --import: seconds to run past the log's last frame (default 1)\n"
           "  -h, --help         this text\n\n"
           "exit codes: 0 replayed within the tolerance (or imported); 1 runtime failure;\n"
           "2 bad usage, or a truncated or corrupted recording (the message names the file\n"
           "and byte offset); 4 the replay diverged from the recording\n");
}

static int parse(int argc, char **argv, struct replay_opts *o)
{
    static const struct option longopts[] = {{"until", required_argument, 0, 'u'},
                                             {"tolerance", required_argument, 0, 't'},
                                             {"config", required_argument, 0, 'c'},
                                             {"out", required_argument, 0, 'o'},
                                             {"plot", required_argument, 0, 'p'},
                                             {"signal", required_argument, 0, 's'},
                                             {"events", no_argument, 0, 'e'},
                                             {"import", required_argument, 0, 'i'},
                                             {"extra", required_argument, 0, 'x'},
                                             {"set", required_argument, 0, 'S'},
                                             {"scenario", required_argument, 0, 'P'},
                                             {"no-scenario", no_argument, 0, 'N'},
                                             {"no-live", no_argument, 0, 'L'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    *o = (struct replay_opts){.extra_s = 1};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'u':
        case 't':
        case 'x': {
            double v = strtod(optarg, &end);
            if (*end || !(v >= 0) || v > 1e9) {
                fprintf(stderr, "hilsim replay: '%s' is not a number >= 0\n", optarg);
                return HS_EXIT_USAGE;
            }
            *(c == 'u' ? &o->until_s : c == 't' ? &o->tolerance : &o->extra_s) = v;
            break;
        }
        case 'c':
            o->config = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'p':
            o->plot = optarg;
            break;
        case 's':
            if (o->nsignals == MAX_SIGNALS) {
                fprintf(stderr, "hilsim replay: at most %d --signal\n", MAX_SIGNALS);
                return HS_EXIT_USAGE;
            }
            o->signals[o->nsignals++] = optarg;
            break;
        case 'S':
            if (o->nsets == MAX_SIGNALS || !strchr(optarg, '=')) {
                fprintf(stderr, "hilsim replay: --set KEY=VALUE (at most %d), not '%s'\n",
                        MAX_SIGNALS, optarg);
                return HS_EXIT_USAGE;
            }
            o->sets[o->nsets++] = optarg;
            break;
        case 'P':
            o->scenario = optarg;
            break;
        case 'N':
            o->no_scenario = true;
            break;
        case 'L':
            o->no_live = true;
            break;
        case 'e':
            o->events = true;
            break;
        case 'i':
            o->import = optarg;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return HS_EXIT_USAGE;
        }
    }
    if (o->import ? (optind != argc || !o->config) : optind != argc - 1) {
        fprintf(stderr, o->import ? "hilsim replay: --import needs --config and no DIR\n"
                                  : "hilsim replay: expected one recording folder\n");
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    if (!o->import)
        o->dir = argv[optind];
    return 0;
}

static int resolve_signals(const struct hs_recording *rec, const struct replay_opts *o, int *cols)
{
    for (uint32_t i = 0; i < o->nsignals; i++) {
        int k = hs_recording_find_signal(rec, o->signals[i]);
        if (k < 0) {
            hs_log(HS_LOG_ERR,
                   "--signal %s: no such signal (names: <joint>.q|dq|tau|current|"
                   "current_A|encoder_position|encoder_velocity|encoder_count,\n"
                   "                   <sensor>.x|y|z|tx|ty|tz, "
                   "<robot>.x|y|z|qw|qx|qy|qz)",
                   o->signals[i]);
            return HS_EXIT_USAGE;
        }
        cols[i] = k;
    }
    return 0;
}

static int write_outputs(const struct replay_opts *o, const struct hs_recording *rec,
                         const double *replayed, uint32_t nreplayed, const int *cols, int64_t mark)
{
    const char *paths[2] = {o->out, o->plot};
    for (int w = 0; w < 2; w++) {
        if (!paths[w])
            continue;
        FILE *f = !strcmp(paths[w], "-") ? stdout : fopen(paths[w], "w");
        if (!f) {
            hs_log(HS_LOG_ERR, "%s: %s", paths[w], strerror(errno));
            return HS_EXIT_FAILURE;
        }
        size_t len = strlen(paths[w]);
        bool png = len > 4 && !strcasecmp(paths[w] + len - 4, ".png");
        int r = w == 0 ? hs_replay_write_csv(f, rec, replayed, nreplayed, cols, o->nsignals)
                : png  ? hs_replay_write_png(f, rec, replayed, nreplayed, cols, o->nsignals, mark)
                       : hs_replay_write_svg(f, rec, replayed, nreplayed, cols, o->nsignals, mark);
        if ((f != stdout && fclose(f) != 0) || r < 0) {
            hs_log(HS_LOG_ERR, "%s: write failed", paths[w]);
            return HS_EXIT_FAILURE;
        }
    }
    return 0;
}

static void print_events(const struct hs_recording *rec)
{
    static const char *const kinds[HS_REC_EV_MAX] = {
        [HS_REC_EV_OVERRUN] = "overrun",
        [HS_REC_EV_SKIP] = "skip",
        [HS_REC_EV_SAFE_HOLD] = "safe-hold",
        [HS_REC_EV_STOP] = "stop",
        [HS_REC_EV_STALL] = "stall",
        [HS_REC_EV_PLANT_FAULT] = "plant-fault",
        [HS_REC_EV_SHM_REFUSED] = "shm-refused",
        [HS_REC_EV_SCENARIO] = "scenario",
        [HS_REC_EV_LOCKSTEP] = "lockstep",
        [HS_REC_EV_NOTE] = "note",
        [HS_REC_EV_LIVE] = "live",
    };
    for (uint32_t i = 0; i < rec->nevents; i++) {
        const struct hs_rec_event *e = &rec->events[i];
        const char *k = e->kind < HS_REC_EV_MAX && kinds[e->kind] ? kinds[e->kind] : "?";
        printf("event %s: tick %llu, a %lld, b %lld%s%s\n", k, (unsigned long long)e->tick,
               (long long)e->a, (long long)e->b, e->text[0] ? ": " : "", e->text);
    }
}

static int do_import(const struct replay_opts *o, int *cols)
{
    struct hs_diag d = {0};
    struct hs_recording *rec = NULL;
    int rc = hs_replay_import(o->config, o->import, o->extra_s, &rec, &d);
    if (rc < 0) {
        hs_log_diag(&d);
        return rc == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    printf("imported %s: %u ticks driven open loop\n", o->import, rec->nstates);
    rc = resolve_signals(rec, o, cols);
    if (rc == 0)
        rc = write_outputs(o, rec, NULL, 0, cols, -1);
    hs_recording_free(rec);
    return rc;
}

int hs_cmd_replay(int argc, char **argv)
{
    struct replay_opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? HS_EXIT_OK : rc;
    int cols[MAX_SIGNALS];
    if (o.import)
        return do_import(&o, cols);
    struct hs_diag d = {0};
    struct hs_recording *rec;
    rc = hs_recording_open(o.dir, &rec, &d);
    if (rc < 0) {
        hs_log_diag(&d);
        return rc == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    if ((rc = resolve_signals(rec, &o, cols)) != 0)
        goto out;
    printf("recording %s: %u ticks, %u shm commands, %u events%s", o.dir, rec->nstates, rec->nshm,
           rec->nevents, rec->complete ? "" : " (INCOMPLETE: the run did not finish it)");
    for (uint32_t b = 0; b < rec->nbuses; b++)
        printf(", bus %s %u frames", rec->bus_names[b], rec->nframes[b]);
    printf("\n");
    if (rec->damaged)
        fprintf(stderr,
                "WARNING: recording %s is damaged (the run crashed?): %u whole ticks "
                "recovered (up to tick %llu); the damage starts at %s\n",
                o.dir, rec->nstates,
                rec->nstates ? (unsigned long long)rec->ticks[rec->nstates - 1] : 0ull,
                rec->damage);
    if (rec->unlisted[0])
        fprintf(stderr, "WARNING: recording %s: %s\n", o.dir, rec->unlisted);
    if (rec->damaged && !rec->nstates) {
        fprintf(stderr, "hilsim replay: nothing to replay\n");
        rc = HS_EXIT_USAGE;
        goto out;
    }
    if (rec->dropped_states || rec->dropped_items)
        printf("WARNING: the recording dropped %llu states and %llu items (ring full): the "
               "replay cannot be exact\n",
               (unsigned long long)rec->dropped_states, (unsigned long long)rec->dropped_items);
    if (o.events)
        print_events(rec);
    struct hs_replay_opts ro = {.config_path = o.config,
                                .sets = o.sets,
                                .nsets = o.nsets,
                                .scenario_path = o.scenario,
                                .no_scenario = o.no_scenario,
                                .no_live = o.no_live,
                                .until_s = o.until_s,
                                .tolerance = o.tolerance};
    struct hs_replay_result res;
    rc = hs_replay_run(rec, &ro, &res, &d);
    if (rc < 0) {
        hs_log_diag(&d);
        rc = rc == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
        goto out;
    }
    printf("replayed %u ticks (%llu frames, %llu shm commands fed); max |q error| %.3g\n",
           res.ticks, (unsigned long long)res.frames_fed, (unsigned long long)res.commands_fed,
           res.max_abs_q_err);
    if (res.from_checkpoint)
        printf("the recording's first %u segment(s) were deleted (keep_segments): the replay "
               "started from the first kept state, tick %llu (joint q and dq, free roots' "
               "poses; actuator and filter history afresh): expect a small error\n",
               rec->first_segment, (unsigned long long)rec->ticks[0]);
    if (res.from_checkpoint && rec->scenario_text && !o.no_scenario)
        printf("the run's scenario is not played: its state at the checkpoint is not in the "
               "recording\n");
    if (res.scenario) {
        printf("scenario played again: %u of %u expectations passed; %u scenario events "
               "recorded, %u replayed",
               res.scenario_expects - res.scenario_failed, res.scenario_expects,
               res.scenario_events_recorded, res.scenario_events_replayed);
        if (res.scenario_mismatch_ord >= 0)
            printf(": THEY DIFFER from tick %llu, t = %.6f s, on\n",
                   (unsigned long long)rec->ticks[res.scenario_mismatch_ord],
                   (double)(rec->now_ns[res.scenario_mismatch_ord] - rec->now_ns[0]) / 1e9);
        else
            printf(", identical\n");
    }
    if (res.live_recorded)
        printf("live control: %u command(s) recorded, %u injected again at their ticks%s\n",
               res.live_recorded, res.live_fed,
               res.live_fed < res.live_recorded ? " (--no-live, or the replay stopped early)" : "");
    if (res.fault_rc)
        printf("the replayed bench hit a plant fault (%s)\n", strerror(-res.fault_rc));
    if (res.diverged) {
        char name[256];
        hs_recording_signal_name(rec, (uint32_t)res.first_signal, name, sizeof name);
        /* one counter, the run's tick (the log's, the scenario's), and the time the CSV
         * (--out's time_s) and the plot show it at: seconds since the first recorded tick */
        printf("DIVERGED at tick %llu, t = %.6f s: %s recorded %.17g, replayed %.17g "
               "(tolerance %g)\n",
               (unsigned long long)res.first_tick,
               (double)(rec->now_ns[res.first_ord] - rec->now_ns[0]) / 1e9, name, res.recorded,
               res.replayed, o.tolerance);
    } else {
        printf("%s: every signal of every tick replayed %s\n",
               o.tolerance > 0 ? "MATCH" : "BIT-EXACT",
               o.tolerance > 0 ? "within the tolerance" : "identically");
    }
    rc = write_outputs(&o, rec, res.values, res.ticks, cols,
                       res.diverged ? (int64_t)res.first_ord : -1);
    if (rc == 0 && (res.diverged || res.scenario_mismatch_ord >= 0))
        rc = HS_EXIT_DIVERGED;
    free(res.values);
out:
    hs_recording_free(rec);
    return rc;
}
