/* libFuzzer target: the DBC parser, then decode/encode of every parsed signal on a payload
 * taken from the input, so the codec is driven by whatever geometry the parser accepted. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hilsim/can_dbc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    if (hs_dbc_load_buffer((const char *)data, size, "fuzz.dbc", &dbc, &d) < 0)
        return 0;
    int lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (unsigned i = 0; i < dbc->n_warnings; i++) {
        const struct hs_dbc_warning *w = &dbc->warnings[i];
        if (!w->msg || w->line < 1 || w->line > lines || w->column < 0)
            __builtin_trap(); /* every warning points into the text */
        if (i && w->line < dbc->warnings[i - 1].line)
            __builtin_trap(); /* in file order */
    }
    if (dbc->n_warnings > HS_DBC_WARNINGS_MAX)
        __builtin_trap();
    uint8_t payload[64] = {0};
    memcpy(payload, data, size < sizeof payload ? size : sizeof payload);
    for (unsigned i = 0; i < dbc->n_messages; i++) {
        const struct hs_dbc_message *m = &dbc->messages[i];
        if (hs_dbc_find(dbc, m->id, m->extended) != m)
            __builtin_trap(); /* lookup must find every message */
        if (m->length > 8 && !m->fd)
            __builtin_trap(); /* lengths above 8 exist only on CAN FD */
        if (m->n_signals > HS_DBC_SIGNALS_PER_MESSAGE_MAX)
            __builtin_trap();
        for (unsigned k = 0; k < m->n_signals; k++) {
            const struct hs_dbc_signal *s = &m->signals[k];
            double v;
            uint64_t raw, back;
            (void)hs_dbc_signal_present(m, s, payload, m->length);
            if (hs_dbc_signal_decode(s, payload, m->length, &v) < 0)
                __builtin_trap(); /* the parser promised the signal fits the message */
            hs_dbc_signal_get_raw(s, payload, m->length, &raw);
            uint8_t copy[64];
            memcpy(copy, payload, sizeof copy);
            hs_dbc_signal_set_raw(s, copy, m->length, raw);
            if (memcmp(copy, payload, sizeof copy) != 0)
                __builtin_trap(); /* writing back the raw bits changes nothing */
            hs_dbc_signal_encode(s, v, copy, m->length);
            hs_dbc_signal_get_raw(s, copy, m->length, &back);
            (void)back;
        }
    }
    hs_dbc_free(dbc);
    return 0;
}
