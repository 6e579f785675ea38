/* Timing figures as JSON values (jansson) for report.json and whatever reads them back.
 * Not RT: runs after the loop stops. */
#ifndef HILSIM_REPORT_JSON_H
#define HILSIM_REPORT_JSON_H

/* Declared, not included: the users that build documents include <jansson.h> themselves (its
 * json_t is struct json_t), and the rt/ types come from hilsim/rt/ where they are used. */
struct json_t;
struct hs_rt_audit;
struct hs_rt_stats;
struct hs_hist;

/* Each returns a new reference the caller owns (json_decref), or NULL when out of memory.
 * Keys: those of hs_rt_audit_format_json, hs_rt_stats_format_json and hs_hist_format_json. */
struct json_t *hs_report_audit_json(const struct hs_rt_audit *a);
struct json_t *hs_report_stats_json(const struct hs_rt_stats *s);
struct json_t *hs_report_hist_json(const struct hs_hist *h);

/* v rounded to a number of decimals: report figures carry the digits they mean, and the
 * report's dump precision (HS_REPORT_JSON_PRECISION) then prints them without binary noise. */
double hs_report_round(double v, int decimals);
#define HS_REPORT_JSON_PRECISION 15

#endif
