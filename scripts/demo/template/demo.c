// Ringside demo: a small program worth watching with a flight recorder.
//   - the main thread runs a hot loop that increments a global counter (demo_counter: a good write-watchpoint target,
//     and the increment line a good "Record Hits on This Line" target), then makes syscalls (getpid, a 10 ms nanosleep)
//     so syscall tracepoints have something to show;
//   - two named worker threads (demo-fill, demo-hash) spend a few ms of every 10 ms in a chain of user-space functions
//     (worker -> process_batch -> fill_block / checksum_block -> mix), so sampling events land on named threads with
//     symbols and call chains.
// Usage: ./demo [ROUNDS]   ROUNDS rounds of INCREMENTS_PER_ROUND increments, one getpid and one 10 ms sleep each;
//        without ROUNDS it runs until killed. The loop count is fixed so tests can compare hit counts with it. The
//        workers never touch demo_counter or demo_rounds.
// Built by Ringside's demo set-up with: gcc -g -O0 -pthread -o demo demo.c
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define INCREMENTS_PER_ROUND 1000
#define BLOCK_BYTES 4096

volatile unsigned long demo_counter;   // the global to watch
volatile unsigned long demo_rounds;    // completed rounds
static volatile int demo_stop;         // set when the main thread is done

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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct worker {
    const char *name;
    unsigned int seed;
    double busy_ms;        // per 10 ms
    unsigned long result;
    unsigned char block[BLOCK_BYTES];
};

__attribute__((noinline)) static unsigned long mix(unsigned long hash, unsigned char byte)
{
    hash ^= byte;
    return hash * 0x100000001b3UL;
}

__attribute__((noinline)) static unsigned long checksum_block(const unsigned char *block, int length)
{
    unsigned long hash = 0xcbf29ce484222325UL;
    for (int i = 0; i < length; i++) hash = mix(hash, block[i]);
    return hash;
}

__attribute__((noinline)) static void fill_block(unsigned char *block, int length, unsigned int *seed)
{
    for (int i = 0; i < length; i++) {
        *seed = *seed * 1103515245u + 12345u;
        block[i] = (unsigned char)(*seed >> 16);
    }
}

__attribute__((noinline)) static unsigned long process_batch(struct worker *self)
{
    fill_block(self->block, BLOCK_BYTES, &self->seed);
    return checksum_block(self->block, BLOCK_BYTES);
}

static void *worker_main(void *argument)
{
    struct worker *self = argument;
    pthread_setname_np(pthread_self(), self->name);
    while (!demo_stop) {
        double until = now_ms() + self->busy_ms;
        while (now_ms() < until) self->result ^= process_batch(self);
        struct timespec rest = { .tv_sec = 0, .tv_nsec = (long)((10.0 - self->busy_ms) * 1e6) };
        nanosleep(&rest, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    printf("demo: pid %d, %s rounds of %d increments\n", (int)getpid(), rounds < 0 ? "endless" : argv[1], INCREMENTS_PER_ROUND);
    fflush(stdout);
    static struct worker workers[] = { { "demo-fill", 1, 2.0, 0, { 0 } }, { "demo-hash", 2, 1.0, 0, { 0 } } };
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, worker_main, &workers[i]);
    for (long round = 0; rounds < 0 || round < rounds; round++) {
        hot_loop();
        breathe();
        demo_rounds++;
    }
    demo_stop = 1;
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("demo: done, demo_counter=%lu\n", demo_counter);
    return 0;
}
