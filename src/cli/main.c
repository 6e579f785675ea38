#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"model", hs_cmd_model, "load a VRML97 (OpenHRP) or URDF model, print it, export URDF"},
    {"sim", hs_cmd_sim, "run a model offline, faster than real time, and log a CSV"},
    {"run", hs_cmd_run, "run the real-time loop until SIGINT/SIGTERM"},
    {"bench", hs_cmd_bench, "timing validation run with a report and a verdict"},
    {"bench-step", hs_cmd_bench_step, "benchmark one physics step against bare ODE"},
    {"config", hs_cmd_config, "check a bench config file and print it resolved"},
    {"can", hs_cmd_can, "CAN tools: dbc, decode"},
    {"shm", hs_cmd_shm, "shared-memory segments: list, remove BENCH"},
    {"replay", hs_cmd_replay, "replay a recording (run --record) offline and compare"},
    {"ctl", hs_cmd_ctl,
     "live control of a running bench: status, push, fault, inject, scenario, clear, stop"},
    {"campaign", hs_cmd_campaign, "many scenario runs from a matrix, in parallel or on Slurm"},
    {"view", hs_cmd_view, "the bench (or a recording) live in a browser: 3D robot and plots"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim <command> [options]\n"
            "       hilsim <command> --help\n\n"
            "hilsim plays a robot for real controller boards: it steps an ODE world built from\n"
            "the robot's model in a real-time loop and answers over CAN and shared memory.\n\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\nexit codes: 0 success, 1 runtime failure, 2 bad usage or bad input, 3 plant fault,\n"
            "4 a replay diverged from its recording, 5 a scenario's expectation failed\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("hilsim " HS_VERSION "\n");
        return HS_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "hilsim: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return HS_EXIT_USAGE;
}
