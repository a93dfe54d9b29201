// benchmarks/scale.sh's measurements inside its guests (built static by it):
//
// guestbench opencost ROUNDS: where counter set-up time goes as the CPU count grows. Opens four
//   software events on a held child, per CPU (pid = child, cpu = each online CPU, as arum's
//   per-CPU breakdown) and per task (pid = child, cpu = -1, as perf stat), and prints each
//   phase's microseconds. The first open after a pause also pays for enabling perf's scheduler
//   hooks (a static key, then an RCU grace period): perf keeps them on for a second after the
//   last counter closes.
// guestbench spawn ROUNDS PER_ROUND NAME CMD... [::: NAME CMD...]: each command's mean wall time
//   per run in microseconds, the commands taking turns (PER_ROUND runs each, ROUNDS times) so
//   that a guest that slows down affects all alike; the commands' output goes to /dev/null.
// guestbench cpu CMD...: runs CMD once; its wall time and the CPU time (user + system) of its
//   whole tree, in microseconds.
// guestbench threads N SECONDS: N threads that sleep SECONDS (a program with many threads for
//   the samplers to walk).
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int open_one(unsigned long long config, pid_t pid, int cpu) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = config;
  a.disabled = 1;
  a.inherit = 1;
  a.enable_on_exec = 1;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
}

// One measured round: opens the four events on `ncpu` slots (cpu -1 when ncpu is 0) for a
// child that waits on a pipe, lets it exec `true`, reaps it, closes. Prints the phases.
static void round_of(const char *mode, int ncpu) {
  static const unsigned long long ev[4] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
                                           PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS};
  int go[2];
  if (pipe(go)) exit(1);
  pid_t child = fork();
  if (child == 0) {
    char c;
    close(go[1]);
    if (read(go[0], &c, 1) != 1) _exit(1);
    execl("/bin/true", "true", (char *)0);
    _exit(127);
  }
  close(go[0]);
  int fds[4 * 256], n = 0, slots = ncpu ? ncpu : 1;
  double t0 = now_us(), first = 0;
  for (int e = 0; e < 4; e++)
    for (int s = 0; s < slots; s++) {
      fds[n] = open_one(ev[e], child, ncpu ? s : -1);
      if (fds[n] < 0) { perror("perf_event_open"); exit(1); }
      if (n++ == 0) first = now_us() - t0;
    }
  double opened = now_us();
  close(go[1]);
  waitpid(child, 0, 0);
  double reaped = now_us();
  for (int i = 0; i < n; i++) close(fds[i]);
  double closed = now_us();
  printf("opencost mode=%s counters=%d first_us=%.0f open_us=%.0f run_us=%.0f close_us=%.0f\n", mode,
         n, first, opened - t0, reaped - opened, closed - reaped);
}

static int opencost(int rounds) {
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu > 256) ncpu = 256;
  for (int r = 0; r < rounds; r++) {
    round_of("per-cpu", ncpu);
    round_of("per-task", 0);
  }
  return 0;
}

// Runs argv once with its output on /dev/null; its wall time in microseconds, and its tree's
// CPU time in `cpu_us` when not null.
static double run_measured(char **argv, double *cpu_us) {
  double t0 = now_us();
  pid_t p = fork();
  if (p == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  struct rusage ru;
  wait4(p, &status, 0, &ru);
  double wall = now_us() - t0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "guestbench: %s failed (status %d)\n", argv[0], status);
    exit(1);
  }
  if (cpu_us)
    *cpu_us = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
              ru.ru_stime.tv_usec;
  return wall;
}

static double run_once(char **argv) { return run_measured(argv, 0); }

static void *sleeper(void *arg) {
  sleep(*(int *)arg);
  return 0;
}

static int threads(int n, int seconds) {
  pthread_t *t = calloc(n, sizeof *t);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < n; i++)
    if (pthread_create(&t[i], &attr, sleeper, &seconds)) { perror("pthread_create"); return 1; }
  for (int i = 0; i < n; i++) pthread_join(t[i], 0);
  return 0;
}

static int spawn(int rounds, int per_round, int argc, char **argv) {
  char *names[16];
  char **cmds[16];
  double total[16] = {0};
  int n = 0;
  for (int i = 0; i < argc && n < 16;) {
    names[n] = argv[i++];
    cmds[n] = &argv[i];
    while (i < argc && strcmp(argv[i], ":::") != 0) i++;
    if (i < argc) argv[i++] = 0;
    n++;
  }
  for (int c = 0; c < n; c++) run_once(cmds[c]);  // the page cache, perf's hooks
  for (int r = 0; r < rounds; r++)
    for (int c = 0; c < n; c++)
      for (int k = 0; k < per_round; k++) total[c] += run_once(cmds[c]);
  for (int c = 0; c < n; c++)
    printf("spawn name=%s runs=%d mean_us=%.1f\n", names[c], rounds * per_round,
           total[c] / (rounds * per_round));
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "opencost") == 0) return opencost(atoi(argv[2]));
  if (argc >= 6 && strcmp(argv[1], "spawn") == 0)
    return spawn(atoi(argv[2]), atoi(argv[3]), argc - 4, argv + 4);
  if (argc >= 3 && strcmp(argv[1], "cpu") == 0) {
    double cpu, wall = run_measured(argv + 2, &cpu);
    printf("cpu wall_us=%.0f cpu_us=%.0f\n", wall, cpu);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "threads") == 0) return threads(atoi(argv[2]), atoi(argv[3]));
  fprintf(stderr, "usage: guestbench opencost ROUNDS | spawn ROUNDS PER_ROUND NAME CMD... [::: NAME "
                  "CMD...] | cpu CMD... | threads N SECONDS\n");
  return 2;
}
