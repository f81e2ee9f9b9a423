// What one wakeup costs a task that preempts a sampled workload (BENCHMARKS.md, "perfring-record
// beside perf record under load"): a sleeper pinned to CPU 0, woken every 300 us by a waker on
// CPU 1 through a pipe, 10,000 times; prints the sleeper's sum_exec_runtime per wakeup
// (/proc/thread-self/schedstat, what /proc/PID/stat's CPU time is made of) and its thread CPU
// time; WORK=N adds a loop of N iterations to each wakeup. Not built by cargo:
//
//   gcc -O2 -o wakeup_cost record/benches/wakeup_cost.c -lpthread
//   echo 'int main(void){volatile unsigned long x=0;for(;;)x++;}' > spin.c && gcc -O2 -o spin spin.c
//   ./wakeup_cost                                        # CPU 0 idle
//   taskset -c 1 perf record -q -e cpu-clock -c 10000 -o /dev/null -- taskset -c 0 ./spin &
//   ./wakeup_cost; WORK=20000 ./wakeup_cost; pkill -x spin   # CPU 0 running a task sampled at 100 kHz
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p[2];
static const int N = 10000;
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); sched_setaffinity(0, sizeof s, &s); }
static void *waker(void *a) {
  pin(1); char b = 0;
  for (int i = 0; i < N; i++) { struct timespec t = {0, 300000}; nanosleep(&t, 0); write(p[1], &b, 1); }
  return 0;
}
static unsigned long long sched_ns(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r"); unsigned long long a = 0; fscanf(f, "%llu", &a); fclose(f); return a;
}
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
  pipe(p); pin(0);
  pthread_t t; pthread_create(&t, 0, waker, 0);
  struct pollfd f = { .fd = p[0], .events = POLLIN };
  unsigned long long s0 = sched_ns(); double c0 = cpu(); char b;
  long W = getenv("WORK") ? atol(getenv("WORK")) : 0;
  for (int i = 0; i < N; i++) { poll(&f, 1, -1); read(p[0], &b, 1); for (volatile long k = 0; k < W; k++); }
  unsigned long long s1 = sched_ns(); double c1 = cpu();
  pthread_join(t, 0);
  printf("sum_exec %.1f us per wakeup, thread cputime %.1f us\n", (s1 - s0) / 1e3 / N, (c1 - c0) / 1e3 / N);
}
