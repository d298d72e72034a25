// The baseline of the snapshot's pause window: what C does in the same window on the same ring.
// It maps the perf event the bench opened (inherited as fd 3, the same ring Ringside maps; the kernel
// lets one event be mapped again at the same size and protection), then per run: PAUSE_OUTPUT ->
// read data_head -> copy what was written, linearised from data_head, into a buffer faulted in
// beforehand -> resume. That is Ringside's snapshot with nothing of JavaScript or koffi around it,
// so "pause window / this" is the overhead of the product's window, not of the memcpy.
//
//   pause_copy DATA_PAGES serve      reads "RUNS WARMUP" lines on stdin, answers each with
//                                    {"median_ns":N,"bytes":B} (bytes copied in the last run)
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RING_FD 3

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[2], "serve") != 0) {
    fprintf(stderr, "usage: pause_copy DATA_PAGES serve (the perf event as fd 3)\n");
    return 2;
  }
  long page = sysconf(_SC_PAGESIZE);
  size_t data_size = (size_t)strtoull(argv[1], NULL, 10) * (size_t)page;
  if (data_size == 0 || (data_size & (data_size - 1)) != 0) {
    fprintf(stderr, "pause_copy: DATA_PAGES must be a power of two, got %s\n", argv[1]);
    return 2;
  }
  uint8_t *base = mmap(NULL, data_size + (size_t)page, PROT_READ, MAP_SHARED, RING_FD, 0);
  if (base == MAP_FAILED) {
    perror("pause_copy: mmap of the perf event on fd 3");
    return 1;
  }
  struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)base;
  const uint8_t *data = base + meta->data_offset;
  // The copy's destination is written once before any run: the product copies into a spare it
  // faulted in while idle, so page faults belong to neither side's window.
  uint8_t *copy = malloc(data_size);
  if (!copy) return 1;
  memset(copy, 1, data_size);

  unsigned runs, warmup;
  while (scanf("%u %u", &runs, &warmup) == 2) {
    if (runs == 0) runs = 1;
    uint64_t *times = calloc(runs, sizeof *times);
    size_t bytes = 0;
    for (unsigned i = 0; i < warmup + runs; i++) {
      uint64_t started = now_ns();
      if (ioctl(RING_FD, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) != 0) {
        perror("pause_copy: PERF_EVENT_IOC_PAUSE_OUTPUT");
        return 1;
      }
      uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
      // Backward ring: data_head counts down from 0, so what was written is -head (mod 2^64).
      uint64_t written = (uint64_t)0 - head;
      size_t valid = written >= data_size ? data_size : (size_t)written;
      size_t start = (size_t)(head & (data_size - 1));
      size_t first = data_size - start < valid ? data_size - start : valid;
      memcpy(copy, data + start, first);
      memcpy(copy + first, data, valid - first);
      ioctl(RING_FD, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
      uint64_t elapsed = now_ns() - started;
      if (i >= warmup) times[i - warmup] = elapsed;
      bytes = valid;
    }
    qsort(times, runs, sizeof *times, compare_u64);
    printf("{\"median_ns\":%llu,\"bytes\":%zu}\n", (unsigned long long)times[runs / 2], bytes);
    fflush(stdout);
    free(times);
  }
  return 0;
}
