/* One function per subcommand, one file per subcommand (cmd_<name>.c).
 * Each returns the process exit code: 0 success, 1 runtime failure, 2 bad usage or bad input,
 * 3 plant fault (the simulated world diverged or ODE failed; the bench stopped safely), 4 a
 * replay that diverged from its recording, 5 a --scenario ran to its verdict and an
 * expectation failed. */
#ifndef HS_CLI_COMMANDS_H
#define HS_CLI_COMMANDS_H

#include "hilsim/service/exit_codes.h"

int hs_cmd_model(int argc, char **argv);
int hs_cmd_sim(int argc, char **argv);
int hs_cmd_run(int argc, char **argv);
int hs_cmd_bench(int argc, char **argv);
int hs_cmd_bench_step(int argc, char **argv);
int hs_cmd_config(int argc, char **argv);
int hs_cmd_can(int argc, char **argv);
int hs_cmd_shm(int argc, char **argv);
int hs_cmd_replay(int argc, char **argv);
int hs_cmd_ctl(int argc, char **argv);
int hs_cmd_view(int argc, char **argv);
int hs_cmd_campaign(int argc, char **argv);

#endif
