/* Helper with functions of known behaviour for arum's function-timing tests. Each mode calls
 * its functions a known number of times and prints what it did on stdout as "key value" lines
 * (its own counts and timings), so a test can compare arum's report with the same run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "fcalls_lib.h"

#define NOINLINE __attribute__((noinline, used))

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* 1 ms of CPU time (longer in wall time when the machine is busy). */
NOINLINE void spin_ms(void) {
    double t = cpu_now();
    while (cpu_now() - t < 1e-3) {
    }
}

/* About 20 ns of work. */
NOINLINE unsigned tiny(unsigned x) {
    for (int i = 0; i < 8; i++) {
        x = x * 2654435761u + 1;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* Ten more short functions, step0..step9, for runs that throttle many at once. */
#define STEP(k)                                                                                  \
    NOINLINE unsigned step##k(unsigned x) {                                                      \
        for (int i = 0; i < 8; i++) {                                                            \
            x = (x ^ (x >> 7)) * (2246822519u + 2 * k);                                          \
            __asm__ volatile("" : "+r"(x));                                                      \
        }                                                                                        \
        return x;                                                                                \
    }
STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9)

/* Spins for `ns` of wall time and adds how long it took by its own clock to `spun_ns`, keeping
 * each call's length (the first MAX_SPINS) for the median: a function that knows its own length. */
#define MAX_SPINS 65536
static double spun_ns, spins[MAX_SPINS];
static long nspins;
NOINLINE void spin_for(long ns) {
    double t = now(), d;
    while ((d = now() - t) * 1e9 < ns) {
    }
    spun_ns += d * 1e9;
    if (nspins < MAX_SPINS) spins[nspins++] = d * 1e9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

NOINLINE long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

NOINLINE unsigned work(unsigned x) { return tiny(x) ^ 0x5a5a; }

static void *thread_main(void *arg) {
    long n = (long)arg;
    unsigned x = 0;
    for (long i = 0; i < n; i++) x = work(x);
    printf("thread %ld %ld\n", (long)syscall(SYS_gettid), n);
    return (void *)(unsigned long)x;
}

static jmp_buf env;

NOINLINE void dive(int depth) {
    if (depth == 0) longjmp(env, 1);
    dive(depth - 1);
    __asm__ volatile("");
}

NOINLINE int catcher(int depth) {
    if (setjmp(env) == 0) dive(depth);
    return depth;
}

NOINLINE void leave_inside(void) {
    fflush(stdout);
    _exit(0);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "ms";
    long n = argc > 2 ? atol(argv[2]) : 10;
    if (!strcmp(mode, "ms")) {
        double total = 0;
        for (long i = 0; i < n; i++) {
            double t = now();
            spin_ms();
            total += now() - t;
        }
        printf("calls %ld\nmean_ns %.0f\n", n, total / n * 1e9);
    } else if (!strcmp(mode, "spin")) {
        /* n calls of spin_for(ns), ns from the third argument; each call spaced by as long. */
        long ns = argc > 3 ? atol(argv[3]) : 2000;
        /* The clock's first use (its symbol bound, its pages mapped) made here, not inside the
         * first call, which is then as long as the others. */
        (void)now();
        for (long i = 0; i < n; i++) {
            spin_for(ns);
            double t = now();
            while ((now() - t) * 1e9 < ns) {
            }
        }
        qsort(spins, nspins, sizeof spins[0], by_value);
        printf("calls %ld\nmean_ns %.1f\np50_ns %.1f\n", n, spun_ns / n,
               nspins ? spins[nspins / 2] : 0.0);
    } else if (!strcmp(mode, "fib")) {
        long reps = argc > 3 ? atol(argv[3]) : 1, r = 0;
        for (long i = 0; i < reps; i++) r += fib((int)n);
        printf("result %ld\n", r);
    } else if (!strcmp(mode, "tiny")) {
        unsigned x = 0;
        double t = now();
        for (long i = 0; i < n; i++) x = tiny(x);
        printf("calls %ld\nseconds %.6f\nx %u\n", n, now() - t, x);
    } else if (!strcmp(mode, "sparse")) {
        /* n calls of tiny, each followed by `gap` microseconds of other work (CPU time: the
         * same work whatever else the machine runs). */
        long gap = argc > 3 ? atol(argv[3]) : 50;
        unsigned x = 0;
        for (long i = 0; i < n; i++) {
            x = tiny(x);
            double t = cpu_now();
            while (cpu_now() - t < gap * 1e-6) {
            }
        }
        printf("calls %ld\nx %u\n", n, x);
    } else if (!strcmp(mode, "steps")) {
        /* n rounds of one call of each step function, then `gap` microseconds of CPU time. */
        long gap = argc > 3 ? atol(argv[3]) : 500;
        unsigned x = 0;
        for (long i = 0; i < n; i++) {
            x = step0(step1(step2(step3(step4(step5(step6(step7(step8(step9(x))))))))));
            double t = cpu_now();
            while (cpu_now() - t < gap * 1e-6) {
            }
        }
        printf("calls %ld\nx %u\n", n, x);
    } else if (!strcmp(mode, "threads")) {
        int threads = argc > 3 ? atoi(argv[3]) : 4;
        pthread_t t[64];
        for (int i = 0; i < threads && i < 64; i++)
            pthread_create(&t[i], NULL, thread_main, (void *)n);
        for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "lib")) {
        /* n calls of the shared library's function and n mallocs of our own. */
        long sum = 0;
        void *p[64];
        for (long i = 0; i < n; i++) {
            sum += lib_work((int)i);
            p[i % 64] = malloc(16 + (size_t)(i % 7));
            if (i % 64 == 63)
                for (int k = 0; k < 64; k++) free(p[k]);
        }
        for (long k = 0; k < n % 64; k++) free(p[k]);
        printf("lib_calls %ld\nmallocs %ld\nsum %ld\n", n, n, sum);
    } else if (!strcmp(mode, "longjmp")) {
        for (long i = 0; i < n; i++) catcher(5);
        printf("catcher %ld\ndive_entries %ld\n", n, n * 6);
    } else if (!strcmp(mode, "exit")) {
        /* Many calls just before the program ends inside a probed function. */
        unsigned x = 0;
        for (long i = 0; i < n; i++) x = work(x);
        printf("work %ld\n", n);
        leave_inside();
    }
    return 0;
}
