/* perf/bench_step: `hilsim bench-step` with the malloc interposer (heap_counter.c) linked in, so
 * its report includes the heap calls per step of both variants. Same options. */
#include "commands.h"

int main(int argc, char **argv)
{
    return hs_cmd_bench_step(argc, argv);
}
