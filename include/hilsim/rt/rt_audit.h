/* Start-up self-audit: what kind of real-time host this is (kernel preemption model, isolated
 * CPUs, rlimits, cpu_dma_latency, CPU frequency governors) and what the set-up was granted.
 * Parsing takes text so tests can feed sample /proc and /sys contents; hs_rt_audit_collect
 * reads the files under a root directory ("" or NULL for the real system). */
#ifndef HS_RT_AUDIT_H
#define HS_RT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "hilsim/rt/rt_setup.h"

#define HS_RT_AUDIT_STR 128

struct hs_rt_audit {
    char kernel_release[HS_RT_AUDIT_STR]; /* /proc/sys/kernel/osrelease (uname -r) */
    char kernel_version[HS_RT_AUDIT_STR]; /* /proc/sys/kernel/version (uname -v) */
    char preempt_model[32]; /* "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", "voluntary/none" */
    int sys_realtime;       /* /sys/kernel/realtime: 1, 0, or -1 when absent */
    bool preempt_rt;        /* PREEMPT_RT in the version string or /sys/kernel/realtime = 1 */
    char isolated[HS_RT_AUDIT_STR];         /* /sys/devices/system/cpu/isolated ("" when none) */
    char nohz_full[HS_RT_AUDIT_STR];        /* /sys/devices/system/cpu/nohz_full */
    char cmdline_isolcpus[HS_RT_AUDIT_STR]; /* isolcpus= on /proc/cmdline */
    char cmdline_nohz_full[HS_RT_AUDIT_STR];
    char cmdline_rcu_nocbs[HS_RT_AUDIT_STR];
    int isolated_count; /* CPUs in the isolated list */
    int cpus_online;
    long long rtprio_cur, rtprio_max;               /* RLIMIT_RTPRIO; -1 = unlimited */
    long long memlock_cur_bytes, memlock_max_bytes; /* RLIMIT_MEMLOCK in bytes; -1 = unlimited */
    bool dma_latency_present;                       /* /dev/cpu_dma_latency exists */
    long long dma_latency_us;        /* current system-wide target in us, -1 when unreadable;
                                        2000000000 is the kernel default "no request" */
    char governors[HS_RT_AUDIT_STR]; /* distinct cpufreq governors, comma-separated; "" none */
    bool governors_all_performance;
    bool have_report;           /* the fields below are valid */
    struct hs_rt_report report; /* what hs_rt_setup_* were granted */
};

/* Text parsers: init only (pure functions, no allocation), testable on sample text. */
/* Preemption model from a uname -v string and the /sys/kernel/realtime text (NULL if absent).
 * Writes the model name into model (size bytes) and returns true for PREEMPT_RT. */
bool hs_rt_parse_preempt(const char *uname_v, const char *sys_realtime, char *model, size_t size);
/* Value of key= on a kernel command line (first occurrence). 0, or -ENOENT when absent. An
 * empty value ("isolcpus=") is returned as "". */
int hs_rt_parse_cmdline(const char *cmdline, const char *key, char *buf, size_t size);
/* Number of CPUs in a cpulist ("0-3,6,8-9"; "" or "\n" is 0). 0 with *ret_count, or -EINVAL. */
int hs_rt_parse_cpulist(const char *text, int *ret_count);
/* The current target from the 4 bytes /dev/cpu_dma_latency reads as (native s32, us):
 * 0 and the value in *ret_us, or -EINVAL when n is not 4. */
int hs_rt_parse_dma_latency(const void *bytes, size_t n, long long *ret_us);
/* Adds one governor (a scaling_governor file's text) to the distinct list in a. */
void hs_rt_audit_add_governor(struct hs_rt_audit *a, const char *text);

/* init only. Fills *a from the files under root ("" or NULL = "/") and getrlimit; rep (may be
 * NULL) is copied in as what was granted. Missing files leave their fields empty. Returns 0. */
int hs_rt_audit_collect(struct hs_rt_audit *a, const char *root, const struct hs_rt_report *rep);

/* init only. True when the host can give real-time guarantees: a PREEMPT_RT kernel and, if a report
 * is present, SCHED_FIFO and mlockall granted. Otherwise writes the reasons into why. */
bool hs_rt_audit_rt_capable(const struct hs_rt_audit *a, char *why, size_t size);

/* Non-RT. The audit as the text table of report.txt and the safe-stop log; returns the needed
 * length like snprintf. Its JSON is hilsim/report_json.h's (src/report). */
size_t hs_rt_audit_format_text(const struct hs_rt_audit *a, char *buf, size_t size);

#endif
