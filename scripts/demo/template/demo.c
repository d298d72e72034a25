// Ringside demo: a small program worth watching with a flight recorder.
//   - a hot loop that increments a global counter (demo_counter: a good write-watchpoint target, and the
//     increment line a good "Record Hits on This Line" target),
//   - periodic syscalls (getpid, nanosleep) so syscall tracepoints have something to show.
// Usage: ./demo [ROUNDS]   ROUNDS rounds of INCREMENTS_PER_ROUND increments, one getpid and one 10 ms sleep each;
//        without ROUNDS it runs until killed. The loop count is fixed so tests can compare hit counts with it.
// Built by Ringside's demo set-up with: gcc -g -O0 -o demo demo.c
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define INCREMENTS_PER_ROUND 1000

volatile unsigned long demo_counter;   // the global to watch
volatile unsigned long demo_rounds;    // completed rounds

static void hot_loop(void)
{
    for (int i = 0; i < INCREMENTS_PER_ROUND; i++) {
        demo_counter++; // ringside-demo: counter-increment
    }
}

static void breathe(void)
{
    struct timespec pause = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
    (void)getpid();
    nanosleep(&pause, NULL);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    printf("demo: pid %d, %s rounds of %d increments\n", (int)getpid(), rounds < 0 ? "endless" : argv[1], INCREMENTS_PER_ROUND);
    fflush(stdout);
    for (long round = 0; rounds < 0 || round < rounds; round++) {
        hot_loop();
        breathe();
        demo_rounds++;
    }
    printf("demo: done, demo_counter=%lu\n", demo_counter);
    return 0;
}
