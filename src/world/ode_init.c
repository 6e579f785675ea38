/* ODE's global init, reference counted so several worlds (and tests that create and destroy
 * many) can coexist. ODE here has no TLS, so all worlds live on one thread: a plain counter.
 *
 * ODE's three report handlers go through hilsim, never straight to stderr:
 * - messages (dMessage: the standard solver's "LCP internal error", ...) are counted per
 *   distinct message on the world that is stepping, with the tick, and logged later from a
 *   non-RT thread, rate-limited (hs_world_ode_message_due); outside a step they are logged at
 *   once (that is init code), also rate-limited;
 * - errors and internal assertions (dError, dDebug: ODE calls abort() when the handler
 *   returns) inside a step longjmp back to hs_world_step, which latches the world and returns
 *   -EFAULT, so the bench runs its safe stop, writes its summary and exits with its plant-fault
 *   status like any other fault. The abandoned step leaves ODE's step arena and the step's
 *   contact joints as they were; the world is never stepped again and hs_world_destroy frees
 *   it. We chose the jump over an emergency hook that exits from inside the handler because
 *   the jump gives the same complete stop (summary, CSV, shm flag, CAN stop frames) as a guard
 *   trip, through one path. Outside a step (model loading) they are logged as hilsim errors
 *   before ODE aborts: nothing is running yet that needs a safe stop. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ode/ode.h>

#include "hilsim/log.h"
#include "world_internal.h"

static unsigned ode_users;
static struct hs_world *stepping; /* the world inside dSpaceCollide/dWorld*Step, else NULL */
static uint64_t outside_messages; /* messages outside a step, for their log's rate limit */

static bool power_of_ten(uint64_t n)
{
    while (n >= 10 && n % 10 == 0)
        n /= 10;
    return n == 1;
}

/* RT path: no stdio, no allocation. The first occurrence of each distinct message is formatted
 * once into preallocated storage (vsnprintf of ODE's short numeric formats does not allocate). */
static void note_message(struct hs_world *w, int num, const char *msg, va_list ap)
{
    uint32_t n = atomic_load_explicit(&w->nmsgs, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        if (w->msgs[i].fmt == msg && w->msgs[i].num == num) {
            atomic_store_explicit(&w->msgs[i].last_tick, w->tick, memory_order_relaxed);
            atomic_fetch_add_explicit(&w->msgs[i].count, 1, memory_order_release);
            return;
        }
    if (n == HS_WORLD_ODE_MESSAGES_MAX) {
        atomic_fetch_add_explicit(&w->msgs_other, 1, memory_order_relaxed);
        return;
    }
    struct hs__world_ode_msg *m = &w->msgs[n];
    m->num = num;
    m->fmt = msg;
    m->first_tick = w->tick;
    vsnprintf(m->text, sizeof m->text, msg, ap);
    atomic_store_explicit(&m->last_tick, w->tick, memory_order_relaxed);
    atomic_store_explicit(&m->count, 1, memory_order_relaxed);
    atomic_store_explicit(&w->nmsgs, n + 1, memory_order_release);
}

void hs__ode_forget_messages(struct hs_world *w)
{
    memset(w->msgs, 0, sizeof w->msgs);
    atomic_store_explicit(&w->nmsgs, 0, memory_order_relaxed);
    atomic_store_explicit(&w->msgs_other, 0, memory_order_relaxed);
}

static void on_message(int num, const char *msg, va_list ap)
{
    if (stepping) {
        note_message(stepping, num, msg, ap);
        return;
    }
    if (!power_of_ten(++outside_messages))
        return;
    char text[256];
    vsnprintf(text, sizeof text, msg, ap);
    hs_log(HS_LOG_WARNING, "ODE message %d: %s (%llu so far)", num, text,
           (unsigned long long)outside_messages);
}

static void on_fatal(const char *what, int num, const char *msg, va_list ap)
{
    struct hs_world *w = stepping;
    if (w) {
        stepping = NULL;
        char text[HS_WORLD_FAULT_TEXT_MAX - 32];
        vsnprintf(text, sizeof text, msg, ap);
        w->fault = (struct hs_world_fault){
            .kind = HS_WORLD_FAULT_ODE_INTERNAL,
            .body = UINT32_MAX,
            .link = UINT32_MAX,
            .tick = w->tick,
            .step = w->nsteps,
            .time_s = w->time_s,
        };
        snprintf(w->fault.ode_text, sizeof w->fault.ode_text, "%s %d: %s", what, num, text);
        w->fault_rc = -EFAULT;
        longjmp(w->step_jmp, 1);
    }
    char text[256];
    vsnprintf(text, sizeof text, msg, ap);
    hs_log(HS_LOG_ERR, "ODE %s %d outside a physics step: %s; ODE aborts the process", what, num,
           text);
}

static void on_error(int num, const char *msg, va_list ap)
{
    on_fatal("error", num, msg, ap);
}

static void on_debug(int num, const char *msg, va_list ap)
{
    on_fatal("internal assertion", num, msg, ap);
}

void hs__ode_enter_step(struct hs_world *w)
{
    stepping = w;
}

void hs__ode_leave_step(void)
{
    stepping = NULL;
}

int hs__ode_acquire(void)
{
    if (ode_users == 0) {
        dSetMessageHandler(on_message);
        dSetErrorHandler(on_error);
        dSetDebugHandler(on_debug);
        if (!dInitODE2(0))
            return -ENOMEM;
    }
    /* Per-thread collision data; repeated calls on the same thread are cheap no-ops. */
    if (!dAllocateODEDataForThread(dAllocateMaskAll)) {
        if (ode_users == 0)
            dCloseODE();
        return -ENOMEM;
    }
    ode_users++;
    return 0;
}

void hs__ode_release(void)
{
    if (ode_users > 0 && --ode_users == 0)
        dCloseODE();
}

uint32_t hs_world_ode_message_count(const struct hs_world *w, uint64_t *ret_other)
{
    if (ret_other)
        *ret_other = atomic_load_explicit(&w->msgs_other, memory_order_relaxed);
    return atomic_load_explicit(&w->nmsgs, memory_order_acquire);
}

int hs_world_ode_message_get(const struct hs_world *w, uint32_t i, struct hs_world_ode_message *ret)
{
    if (i >= atomic_load_explicit(&w->nmsgs, memory_order_acquire))
        return -ENOENT;
    const struct hs__world_ode_msg *m = &w->msgs[i];
    ret->num = m->num;
    ret->count = atomic_load_explicit(&m->count, memory_order_acquire);
    ret->first_tick = m->first_tick;
    ret->last_tick = atomic_load_explicit(&m->last_tick, memory_order_relaxed);
    memcpy(ret->text, m->text, sizeof ret->text);
    return 0;
}

int hs_world_ode_message_due(struct hs_world *w, struct hs_world_ode_message *ret)
{
    uint32_t n = atomic_load_explicit(&w->nmsgs, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct hs__world_ode_msg *m = &w->msgs[i];
        uint64_t c = atomic_load_explicit(&m->count, memory_order_acquire);
        if (m->due_at == 0)
            m->due_at = 1;
        if (c < m->due_at)
            continue;
        while (m->due_at <= c)
            m->due_at *= 10;
        return hs_world_ode_message_get(w, i, ret);
    }
    return -ENOENT;
}
