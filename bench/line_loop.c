// Benchmark workload for the cost of counting a source line: LOOPS iterations of one marked line, timed by the
// program itself around the loop only (so a probe's set-up, the launch and the probes' removal are not counted),
// printed as "loop_ns LOOPS NS" on stdout. A noinline function call per iteration keeps the line one statement at
// one address, at -O1 as at -O0.
// Usage: line_loop LOOPS
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static void step(long i) {
  sink += i; /* BENCH_LINE */
}

int main(int argc, char **argv) {
  long loops = argc > 1 ? atol(argv[1]) : 1000000;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < loops; i++) step(i);
  clock_gettime(CLOCK_MONOTONIC, &end);
  long long ns = (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
  printf("loop_ns %ld %lld\n", loops, ns);
  return sink == loops * (loops - 1) / 2 ? 0 : 1;
}
