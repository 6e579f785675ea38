/* What the CLI does with a plant fault (the divergence guard or an ODE internal error) and with
 * ODE's counted messages: the one-line cause, the safe stop, the exit status, and ODE's reports
 * as rate-limited log lines. Not RT: runs after the loop, or beside it for the messages. */
#include "hilsim/service/exit_codes.h"
#include "hilsim/service/runner.h"

#include "hilsim/log.h"
#include "hilsim/record.h"

/* A plant fault ends the run like a SIGTERM, with its own message and status. */
int hs__runner_plant_fault(struct hs_runner *r, const char *when)
{
    char why[512];
    hs_bench_fault_format(r->bench, why, sizeof why);
    hs_log(HS_LOG_ERR, "plant fault during %s: %s; safe stop", when, why);
    const struct hs_world_fault *f = hs_bench_fault(r->bench);
    if (r->rec)
        hs_rec_event(r->rec, HS_REC_EV_PLANT_FAULT, f ? f->tick : 0, 0, 0, why);
    hs_bench_safe_stop(r->bench);
    return HS_EXIT_PLANT_FAULT;
}

void hs__log_ode_messages(struct hs_world *w, bool summary)
{
    struct hs_world_ode_message m;
    while (hs_world_ode_message_due(w, &m) == 0)
        hs_log(HS_LOG_WARNING, "ODE message %d at tick %llu: %s (%llu so far)", m.num,
               (unsigned long long)m.last_tick, m.text, (unsigned long long)m.count);
    if (!summary)
        return;
    uint64_t other;
    uint32_t n = hs_world_ode_message_count(w, &other);
    for (uint32_t i = 0; i < n; i++)
        if (hs_world_ode_message_get(w, i, &m) == 0)
            hs_log(HS_LOG_INFO, "ODE message %d reported %llu times (ticks %llu .. %llu): %s",
                   m.num, (unsigned long long)m.count, (unsigned long long)m.first_tick,
                   (unsigned long long)m.last_tick, m.text);
    if (other)
        hs_log(HS_LOG_INFO, "ODE: %llu more reports of other messages", (unsigned long long)other);
}
