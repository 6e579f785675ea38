/* The EDS writer (cia402_eds_write.c) read back by hilsim's own EDS loader: a drive with a
 * changed dictionary (config PDOs, heartbeat, limits, a manufacturer object from an EDS) is
 * written out, loaded into a drive built from the library defaults, at the same node-ID and at
 * another one, and every entry must come back with the same type, access, PDO mapping, range
 * and reset value (node-relative COB-IDs moved to the other node-ID). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cia402/cia402_internal.h"

static struct hs_cia402_node a, b;

static char *write_eds(const struct hs_cia402_node *n, size_t *ret_len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, ret_len);
    assert_non_null(f);
    assert_int_equal(hs_cia402_node_write_eds(n, f, "t.eds"), 0);
    fclose(f);
    return buf;
}

static void build_a(void)
{
    struct hs_cia402_config c;
    hs_cia402_config_init(&c, 7);
    c.heartbeat_ms = 250;
    c.counts_per_rev = 4096;
    c.rpdo[1] = (struct hs_cia402_pdo_config){
        .valid = true, .type = 1, .n = 2, .map = {0x60400010, 0x607A0020}};
    c.tpdo[1] = (struct hs_cia402_pdo_config){
        .valid = true, .type = 1, .n = 3, .map = {0x60410010, 0x60640020, 0x60770010}};
    struct hs_diag d = {0};
    assert_int_equal(hs_cia402_node_init(&a, &c, &d), 0);
    static const char extra[] = "[2001]\nParameterName=gain\nObjectType=0x7\nDataType=0x0004\n"
                                "AccessType=rw\nDefaultValue=-12\nLowLimit=-100\nHighLimit=100\n"
                                "PDOMapping=1\n[605A]\nDataType=0x0003\nDefaultValue=6\n";
    assert_int_equal(hs_cia402_node_load_eds(&a, extra, sizeof extra - 1, "x", NULL, &d), 0);
}

static void round_trip(uint8_t id)
{
    size_t len;
    char *text = write_eds(&a, &len);
    struct hs_cia402_config c;
    hs_cia402_config_init(&c, id);
    struct hs_diag d = {0};
    assert_int_equal(hs_cia402_node_init(&b, &c, &d), 0);
    unsigned applied = 0;
    if (hs_cia402_node_load_eds(&b, text, len, "written.eds", &applied, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    assert_int_equal(b.n_entries, a.n_entries);
    for (unsigned i = 0; i < a.n_entries; i++) {
        const struct hs_cia402_entry *x = &a.entries[i], *y = &b.entries[i];
        assert_int_equal(x->index, y->index);
        assert_int_equal(x->sub, y->sub);
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->access, y->access);
        assert_int_equal(x->pdo, y->pdo);
        assert_true(x->min == y->min && x->max == y->max);
        if (x->type == 9) {
            assert_string_equal((const char *)&a.od_def + x->offset,
                                (const char *)&b.od_def + y->offset);
            continue;
        }
        uint32_t va = hs__cia402_od_get(&a.od_def, x), vb = hs__cia402_od_get(&b.od_def, y);
        bool cob = (x->index == 0x1014 && x->sub == 0) ||
                   ((x->index & 0xFE00) == 0x1400 && x->sub == 1) ||
                   ((x->index & 0xFE00) == 0x1800 && x->sub == 1);
        if (cob && id != 7)
            va = va - 7 + id; /* $NODEID+x */
        if (va != vb)
            fail_msg("0x%04X sub %u: wrote 0x%X, read back 0x%X", x->index, x->sub, va, vb);
    }
    assert_true(applied >= a.n_entries - 3); /* every entry but the strings' checks counted */
    free(text);
}

static void test_written_eds_reads_back_the_same_dictionary(void **state)
{
    (void)state;
    build_a();
    round_trip(7);
    round_trip(42);
    /* the heartbeat, the PDOs and the manufacturer object really changed from the defaults */
    assert_int_equal(b.od_def.hb_producer_ms, 250);
    assert_int_equal(b.od_def.tpdo[1].cob_id, 0x40000280u + 42); /* bit 30: no RTR */
    assert_int_equal(b.od_def.quick_stop_option, 6);
    assert_non_null(hs_cia402_od_find(&b, 0x2001, 0));
}

static void test_written_eds_sections(void **state)
{
    (void)state;
    build_a();
    size_t len;
    char *text = write_eds(&a, &len);
    assert_non_null(strstr(text, "[6040]\nParameterName=Controlword\nObjectType=0x7\n"
                                 "DataType=0x0006\nAccessType=rww\n"));
    assert_non_null(strstr(text, "[6041]\nParameterName=Statusword\nObjectType=0x7\n"
                                 "DataType=0x0006\nAccessType=ro\n"));
    assert_non_null(strstr(text, "[1018]\nParameterName=Identity object\nObjectType=0x9\n"));
    assert_non_null(
        strstr(text, "[1003]\nParameterName=Pre-defined error field\nObjectType=0x8\n"));
    assert_non_null(strstr(text, "DefaultValue=$NODEID+0x40000280\n"));
    assert_non_null(strstr(text, "[ManufacturerObjects]\nSupportedObjects=1\n1=0x2001\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_eds_reads_back_the_same_dictionary),
        cmocka_unit_test(test_written_eds_sections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
