// Ringside demo: a small multi-threaded program worth watching with a flight recorder.
//   - main: a hot loop that increments a global counter (demo_counter: a good write-watchpoint target, and the
//     increment line a good "Record Hits on This Line" target), then one getpid and one 10 ms nanosleep per round;
//   - three named worker threads that spend real CPU time in user-space functions a few calls deep, so task-clock
//     samples land in named functions with call chains worth reading:
//       parser  tokenizes a generated text and counts words (parse_text → parse_line → next_token → word_hash),
//       hasher  hashes blocks of a buffer (hash_buffer → hash_block → mix64),
//       logger  formats log lines about main's progress and writes them to /dev/null (log_progress → format_line →
//               format_number); it reads demo_counter and demo_rounds but never writes them.
//     Each works about 3 ms of CPU time, then sleeps 20 ms: together about 40% of one CPU.
// Usage: ./demo [ROUNDS]   main runs ROUNDS rounds of INCREMENTS_PER_ROUND increments, one getpid and one 10 ms sleep
//        each, then stops the workers and exits; without ROUNDS it runs until killed. Only main writes demo_counter and
//        demo_rounds, and the loop count is fixed, so tests can compare hit counts with it.
// Built by Ringside's demo set-up with: gcc -g -O0 -pthread -o demo demo.c
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INCREMENTS_PER_ROUND 1000

volatile unsigned long demo_counter;   // the global to watch: only main writes it
volatile unsigned long demo_rounds;    // completed rounds: only main writes it, once a round (the workspace's default recording watches it)

static volatile int workers_stop;      // set by main once its rounds are done

// ---- main's work ----------------------------------------------------------------------------------------------

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

// ---- shared by the workers ------------------------------------------------------------------------------------

static uint64_t thread_cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/** Runs `step` until this thread used `burst_ms` of CPU time, sleeps `pause_ms`, until main says stop. */
static void work_in_bursts(void (*step)(void *), void *state, int burst_ms, int pause_ms)
{
    struct timespec pause = { .tv_sec = 0, .tv_nsec = pause_ms * 1000L * 1000L };
    while (!workers_stop) {
        uint64_t until = thread_cpu_ns() + (uint64_t)burst_ms * 1000000u;
        while (thread_cpu_ns() < until && !workers_stop) step(state);
        nanosleep(&pause, NULL);
    }
}

static uint64_t next_random(uint64_t *seed)
{
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    return *seed;
}

// ---- parser: tokenizes a generated text -----------------------------------------------------------------------

#define TEXT_BYTES (64 * 1024)
#define WORD_SLOTS 1024

struct parser {
    char text[TEXT_BYTES];
    unsigned counts[WORD_SLOTS];
    unsigned long words;
};

static void generate_text(char *text, size_t size)
{
    static const char *const words[] = {
        "ring", "sample", "thread", "kernel", "perf", "event", "callchain", "symbol", "snapshot", "watch",
        "counter", "lane", "timeline", "record", "overwrite", "page", "buffer", "signal", "task", "clock",
    };
    uint64_t seed = 0x9e3779b97f4a7c15u;
    size_t at = 0;
    while (at + 16 < size) {
        const char *word = words[next_random(&seed) % (sizeof words / sizeof words[0])];
        size_t length = strlen(word);
        memcpy(text + at, word, length);
        at += length;
        text[at++] = next_random(&seed) % 9 == 0 ? '\n' : ' ';
    }
    text[at] = '\0';
}

static unsigned word_hash(const char *word, size_t length)
{
    unsigned hash = 2166136261u;
    for (size_t i = 0; i < length; i++) hash = (hash ^ (unsigned char)word[i]) * 16777619u;
    return hash;
}

/** The next word at or after *at, or NULL at the end of the line; *length is its length. */
static const char *next_token(const char **at, size_t *length)
{
    const char *p = *at;
    while (*p == ' ') p++;
    if (*p == '\n' || *p == '\0') {
        *at = p;
        return NULL;
    }
    const char *start = p;
    while (*p != ' ' && *p != '\n' && *p != '\0') p++;
    *length = (size_t)(p - start);
    *at = p;
    return start;
}

static const char *parse_line(struct parser *parser, const char *line)
{
    const char *at = line;
    size_t length;
    const char *word;
    while ((word = next_token(&at, &length)) != NULL) {
        parser->counts[word_hash(word, length) % WORD_SLOTS]++;
        parser->words++;
    }
    return *at == '\n' ? at + 1 : at;
}

static void parse_text(void *state)
{
    struct parser *parser = state;
    const char *line = parser->text;
    while (*line != '\0') line = parse_line(parser, line);
}

static void *parser_main(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "parser");
    static struct parser parser;
    generate_text(parser.text, sizeof parser.text);
    work_in_bursts(parse_text, &parser, 3, 20);
    return NULL;
}

// ---- hasher: hashes blocks of a buffer ------------------------------------------------------------------------

#define BLOCK_BYTES 4096
#define BLOCKS 16

struct hasher {
    uint64_t data[BLOCKS][BLOCK_BYTES / sizeof(uint64_t)];
    uint64_t digest;
};

static uint64_t mix64(uint64_t hash, uint64_t word)
{
    hash ^= word;
    hash *= 0xff51afd7ed558ccdu;
    hash ^= hash >> 33;
    return hash;
}

static uint64_t hash_block(const uint64_t *block, size_t words)
{
    uint64_t hash = 0xcbf29ce484222325u;
    for (size_t i = 0; i < words; i++) hash = mix64(hash, block[i]);
    return hash;
}

static void hash_buffer(void *state)
{
    struct hasher *hasher = state;
    for (int b = 0; b < BLOCKS; b++) {
        uint64_t hash = hash_block(hasher->data[b], BLOCK_BYTES / sizeof(uint64_t));
        hasher->data[b][hash % (BLOCK_BYTES / sizeof(uint64_t))] ^= hash;   // each pass hashes different bytes
        hasher->digest ^= hash;
    }
}

static void *hasher_main(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "hasher");
    static struct hasher hasher;
    uint64_t seed = 42;
    for (int b = 0; b < BLOCKS; b++)
        for (size_t i = 0; i < BLOCK_BYTES / sizeof(uint64_t); i++) hasher.data[b][i] = next_random(&seed);
    work_in_bursts(hash_buffer, &hasher, 3, 20);
    return NULL;
}

// ---- logger: formats lines about main's progress, writes them to /dev/null ------------------------------------

struct logger {
    int fd;
    unsigned long lines;
};

/** Writes `value` in decimal at `out`; returns the number of characters. */
static size_t format_number(char *out, unsigned long value)
{
    char digits[24];
    size_t count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (size_t i = 0; i < count; i++) out[i] = digits[count - 1 - i];
    return count;
}

static size_t append(char *out, const char *text)
{
    size_t length = strlen(text);
    memcpy(out, text, length);
    return length;
}

static size_t format_line(char *out, unsigned long line, unsigned long rounds, unsigned long counter)
{
    size_t at = 0;
    at += append(out + at, "demo[");
    at += format_number(out + at, line);
    at += append(out + at, "] rounds=");
    at += format_number(out + at, rounds);
    at += append(out + at, " demo_counter=");
    at += format_number(out + at, counter);
    out[at++] = '\n';
    return at;
}

static void log_progress(void *state)
{
    struct logger *logger = state;
    char lines[4096];
    size_t at = 0;
    while (at + 80 < sizeof lines) at += format_line(lines + at, ++logger->lines, demo_rounds, demo_counter);
    if (write(logger->fd, lines, at) < 0) logger->fd = -1;
}

static void *logger_main(void *unused)
{
    (void)unused;
    pthread_setname_np(pthread_self(), "logger");
    struct logger logger = { .fd = open("/dev/null", O_WRONLY | O_CLOEXEC), .lines = 0 };
    if (logger.fd >= 0) work_in_bursts(log_progress, &logger, 3, 20);
    if (logger.fd >= 0) close(logger.fd);
    return NULL;
}

// ---- main ------------------------------------------------------------------------------------------------------

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    printf("demo: pid %d, %s rounds of %d increments\n", (int)getpid(), rounds < 0 ? "endless" : argv[1], INCREMENTS_PER_ROUND);
    fflush(stdout);
    void *(*const workers[])(void *) = { parser_main, hasher_main, logger_main };
    pthread_t threads[sizeof workers / sizeof workers[0]];
    size_t started = 0;
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++)
        if (pthread_create(&threads[started], NULL, workers[i], NULL) == 0) started++;
    for (long round = 0; rounds < 0 || round < rounds; round++) {
        hot_loop();
        breathe();
        demo_rounds++; // ringside-demo: round-done
    }
    workers_stop = 1;
    for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
    printf("demo: done, demo_counter=%lu\n", demo_counter);
    return 0;
}
