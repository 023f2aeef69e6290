/* A clock that really steps, for the clock tests of tests/store/hardening.rs.
 *
 * Loaded with LD_PRELOAD into a redis-server (or any process), it adds an offset to
 * every reading of the wall clock: clock_gettime(CLOCK_REALTIME and its coarse
 * form), gettimeofday and time. The offset, in milliseconds (may be negative), is
 * read from the file named by LEAGUEKIT_CLOCK_SHIM at every reading, so a test steps
 * the process's clock forward or back at once by rewriting that file. Monotonic
 * clocks are left alone, as a real NTP step leaves them.
 *
 * libfaketime does the same in general, but crashes redis-server's jemalloc build. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset_ms(void) {
    const char *path = getenv("LEAGUEKIT_CLOCK_SHIM");
    if (path == NULL) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    return strtoll(buf, NULL, 10);
}

/* The real wall clock, from the kernel (not from libc, which may be this file). */
static int real_clock(clockid_t id, struct timespec *ts) {
    return (int)syscall(SYS_clock_gettime, id, ts);
}

static void shift(struct timespec *ts) {
    long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_ms() * 1000000LL;
    ts->tv_sec = (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000L;
        ts->tv_sec -= 1;
    }
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    static int (*next)(clockid_t, struct timespec *);
    if (next == NULL) next = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) {
        int r = real_clock(id, ts);
        if (r == 0) shift(ts);
        return r;
    }
    return next != NULL ? next(id, ts) : real_clock(id, ts);
}

int gettimeofday(struct timeval *tv, void *tz) {
    (void)tz;
    struct timespec ts;
    int r = real_clock(CLOCK_REALTIME, &ts);
    if (r != 0) return r;
    shift(&ts);
    if (tv != NULL) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (real_clock(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
    shift(&ts);
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}
