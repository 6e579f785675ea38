/* hs_write_bounded and hs_log on a descriptor nobody reads: they give up, they do not block.
 * No timing is asserted: a call that blocked would never return and the test would time out. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/bounded_write.h"
#include "hilsim/log.h"

/* Fills the write end W (made non-blocking for the filling only) until it takes no more. */
static void fill(int w)
{
    int fl = fcntl(w, F_GETFL);
    assert_int_equal(fcntl(w, F_SETFL, fl | O_NONBLOCK), 0);
    char junk[512];
    memset(junk, 'x', sizeof junk);
    while (write(w, junk, sizeof junk) > 0)
        ;
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(fcntl(w, F_SETFL, fl), 0);
}

static void test_pipe_with_room_takes_everything(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    char msg[10000], back[10000];
    memset(msg, 'a', sizeof msg);
    assert_int_equal(fcntl(p[1], F_SETPIPE_SZ, 65536) >= 0, 1);
    assert_int_equal(hs_write_bounded(p[1], msg, sizeof msg, 0), (long)sizeof msg);
    assert_int_equal(read(p[0], back, sizeof back), (ssize_t)sizeof back);
    assert_memory_equal(msg, back, sizeof msg);
    close(p[0]);
    close(p[1]);
}

static void test_full_pipe_gives_up(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    fill(p[1]);
    assert_int_equal(hs_write_bounded(p[1], "line\n", 5, 0), 0);
    assert_int_equal(hs_write_bounded(p[1], "line\n", 5, 50), 0); /* waits, then gives up */
    close(p[0]);
    close(p[1]);
}

static void test_full_socket_gives_up(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fill(sv[0]);
    assert_int_equal(hs_write_bounded(sv[0], "line\n", 5, 20), 0);
    close(sv[0]);
    close(sv[1]);
}

static void test_closed_reader_is_an_error(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(hs_write_bounded(p[1], "line\n", 5, 0), -EPIPE);
    close(p[1]);
}

/* The process log on a full standard error: lines are dropped and counted, and the count is
 * written before the first line that goes out once the reader reads again. */
static void test_log_drops_and_says_so(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
    fill(p[1]);
    hs_log_set_syslog_prefix(0);
    hs_log(HS_LOG_WARNING, "first");  /* waits HS_LOG_WAIT_MS, then dropped */
    hs_log(HS_LOG_WARNING, "second"); /* dropped at once */
    static char drain[1 << 20];
    int fl = fcntl(p[0], F_GETFL);
    fcntl(p[0], F_SETFL, fl | O_NONBLOCK);
    while (read(p[0], drain, sizeof drain) > 0)
        ;
    hs_log(HS_LOG_WARNING, "third");
    ssize_t n = read(p[0], drain, sizeof drain - 1);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_true(n > 0);
    drain[n] = 0;
    assert_string_equal(drain, "hilsim: warning: 2 log lines dropped: standard error was not "
                               "being read\nhilsim: warning: third\n");
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipe_with_room_takes_everything),
        cmocka_unit_test(test_full_pipe_gives_up),
        cmocka_unit_test(test_full_socket_gives_up),
        cmocka_unit_test(test_closed_reader_is_an_error),
        cmocka_unit_test(test_log_drops_and_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
