/* hilsim run: the real-time loop until SIGINT/SIGTERM (or --duration), then a summary. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "summary_out.h"
#include "hilsim/service/runner.h"
#include "hilsim/service/scenario_attach.h"

#include "hilsim/log.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hilsim run CONFIG [options]\n\n"
            "Runs the bench's real-time loop: every period it reads commands (CAN, shared\n"
            "memory, or the demo controller), steps the physics and publishes the sensors.\n"
            "Stops at a tick boundary on SIGINT/SIGTERM (also during the warm-up), puts\n"
            "every actuator in its safe state and prints the self-audit and the per-phase\n"
            "timing table. A second SIGINT/SIGTERM gives a stuck tick 500 ms, then stops the\n"
            "I/O without it (stop frames) and prints what it can. SIGQUIT, SIGABRT, SIGALRM,\n"
            "SIGUSR2 and faults send the stop frames, then end the process with that signal.\n"
            "SIGPIPE is ignored. SIGHUP re-reads CONFIG (budgets apply live; the rest\n"
            "needs a restart and is refused with a logged reason).\n\n"
            "options:\n"
            "  --duration S      stop after S seconds of ticks (default: run until signalled);\n"
            "                    in lockstep, S seconds of simulated time\n"
            "  --clock MODE      wall (absolute deadlines), lockstep (the controller releases\n"
            "                    every tick, simulated time) or sync (deadlines locked to\n"
            "                    rt.clock.sync's event); overrides rt.clock.mode\n"
            "  --require-rt      refuse to run unless the kernel is PREEMPT_RT and SCHED_FIFO\n"
            "                    and mlockall are granted (also rt.require_rt in CONFIG)\n"
            "  --no-rt           ask for no real-time privileges (tests, laptops)\n"
            "  --record DIR      record the run into the new folder DIR: every CAN frame\n"
            "                    (candump logs), shm command, event and the plant's state per\n"
            "                    tick; `hilsim replay DIR` replays it (also record: in CONFIG)\n"
            "  --set KEY=VALUE   override one config key (physics.friction=0.3), checked as in\n"
            "                    the file; repeatable; a recording keeps the overrides\n"
            "  --systemd         syslog priority prefixes on log lines (default under journald)\n"
            "  --log-level L     error, warning, info (default) or debug\n"
            "  --scenario FILE   play a test scenario (scenarios/README.md); the run lasts\n"
            "                    its duration_s unless --duration is given\n"
            "  --junit FILE      with --scenario: the verdict as JUnit XML\n"
            "  --result-json F   with --scenario: the verdict as JSON\n"
            "  -h, --help        this text\n\n"
            "exit codes: 0 stopped on request or after --duration; 1 runtime failure (an\n"
            "overrun policy stopped the loop, a lockstep wait expired with on_timeout stop,\n"
            "real time refused under --require-rt, I/O failure, a stuck tick abandoned after\n"
            "a second signal); 2 bad usage or bad\n"
            "config (also a --duration shorter than half a tick); killed by the signal for\n"
            "SIGQUIT, SIGABRT, SIGALRM, SIGUSR2 and faults; 3 plant fault; 5 the scenario's\n"
            "verdict is FAIL; 1 also when it is ERROR (SAFE HOLD, stopped before its end)\n");
}

/* Shared by run and bench: parses the options both take. Returns 0, -1 for --help, or an exit
 * code. */
int hs__parse_run_opts(int argc, char **argv, struct hs_runner_opts *o, void (*help)(FILE *),
                       const char *extra_short, const struct option *extra, int (*on_extra)(int c));

int hs__parse_run_opts(int argc, char **argv, struct hs_runner_opts *o, void (*help)(FILE *),
                       const char *extra_short, const struct option *extra, int (*on_extra)(int c))
{
    struct option longopts[16] = {
        {"duration", required_argument, 0, 'd'},  {"require-rt", no_argument, 0, 'R'},
        {"no-rt", no_argument, 0, 'N'},           {"systemd", no_argument, 0, 'S'},
        {"log-level", required_argument, 0, 'L'}, {"help", no_argument, 0, 'h'},
        {"clock", required_argument, 0, 'C'},     {"scenario", required_argument, 0, 1001},
        {"junit", required_argument, 0, 1002},    {"result-json", required_argument, 0, 1003},
        {"set", required_argument, 0, 1004},
    };
    int n = 11;
    for (int i = 0; extra && extra[i].name && n < 15; i++)
        longopts[n++] = extra[i];
    memset(&longopts[n], 0, sizeof longopts[n]);
    char shorts[16];
    snprintf(shorts, sizeof shorts, "h%s", extra_short ? extra_short : "");
    memset(o, 0, sizeof *o);
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'd':
            o->duration_s = strtod(optarg, &end);
            if (*end || !(o->duration_s > 0) || o->duration_s > 1e7) {
                fprintf(stderr, "hilsim %s: --duration: '%s' is not in (0, 1e7] s\n", argv[0],
                        optarg);
                return HS_EXIT_USAGE;
            }
            break;
        case 'R':
            o->require_rt = true;
            break;
        case 1001:
            o->scenario = optarg;
            break;
        case 1002:
            o->junit = optarg;
            break;
        case 1003:
            o->result_json = optarg;
            break;
        case 1004:
            if (o->nsets == HS_RUNNER_MAX_SETS || !strchr(optarg, '=')) {
                fprintf(stderr, "hilsim %s: --set KEY=VALUE (at most %d), not '%s'\n", argv[0],
                        HS_RUNNER_MAX_SETS, optarg);
                return HS_EXIT_USAGE;
            }
            o->sets[o->nsets++] = optarg;
            break;
        case 'C': {
            o->clock_given = hs_clock_mode_parse(optarg, &o->clock_mode) == 0;
            if (!o->clock_given) {
                fprintf(stderr, "hilsim %s: --clock: '%s' is not wall, lockstep or sync\n", argv[0],
                        optarg);
                return HS_EXIT_USAGE;
            }
            break;
        }
        case 'N':
            o->no_rt = true;
            break;
        case 'S':
            hs_log_set_syslog_prefix(1);
            break;
        case 'L': {
            enum hs_log_level l;
            if (hs_log_level_from_name(optarg, &l) < 0) {
                fprintf(stderr,
                        "hilsim %s: --log-level: '%s' is not error, warning, info or "
                        "debug\n",
                        argv[0], optarg);
                return HS_EXIT_USAGE;
            }
            hs_log_set_level(l);
            break;
        }
        case 'h':
            help(stdout);
            return -1;
        default:
            if (on_extra && on_extra(c) == 0)
                break;
            help(stderr);
            return HS_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "hilsim %s: expected one CONFIG file\n", argv[0]);
        help(stderr);
        return HS_EXIT_USAGE;
    }
    if (o->require_rt && o->no_rt) {
        fprintf(stderr, "hilsim %s: --require-rt and --no-rt contradict each other\n", argv[0]);
        return HS_EXIT_USAGE;
    }
    if ((o->junit || o->result_json) && !o->scenario) {
        fprintf(stderr, "hilsim %s: --junit and --result-json need --scenario\n", argv[0]);
        return HS_EXIT_USAGE;
    }
    o->config = argv[optind];
    return 0;
}

static const char *record_dir;

static int on_record(int c)
{
    if (c != 'r')
        return -1;
    record_dir = optarg;
    return 0;
}

int hs_cmd_run(int argc, char **argv)
{
    struct hs_runner_opts o;
    static const struct option extra[] = {{"record", required_argument, 0, 'r'}, {0, 0, 0, 0}};
    record_dir = NULL;
    int rc = hs__parse_run_opts(argc, argv, &o, usage, NULL, extra, on_record);
    o.record_dir = record_dir;
    if (rc)
        return rc < 0 ? HS_EXIT_OK : rc;
    struct hs_diag d = {0};
    if (hs__scenario_check_outputs(o.junit, o.result_json, &d) < 0) {
        hs_log_diag(&d);
        return HS_EXIT_USAGE;
    }
    static struct hs_runner r;
    rc = hs__runner_prepare(&o, &r);
    if (rc == 0) {
        rc = hs__runner_run(&r);
        struct hs__summary_out out;
        hs__summary_begin(&out);
        hs__runner_print_summary(&r, out.f);
        if (r.scenario) {
            struct hs_tick_result res;
            hs_tick_loop_result(r.loop, &res);
            char cause[96];
            snprintf(cause, sizeof cause, "the loop stopped (%s)",
                     hs_tick_stop_reason_name(res.reason));
            hs_scenario_set_stop_cause(r.scenario, cause);
            int vr = hs__scenario_report(r.scenario, o.junit, o.result_json, out.f);
            if (rc == HS_EXIT_OK)
                rc = vr;
        }
        hs__summary_end(&out);
    }
    hs__runner_cleanup(&r);
    return rc;
}
