// What arming and cancelling a short timer costs a wait (BENCHMARKS.md, "Not the cause: the
// wait's timer"): a thread polls a pipe that a second thread on its CPU writes, 20,000 cycles,
// with the poll's timeout (ms) from argv[1] (-1: none) and, with argv[2], that timer slack (ns,
// PR_SET_TIMERSLACK). Prints the polling thread's CPU time per cycle. Not built by cargo:
//
//   gcc -O2 -o timer_cost record/benches/timer_cost.c -lpthread
//   ./timer_cost -1; ./timer_cost 1; ./timer_cost 1 5000000; ./timer_cost 1000
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
static int p[2], q[2];
static int N = 20000;
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); sched_setaffinity(0, sizeof s, &s); }
static void *waker(void *a) { pin(0); char b = 0; for (int i = 0; i < N; i++) { write(p[1], &b, 1); read(q[0], &b, 1); } return 0; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  int timeout = atoi(argv[1]);
  if (argc > 2) prctl(PR_SET_TIMERSLACK, atol(argv[2]), 0, 0, 0);
  pipe(p); pipe(q); pin(0);
  pthread_t t; pthread_create(&t, 0, waker, 0);
  struct pollfd f = { .fd = p[0], .events = POLLIN };
  double c0 = cpu(); char b;
  for (int i = 0; i < N; i++) { poll(&f, 1, timeout); read(p[0], &b, 1); write(q[1], &b, 1); }
  double c1 = cpu();
  pthread_join(t, 0);
  printf("timeout %d slack %s: %.2f us cpu per cycle (this thread)\n", timeout, argc > 2 ? argv[2] : "default", (c1 - c0) / N * 1e6);
}
