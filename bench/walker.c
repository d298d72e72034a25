// The C baseline for decode_vs_c: walks a linearised backward-ring copy (the bytes Ringside's
// decoder gets, read from a file) and extracts the same per-record columns the decoder produces:
// kind, misc, event (sample id -> event index), pid, tid, cpu, ip (two u32 halves), ring, offset
// and time relative to the oldest time (as a double), oldest record first. It computes the field
// offsets from sample_type itself, like perf does, and times itself with clock_gettime.
//
// usage: walker FILE SAMPLE_TYPE RING_CPU RUNS WARMUP ID:EVENT...
// prints one JSON line: records, per-run ns, and checksums the bench compares with the decoder's.
// With RUNS = serve (WARMUP ignored) it reads "RUNS WARMUP FRESH" lines from stdin and answers each
// with such a line: the bench starts it once per case, because spawning a process from the bench
// (fork) write-protects the bench's own pages and would slow the decoder it alternates with.
//
// The baseline is the best this layout allows in C: the columns are allocated and first-touched
// once, before any timing, and reused by every run; ONE pass over the bytes writes each record
// straight to its oldest-first row (the copy is newest first, so rows fill from the end). Times are
// written as doubles relative to the time of the probable oldest record (found without walking, as
// the decoder finds it: oldest_record_start), so they need no second pass unless that guess was not
// the smallest time; runs of samples of one event with every field present go through a loop with no
// per-field test, which takes the next record's place from the size before (a predicted branch, not a
// wait for the header's load). The same tricks as Ringside's decoder: a baseline without them would
// flatter it.
// FRESH = 1 measures instead what it costs to allocate and first-touch the columns inside the timed
// region (page faults), the way a decoder without reusable columns pays it.
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
  S_IP = 1 << 0, S_TID = 1 << 1, S_TIME = 1 << 2, S_ADDR = 1 << 3, S_ID = 1 << 6, S_CPU = 1 << 7,
  S_PERIOD = 1 << 8, S_STREAM_ID = 1 << 9, S_IDENTIFIER = 1 << 16,
};
enum { R_MMAP = 1, R_LOST = 2, R_COMM = 3, R_EXIT = 4, R_THROTTLE = 5, R_UNTHROTTLE = 6, R_FORK = 7,
  R_READ = 8, R_SAMPLE = 9, R_MMAP2 = 10, R_ITRACE_START = 12, R_NAMESPACES = 16 };

struct columns {
  uint8_t *kind; uint16_t *misc; uint16_t *event; int32_t *pid, *tid, *cpu;
  uint32_t *ip_hi, *ip_lo, *offset; uint16_t *ring; double *time;
};

static uint64_t ids[64];
static int id_events[64];
static int id_count;

static int lookup(uint64_t id) {
  for (int i = 0; i < id_count; i++) if (ids[i] == id) return id_events[i];
  return -1;
}

// The columns in one block, each starting on a page boundary plus 320 bytes times its place (widest
// first), as the decoder lays out a column set (native/decode/column-set.ts, columnOffsets). Eleven
// separate mallocs put every column at the same offset within a page, so row i of each falls into
// one cache set: on an 8-way L1 (AMD Zen 3) that ran 2.9x slower at 64 MiB than staggered.
enum { PAGE = 4096, COLUMN_STAGGER = 320 };

static size_t column_start(size_t at, int place) {
  return ((at + PAGE - 1) & ~(size_t)(PAGE - 1)) + (size_t)place * COLUMN_STAGGER;
}

static struct columns alloc_columns(size_t n) {
  // Widest first: time, then the 4-byte, 2-byte and 1-byte columns.
  const size_t widths[11] = { 8, 4, 4, 4, 4, 4, 4, 2, 2, 2, 1 };
  size_t starts[11], at = 0;
  for (int k = 0; k < 11; k++) { starts[k] = column_start(at, k); at = starts[k] + n * widths[k]; }
  uint8_t *block = aligned_alloc(PAGE, (at + PAGE - 1) & ~(size_t)(PAGE - 1));
  struct columns c = {
    .time = (double *)(block + starts[0]), .pid = (int32_t *)(block + starts[1]), .tid = (int32_t *)(block + starts[2]),
    .cpu = (int32_t *)(block + starts[3]), .ip_hi = (uint32_t *)(block + starts[4]), .ip_lo = (uint32_t *)(block + starts[5]),
    .offset = (uint32_t *)(block + starts[6]), .misc = (uint16_t *)(block + starts[7]), .event = (uint16_t *)(block + starts[8]),
    .ring = (uint16_t *)(block + starts[9]), .kind = block + starts[10],
  };
  return c;
}

/** Writes every page of every column once, so the timed runs take no page fault. */
static void touch_columns(struct columns *c, size_t n) {
  memset(c->kind, 0, n); memset(c->misc, 0, n * 2); memset(c->event, 0, n * 2); memset(c->pid, 0, n * 4);
  memset(c->tid, 0, n * 4); memset(c->cpu, 0, n * 4); memset(c->ip_hi, 0, n * 4); memset(c->ip_lo, 0, n * 4);
  memset(c->offset, 0, n * 4); memset(c->ring, 0, n * 2); memset(c->time, 0, n * 8);
}

static void free_columns(struct columns *c) {
  free(c->time);  // the block's start: time is its first column
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int whole_record(const uint8_t *bytes, size_t at, size_t end) {
  if (at + 8 > end) return 0;
  size_t size = *(const uint16_t *)(bytes + at + 6);
  return size >= 8 && !(size & 7) && at + size <= end;
}

// Where the oldest whole record starts, found without walking to it, as the decoder finds it
// (decode-ring.ts, sampleSizesAtStart and oldestRecordStart): a SAMPLE whose end leaves no whole
// record before the end, carrying the newest sample's id (at o_ident) or else of one of the sizes of
// the first samples; tried where it would be if every record had one size, then at each 8-byte
// boundary of the two largest record lengths (by id: of ID_SEARCH_BYTES at least) before the end.
enum { SIZES_SAMPLED = 4, ID_SEARCH_BYTES = 4096 };

static int oldest_fits(const uint8_t *bytes, size_t at, size_t end, const size_t *sizes, int n, int o_ident, int by_id, uint64_t id) {
  if (at + 8 > end || *(const uint32_t *)(bytes + at) != R_SAMPLE) return 0;
  size_t size = *(const uint16_t *)(bytes + at + 6);
  if (size < 8 || (size & 7) || at + size > end) return 0;
  if (by_id) {
    if (size < (size_t)o_ident + 8 || *(const uint64_t *)(bytes + at + o_ident) != id) return 0;
  } else {
    int known = 0;
    for (int k = 0; k < n; k++) known |= sizes[k] == size;
    if (!known) return 0;
  }
  return !whole_record(bytes, at + size, end);
}

static long oldest_record_start(const uint8_t *bytes, size_t end, int o_ident) {
  size_t sizes[SIZES_SAMPLED + 1];
  int n = 0;
  sizes[n++] = *(const uint16_t *)(bytes + 6);
  for (size_t at = 0, k = 0; k < SIZES_SAMPLED && whole_record(bytes, at, end); k++) {
    size_t size = *(const uint16_t *)(bytes + at + 6);
    int known = 0;
    for (int j = 0; j < n; j++) known |= sizes[j] == size;
    if (*(const uint32_t *)(bytes + at) == R_SAMPLE && !known) sizes[n++] = size;
    at += size;
  }
  const int by_id = o_ident >= 0 && *(const uint32_t *)bytes == R_SAMPLE && sizes[0] >= (size_t)o_ident + 8 && !(o_ident & 3);
  const uint64_t id = by_id ? *(const uint64_t *)(bytes + o_ident) : 0;
  size_t smallest = sizes[0], largest = sizes[0];
  for (int k = 0; k < n; k++) {
    if (sizes[k] < 8) continue;
    if (sizes[k] < smallest) smallest = sizes[k];
    if (sizes[k] > largest) largest = sizes[k];
    size_t guess = (end / sizes[k] - 1) * sizes[k];
    if (end / sizes[k] >= 2 && oldest_fits(bytes, guess, end, sizes, n, o_ident, by_id, id)) return (long)guess;
  }
  if (end < smallest) return -1;
  size_t searched = by_id && 2 * largest < ID_SEARCH_BYTES ? ID_SEARCH_BYTES : 2 * largest;
  for (long at = (long)((end - (by_id ? 8 : smallest)) & ~(size_t)7); at > 0 && at + (long)searched >= (long)end; at -= 8)
    if (oldest_fits(bytes, (size_t)at, end, sizes, n, o_ident, by_id, id)) return at;
  return -1;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 6) { fprintf(stderr, "usage: walker FILE SAMPLE_TYPE RING_CPU RUNS WARMUP ID:EVENT...\n"); return 2; }
  const char *file = argv[1];
  uint64_t sample_type = strtoull(argv[2], NULL, 0);
  int ring_cpu = atoi(argv[3]);
  int serve = strcmp(argv[4], "serve") == 0;
  int runs = serve ? 0 : atoi(argv[4]), warmup = serve ? 0 : atoi(argv[5]);
  for (int i = 6; i < argc && id_count < 64; i++) {
    char *colon = strchr(argv[i], ':');
    if (!colon) { fprintf(stderr, "bad id %s\n", argv[i]); return 2; }
    ids[id_count] = strtoull(argv[i], NULL, 0);
    id_events[id_count++] = atoi(colon + 1);
  }

  int fd = open(file, O_RDONLY);
  if (fd < 0) { perror(file); return 1; }
  struct stat st;
  fstat(fd, &st);
  size_t end = (size_t)st.st_size;
  uint8_t *bytes = aligned_alloc(64, (end + 63) & ~(size_t)63);
  for (size_t got = 0; got < end;) {
    ssize_t n = read(fd, bytes + got, end - got);
    if (n <= 0) { perror("read"); return 1; }
    got += (size_t)n;
  }
  close(fd);

  // Fixed-prefix offsets of a SAMPLE (the fields that come before any variable-length block).
  int off = 8, o_ident = -1, o_ip = -1, o_pidtid = -1, o_time = -1, o_cpu = -1;
  if (sample_type & S_IDENTIFIER) { o_ident = off; off += 8; }
  if (sample_type & S_IP) { o_ip = off; off += 8; }
  if (sample_type & S_TID) { o_pidtid = off; off += 8; }
  if (sample_type & S_TIME) { o_time = off; off += 8; }
  if (sample_type & S_ADDR) off += 8;
  if (sample_type & S_ID) { if (o_ident < 0) o_ident = off; off += 8; }
  if (sample_type & S_STREAM_ID) off += 8;
  if (sample_type & S_CPU) { o_cpu = off; off += 8; }
  if (sample_type & S_PERIOD) off += 8;
  int sample_min = off;
  const int all_fields = o_ip >= 0 && o_pidtid >= 0 && o_time >= 0 && o_cpu >= 0;
  // sample_id_all trailer, distances from the record's end: TID TIME ID STREAM_ID CPU IDENTIFIER.
  int trailer = 0, t_pidtid = -1, t_time = -1, t_cpu = -1, t_ident = -1;
  {
    int fields[6] = { S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER };
    int pos[6] = { -1, -1, -1, -1, -1, -1 };
    for (int i = 0; i < 6; i++) if (sample_type & fields[i]) { pos[i] = trailer; trailer += 8; }
    if (pos[0] >= 0) t_pidtid = trailer - pos[0];
    if (pos[1] >= 0) t_time = trailer - pos[1];
    if (pos[4] >= 0) t_cpu = trailer - pos[4];
    if (pos[5] >= 0) t_ident = trailer - pos[5]; else if (pos[2] >= 0) t_ident = trailer - pos[2];
  }

  // Room for the most records the bytes can hold (8 bytes each): allocated and first-touched here,
  // outside every timed region, and reused by every warm run.
  const size_t cap = (end >> 3) + 1;
  struct columns warm = alloc_columns(cap);
  touch_columns(&warm, cap);
  int fresh = 0;
  for (;;) {
    if (serve && scanf("%d %d %d", &runs, &warmup, &fresh) != 3) break;
    if (runs < 1) { fprintf(stderr, "walker: RUNS must be >= 1\n"); return 2; }
    double *run_ns = calloc((size_t)runs, sizeof(double));
    size_t records = 0;
    // Integer checksums wrap at 2^32 on both sides: a 256 MiB ring's ipLo sum passes 2^53, past what a JS number holds exactly.
    uint32_t sum_tid = 0, sum_cpu = 0, sum_event = 0, sum_ip_lo = 0, sum_ip_hi = 0, sum_kind = 0, sum_offset = 0;
    double sum_time = 0;
    for (int run = -warmup; run < runs; run++) {
      double started = now_ns();
      struct columns c = fresh ? alloc_columns(cap) : warm;
      uint64_t last_id = 0; int last_event = -1;
      // The time base: the probable oldest record's time (see the top of this file).
      uint64_t base = 0; int have_base = 0;
      if (end >= 8 && o_time >= 0 && *(const uint16_t *)(bytes + 6) >= 8) {
        long guess = oldest_record_start(bytes, end, o_ident);
        if (guess > 0) {
          const uint8_t *g = bytes + guess;
          size_t size = *(const uint16_t *)(g + 6);
          if (size >= (size_t)sample_min) { base = *(const uint64_t *)(g + o_time); have_base = 1; }
        }
      }
      double smallest = __builtin_inf();
      size_t i = cap;  // rows fill from the end: the copy is newest first, the columns oldest first
      for (size_t o = 0; o + 8 <= end;) {
        if (all_fields && have_base && (o_ident < 0 || last_event >= 0)) {
          // Samples of the event of the sample before, every field present: no test per field.
          const uint16_t event = (uint16_t)(o_ident < 0 ? 0 : last_event);
          size_t expected = 0;
          while (o + 8 <= end) {
            const uint8_t *r = bytes + o;
            uint16_t size = *(const uint16_t *)(r + 6);
            if (*(const uint32_t *)r != R_SAMPLE || size < sample_min || (size & 7) || o + size > end) break;
            if (o_ident >= 0 && *(const uint64_t *)(r + o_ident) != last_id) break;
            i--;
            c.kind[i] = R_SAMPLE;
            c.misc[i] = *(const uint16_t *)(r + 4);
            c.event[i] = event;
            c.ring[i] = 0;
            c.offset[i] = (uint32_t)o;
            double t = (double)(int64_t)(*(const uint64_t *)(r + o_time) - base);
            c.time[i] = t;
            smallest = t < smallest ? t : smallest;
            c.pid[i] = *(const int32_t *)(r + o_pidtid);
            c.tid[i] = *(const int32_t *)(r + o_pidtid + 4);
            c.cpu[i] = *(const int32_t *)(r + o_cpu);
            c.ip_lo[i] = *(const uint32_t *)(r + o_ip);
            c.ip_hi[i] = *(const uint32_t *)(r + o_ip + 4);
            // The next record's place from the size before, not from this record's header: a branch
            // the CPU predicts instead of a load it waits for (the asm keeps the compiler from
            // folding it back into o += size). The decoder's sample run does the same.
            if (__builtin_expect(size != expected, 0)) {
              expected = size;
              __asm__ volatile("" : "+r"(expected));
            }
            o += expected;
          }
          if (o + 8 > end) break;
        }
        const uint8_t *r = bytes + o;
        uint16_t size = *(const uint16_t *)(r + 6);
        if (size < 8 || (size & 7) || o + size > end) break;
        i--;
        uint32_t type = *(const uint32_t *)r;
        uint16_t misc = *(const uint16_t *)(r + 4);
        int event = 0, t = -1, pt = -1, cp = -1, ipo = -1;
        c.pid[i] = -1; c.tid[i] = -1; c.ip_hi[i] = 0; c.ip_lo[i] = 0;
        if (type == R_SAMPLE) {
          if (o_ident >= 0 && o_ident + 8 <= size) {
            uint64_t id = *(const uint64_t *)(r + o_ident);
            if (id == last_id && last_event >= 0) event = last_event;
            else { int e = lookup(id); if (e >= 0) { event = e; last_id = id; last_event = e; } }
          }
          if (size >= sample_min) { t = o_time; pt = o_pidtid; cp = o_cpu; ipo = o_ip; }
        } else {
          if (t_ident >= 0 && size >= 8 + t_ident) { int e = lookup(*(const uint64_t *)(r + size - t_ident)); if (e >= 0) event = e; }
          if (trailer > 0 && size >= 8 + trailer) {
            if (t_time >= 0) t = size - t_time;
            if (t_pidtid >= 0) pt = size - t_pidtid;
            if (t_cpu >= 0) cp = size - t_cpu;
          }
          switch (type) {
            case R_MMAP: case R_COMM: case R_MMAP2: case R_ITRACE_START: case R_READ: case R_NAMESPACES:
              if (size >= 16) pt = 8;
              break;
            case R_FORK: case R_EXIT:
              if (size >= 32) { c.pid[i] = *(const int32_t *)(r + 8); c.tid[i] = *(const int32_t *)(r + 16); pt = -2; if (t < 0) t = 24; }
              break;
            case R_THROTTLE: case R_UNTHROTTLE:
              if (t < 0 && size >= 16) t = 8;
              break;
          }
        }
        c.kind[i] = type > 254 ? 255 : (uint8_t)type;
        c.misc[i] = misc;
        c.event[i] = (uint16_t)event;
        c.ring[i] = 0;
        c.offset[i] = (uint32_t)o;
        if (t >= 0) {
          uint64_t v = *(const uint64_t *)(r + t);
          if (!have_base) { base = v; have_base = 1; }
          double rel = (double)(int64_t)(v - base);
          c.time[i] = rel;
          smallest = rel < smallest ? rel : smallest;
        } else {
          c.time[i] = __builtin_nan("");
        }
        if (pt >= 0) { c.pid[i] = *(const int32_t *)(r + pt); c.tid[i] = *(const int32_t *)(r + pt + 4); }
        c.cpu[i] = cp >= 0 ? *(const int32_t *)(r + cp) : ring_cpu;
        if (ipo >= 0) { c.ip_lo[i] = *(const uint32_t *)(r + ipo); c.ip_hi[i] = *(const uint32_t *)(r + ipo + 4); }
        o += size;
      }
      const size_t first = i, n = cap - first;
      // Times relative to the oldest: a second pass only when the guessed base was not the smallest time.
      if (smallest != 0 && smallest != __builtin_inf()) for (size_t k = first; k < cap; k++) c.time[k] -= smallest;
      double elapsed = now_ns() - started;
      if (run >= 0) run_ns[run] = elapsed;
      records = n;
      sum_tid = sum_cpu = sum_event = sum_ip_lo = sum_ip_hi = sum_kind = sum_offset = 0; sum_time = 0;
      for (size_t k = first; k < cap; k++) {
        sum_tid += (uint32_t)c.tid[k]; sum_cpu += (uint32_t)c.cpu[k]; sum_event += c.event[k]; sum_kind += c.kind[k];
        sum_ip_lo += c.ip_lo[k]; sum_ip_hi += c.ip_hi[k]; sum_offset += c.offset[k];
        if (c.time[k] == c.time[k]) sum_time += c.time[k];
      }
      if (fresh) free_columns(&c);
    }
    double *sorted = calloc((size_t)runs, sizeof(double));
    memcpy(sorted, run_ns, (size_t)runs * sizeof(double));
    qsort(sorted, (size_t)runs, sizeof(double), compare_double);
    double median = runs % 2 ? sorted[runs / 2] : (sorted[runs / 2 - 1] + sorted[runs / 2]) / 2;
    printf("{\"records\":%zu,\"median_ns\":%.0f,\"runs_ns\":[", records, median);
    for (int i = 0; i < runs; i++) printf("%s%.0f", i ? "," : "", run_ns[i]);
    printf("],\"checksum\":{\"tid\":%" PRIu32 ",\"cpu\":%" PRIu32 ",\"event\":%" PRIu32 ",\"kind\":%" PRIu32
      ",\"ipLo\":%" PRIu32 ",\"ipHi\":%" PRIu32 ",\"offset\":%" PRIu32 ",\"time\":%.17g}}\n",
      sum_tid, sum_cpu, sum_event, sum_kind, sum_ip_lo, sum_ip_hi, sum_offset, sum_time);
    fflush(stdout);
    free(run_ns);
    free(sorted);
    if (!serve) break;
  }
  return 0;
}
