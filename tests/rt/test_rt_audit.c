/* Self-audit: text parsers on sample /proc and /sys contents, collection from a fake root tree,
 * the RT-capable verdict and the formatters. Also runs the real collection (no assertion on
 * the host's answers, only that it works). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "hilsim/report_json.h"
#include "hilsim/rt/rt_audit.h"

static void test_preempt_model(void **state)
{
    char m[32];
    assert_true(
        hs_rt_parse_preempt("#1 SMP PREEMPT_RT Debian 6.1.76-1 (2024-02-01)", NULL, m, sizeof m));
    assert_string_equal(m, "PREEMPT_RT");
    assert_false(hs_rt_parse_preempt("#1 SMP PREEMPT_DYNAMIC @0", NULL, m, sizeof m));
    assert_string_equal(m, "PREEMPT_DYNAMIC");
    assert_false(hs_rt_parse_preempt("#1 SMP PREEMPT Fri Jan 1", "0\n", m, sizeof m));
    assert_string_equal(m, "PREEMPT");
    assert_false(hs_rt_parse_preempt("#1 SMP Fri Jan 1", NULL, m, sizeof m));
    assert_string_equal(m, "voluntary/none");
    /* /sys/kernel/realtime alone is enough (some vendor kernels hide it from uname). */
    assert_true(hs_rt_parse_preempt("#1 SMP", "1\n", m, sizeof m));
}

static void test_cmdline(void **state)
{
    const char *cl = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=domain,managed_irq,2-3 "
                     "nohz_full=2-3 quiet rcu_nocbs= -- isolcpus=9\n";
    char buf[64];
    assert_int_equal(hs_rt_parse_cmdline(cl, "isolcpus", buf, sizeof buf), 0);
    assert_string_equal(buf, "domain,managed_irq,2-3");
    assert_int_equal(hs_rt_parse_cmdline(cl, "nohz_full", buf, sizeof buf), 0);
    assert_string_equal(buf, "2-3");
    assert_int_equal(hs_rt_parse_cmdline(cl, "rcu_nocbs", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    strcpy(buf, "keep");
    assert_int_equal(hs_rt_parse_cmdline(cl, "irqaffinity", buf, sizeof buf), -ENOENT);
    assert_int_equal(hs_rt_parse_cmdline("xisolcpus=1", "isolcpus", buf, sizeof buf), -ENOENT);
    assert_string_equal(buf, "keep");
}

static void test_cpulist(void **state)
{
    int n = -1;
    assert_int_equal(hs_rt_parse_cpulist("0-3,6,8-9\n", &n), 0);
    assert_int_equal(n, 7);
    assert_int_equal(hs_rt_parse_cpulist("\n", &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(hs_rt_parse_cpulist("domain,managed_irq,2-3", &n), 0);
    assert_int_equal(n, 2);
    n = 5;
    assert_int_equal(hs_rt_parse_cpulist("3-1", &n), -EINVAL);
    assert_int_equal(hs_rt_parse_cpulist("1;2", &n), -EINVAL);
    assert_int_equal(n, 5);
}

static void test_dma_latency_bytes(void **state)
{
    long long us = 7;
    int32_t v = 0;
    assert_int_equal(hs_rt_parse_dma_latency(&v, sizeof v, &us), 0);
    assert_int_equal(us, 0);
    v = 2000000000;
    assert_int_equal(hs_rt_parse_dma_latency(&v, sizeof v, &us), 0);
    assert_int_equal(us, 2000000000);
    us = 7;
    assert_int_equal(hs_rt_parse_dma_latency("0x0\n", 4 - 1, &us), -EINVAL);
    assert_int_equal(us, 7);
}

static void put_file(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_collect_fake_root(void **state)
{
    char root[] = "/tmp/hs-audit-XXXXXX";
    assert_non_null(mkdtemp(root));
    put_file(root, "/proc/sys/kernel/osrelease", "6.1.0-56-rt-amd64\n");
    put_file(root, "/proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1.137-1\n");
    put_file(root, "/sys/kernel/realtime", "1\n");
    put_file(root, "/sys/devices/system/cpu/isolated", "2-3\n");
    put_file(root, "/sys/devices/system/cpu/nohz_full", "2-3\n");
    put_file(root, "/sys/devices/system/cpu/online", "0-3\n");
    put_file(root, "/proc/cmdline", "root=/dev/vda isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3\n");
    put_file(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
    put_file(root, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
    put_file(root, "/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "powersave\n");
    put_file(root, "/dev/cpu_dma_latency", "");

    struct hs_rt_audit a;
    struct hs_rt_report rep = {.sched_fifo = {HS_RT_GRANTED, 0},
                               .mlockall = {HS_RT_GRANTED, 0},
                               .dma_latency = {HS_RT_REFUSED, EACCES},
                               .priority = 80,
                               .cpu = 2};
    assert_int_equal(hs_rt_audit_collect(&a, root, &rep), 0);
    assert_string_equal(a.kernel_release, "6.1.0-56-rt-amd64");
    assert_true(a.preempt_rt);
    assert_int_equal(a.sys_realtime, 1);
    assert_string_equal(a.isolated, "2-3");
    assert_int_equal(a.isolated_count, 2);
    assert_int_equal(a.cpus_online, 4);
    assert_string_equal(a.nohz_full, "2-3");
    assert_string_equal(a.cmdline_isolcpus, "2-3");
    assert_string_equal(a.cmdline_rcu_nocbs, "2-3");
    assert_true(a.dma_latency_present);
    assert_int_equal(a.dma_latency_us, -1); /* an empty file is not a valid answer */
    /* readdir order is arbitrary: both governors listed once. */
    assert_true(strcmp(a.governors, "performance,powersave") == 0 ||
                strcmp(a.governors, "powersave,performance") == 0);
    assert_false(a.governors_all_performance);

    char why[256];
    assert_true(hs_rt_audit_rt_capable(&a, why, sizeof why));
    static char buf[8192];
    assert_true(hs_rt_audit_format_text(&a, buf, sizeof buf) < sizeof buf);
    assert_non_null(strstr(buf, "PREEMPT_RT"));
    assert_non_null(strstr(buf, "cpu_dma_latency = 0    refused (Permission denied)"));
    assert_non_null(strstr(buf, "RT capable             yes"));
    /* The same audit as report.json carries it (report_json.c). */
    json_t *j = hs_report_audit_json(&a);
    assert_true(json_is_true(json_object_get(j, "preempt_rt")));
    json_t *dma = json_object_get(j, "dma_latency");
    assert_string_equal(json_string_value(json_object_get(dma, "state")), "refused");
    assert_int_equal(json_integer_value(json_object_get(dma, "errno")), 13);
    json_decref(j);

    /* Same tree without RT and with SCHED_FIFO refused: not capable, both reasons given. */
    put_file(root, "/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n");
    put_file(root, "/sys/kernel/realtime", "0\n");
    rep.sched_fifo = (struct hs_rt_step){HS_RT_REFUSED, EPERM};
    assert_int_equal(hs_rt_audit_collect(&a, root, &rep), 0);
    assert_false(a.preempt_rt);
    assert_false(hs_rt_audit_rt_capable(&a, why, sizeof why));
    assert_string_equal(why, "kernel is not PREEMPT_RT (PREEMPT_DYNAMIC); SCHED_FIFO refused");
    j = hs_report_audit_json(&a);
    assert_true(json_is_false(json_object_get(j, "rt_capable")));
    assert_string_equal(json_string_value(json_object_get(j, "rt_capable_why")), why);
    json_decref(j);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void test_empty_root_and_real_host(void **state)
{
    struct hs_rt_audit a;
    assert_int_equal(hs_rt_audit_collect(&a, "/nonexistent-hs-root", NULL), 0);
    assert_false(a.preempt_rt);
    assert_int_equal(a.sys_realtime, -1);
    assert_string_equal(a.governors, "");
    assert_false(a.have_report);
    assert_int_equal(hs_rt_audit_collect(&a, NULL, NULL), 0);
    assert_true(a.kernel_release[0] != '\0');
    char buf[8192];
    assert_true(hs_rt_audit_format_text(&a, buf, sizeof buf) < sizeof buf);
    print_message("%s", buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preempt_model),     cmocka_unit_test(test_cmdline),
        cmocka_unit_test(test_cpulist),           cmocka_unit_test(test_dma_latency_bytes),
        cmocka_unit_test(test_collect_fake_root), cmocka_unit_test(test_empty_root_and_real_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
