/* Process exit codes of every hilsim command, the service's runs included: systemd units and
 * test scripts branch on them. */
#ifndef HS_SERVICE_EXIT_CODES_H
#define HS_SERVICE_EXIT_CODES_H

enum {
    HS_EXIT_OK = 0,
    HS_EXIT_FAILURE = 1,      /* runtime failure */
    HS_EXIT_USAGE = 2,        /* bad usage or bad input */
    HS_EXIT_PLANT_FAULT = 3,  /* the simulated world diverged or ODE failed; stopped safely */
    HS_EXIT_DIVERGED = 4,     /* hilsim replay: the replay differs from the recording */
    HS_EXIT_SCENARIO_FAIL = 5 /* a --scenario ran to its verdict and an expectation failed */
};

#endif
