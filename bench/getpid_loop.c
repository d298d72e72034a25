// Benchmark workload: fills a sys_enter_getpid tracepoint ring as fast as a syscall loop can
// (about 4.5 M records/s on this machine). A tracepoint in a tight syscall loop is used instead of
// a high-frequency cpu-clock, which livelocks a vCPU. The loop runs three frames deep so that
// callchain records carry a few user frames as well as the kernel ones. It runs until killed,
// or for argv[1] seconds when given.
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static void burst(void) {
  for (int i = 0; i < 4096; i++) sink += syscall(SYS_getpid);
}

__attribute__((noinline)) static void middle(void) { burst(); }

__attribute__((noinline)) static void outer(double seconds) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    middle();
    if (seconds > 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 >= seconds) return;
    }
  }
}

int main(int argc, char **argv) {
  outer(argc > 1 ? atof(argv[1]) : 0);
  return 0;
}
