/* Shared by the libFuzzer targets in tests/fuzz/ (docs/fuzzing.md): a reader
 * that turns the fuzzer's bytes into a program of operations, virtual time
 * advancing with a cap on events, the check that fails an input with a
 * message libFuzzer reports as a crash, and quiet logging.
 *
 * Every input builds a fresh machine and frees it, so an input's outcome
 * never depends on the inputs run before it (a crash reproduces from its
 * artifact alone; NICEMU_FUZZ_DIGEST shows it, see fz_digest).  No host
 * time: the only clock is the machine's. */
#ifndef NICEMU_TESTS_FUZZ_COMMON_H
#define NICEMU_TESTS_FUZZ_COMMON_H

#include <glib.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/netdev/netdev.h"
#include "emu/core/clock.h"
#include "emu/core/log.h"
#include "emu/core/report.h"
#include "emu/machine.h"

/* NICEMU_FUZZ_DIGEST (fz_digest). */
static bool fz_digest_on;
static uint64_t fz_wire_fold; /* the bytes put on the wire this input, with the digest on */

/* ---- the input as a stream ---------------------------------------------- */

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline bool fz_more(const fz_in *in)
{
    return in->n > 0;
}

/* Past the end every read gives zeros. */
static inline uint8_t fz_u8(fz_in *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}

static inline uint16_t fz_u16(fz_in *in)
{
    uint16_t lo = fz_u8(in);
    return (uint16_t)(lo | fz_u8(in) << 8);
}

static inline uint32_t fz_u32(fz_in *in)
{
    uint32_t lo = fz_u16(in);
    return lo | (uint32_t)fz_u16(in) << 16;
}

/* Up to `len` bytes into `out`; what the input lacks is filled with a
 * pattern (so a long frame costs the fuzzer few bytes). */
static inline void fz_bytes(fz_in *in, uint8_t *out, size_t len)
{
    size_t take = len < in->n ? len : in->n;
    memcpy(out, in->p, take);
    in->p += take;
    in->n -= take;
    for (size_t i = take; i < len; i++)
        out[i] = (uint8_t)(i * 7 + 1);
}

/* 1, 2 or 4 from two bits. */
static inline unsigned fz_size(uint8_t bits)
{
    static const unsigned sizes[4] = {1, 2, 4, 1};
    return sizes[bits & 3];
}

/* ---- failing an input --------------------------------------------------- */

/* An invariant the device broke: print why and abort, which libFuzzer
 * reports as a crash and saves the input for. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("\n*** nicemu fuzz invariant violated: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    fflush(stderr);
    abort();
}

#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) fz_fail(__VA_ARGS__);                                                         \
    } while (0)

/* Reads every byte of a frame a device put on the wire, so ASan checks the
 * whole buffer: one copy (the interceptor checks the range at once) rather
 * than a loop the coverage hooks would see byte by byte.  `len` is checked
 * against the wire's maximum first. */
uint8_t fz_frame_copy[NM_NET_MAX_WIRE_FRAME]; /* external: the copy is not optimised away */
static inline void fz_read_frame(const uint8_t *frame, size_t len)
{
    if (len <= sizeof fz_frame_copy) memcpy(fz_frame_copy, frame, len);
    if (fz_digest_on)
        for (size_t i = 0; i < len; i++)
            fz_wire_fold = (fz_wire_fold ^ frame[i]) * 0x100000001b3ull;
}

/* ---- virtual time -------------------------------------------------------- */

/* Events one advance may fire before the input counts as an event storm (a
 * timer re-arming itself with no delay would hang the machine's run loop).
 * The busiest honest case: PIT channel 0 at reload 1 (1.19 MHz) for the
 * longest advance the targets ask for (~67 ms) is about 80 000. */
#define FZ_MAX_EVENTS_PER_ADVANCE 2000000u

/* Run the event queue for `ns` of virtual time, the CPU idle, as the run
 * loop does between slices; then check the queue is consistent. */
static inline void fz_run_ns(nm_clock *c, uint64_t ns)
{
    uint64_t end = nm_clock_cycles_from_ns(c, nm_clock_now_ns(c) + ns);
    uint64_t before = c->events_fired;
    while (c->deadline <= end) {
        if (c->cycles < c->deadline) c->cycles = c->deadline;
        nm_clock_run_due(c);
        FZ_CHECK(c->events_fired - before <= FZ_MAX_EVENTS_PER_ADVANCE,
                 "event storm: %llu events in one %llu ns advance",
                 (unsigned long long)(c->events_fired - before), (unsigned long long)ns);
    }
    if (c->cycles < end) c->cycles = end;
    /* Nothing is left due: the queue's head is in the future, and the
     * deadline the CPU compares against is that head. */
    FZ_CHECK(c->deadline > c->cycles, "an event is due at cycle %llu but the clock is at %llu",
             (unsigned long long)c->deadline, (unsigned long long)c->cycles);
    FZ_CHECK(c->head ? c->deadline == c->head->due : c->deadline == UINT64_MAX,
             "clock deadline %llu does not match the queue head", (unsigned long long)c->deadline);
}

/* Fire whatever a register access made due "now" (the CPU would, after the
 * instruction). */
static inline void fz_settle(nm_clock *c)
{
    fz_run_ns(c, 0);
}

/* ---- logging ------------------------------------------------------------- */

/* Quiet by default (a hostile guest makes the devices log a lot, and
 * formatting costs).  NICEMU_FUZZ_LOG=1 turns every subsystem to trace into
 * /dev/null, so the log calls' arguments are evaluated (and sanitized) too;
 * NICEMU_FUZZ_LOG=stderr shows them. */
static inline void fz_init_logging(void)
{
    const char *env = getenv("NICEMU_FUZZ_LOG");
    if (!env || !*env || !strcmp(env, "0")) {
        memset(nm_log_levels, NM_LOG_OFF, sizeof nm_log_levels);
        return;
    }
    memset(nm_log_levels, NM_LOG_TRACE, sizeof nm_log_levels);
    if (strcmp(env, "stderr")) {
        FILE *null = fopen("/dev/null", "w");
        if (null) nm_log_set_file(null);
    }
}

/* A frame from the wire to the NIC behind `ep`: the length, then flags (bit 0:
 * append a good FCS; bit 1: to `mac`; bit 2: broadcast; bit 3: a long frame,
 * up to `long_max` bytes, else up to `short_max`), then the bytes. */
static inline void fz_wire_frame(fz_in *in, nm_net_endpoint *ep, const uint8_t mac[6],
                                 size_t short_max, size_t long_max)
{
    uint8_t flags = fz_u8(in);
    size_t len = fz_u16(in);
    len = (flags & 8) ? len % long_max : len % short_max;
    uint8_t *buf = g_malloc(len + 4);
    fz_bytes(in, buf, len);
    if (len >= 6 && (flags & 2)) memcpy(buf, mac, 6);
    if (len >= 6 && (flags & 4)) memset(buf, 0xff, 6);
    if (flags & 1) {
        nm_eth_put_fcs(buf, len);
        len += 4;
    }
    nm_net_send(ep, buf, len);
    g_free(buf);
}

/* ---- what an input did ---------------------------------------------------- */

/* With NICEMU_FUZZ_DIGEST set, each input ends by printing one line to
 * stderr: a SHA-256 of the machine's whole report (clock, counters, every
 * device's statistics), of guest RAM, of the bytes put on the wire and of
 * `extra` (the harness's own counters).  The same input gives the same line whatever ran before it
 * in the process: tests/fuzz/run-fresh checks that (no state carried from one machine to the next,
 * through the host's allocators or anything else). */
static inline void fz_digest(nm_machine *m, const void *extra, size_t extra_len)
{
    if (!fz_digest_on) return;
    nm_report *r = nm_report_new();
    nm_machine_report(m, r);
    char *json = nm_report_json(r);
    GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(sum, (const guchar *)json, (gssize)strlen(json));
    if (m->ram) g_checksum_update(sum, m->ram->host, m->ram->size);
    g_checksum_update(sum, (const guchar *)&fz_wire_fold, sizeof fz_wire_fold);
    fz_wire_fold = 0;
    if (extra_len) g_checksum_update(sum, extra, (gssize)extra_len);
    fprintf(stderr, "nicemu fuzz digest: %s cycles %llu\n", g_checksum_get_string(sum),
            (unsigned long long)m->clock.cycles);
    g_checksum_free(sum);
    g_free(json);
    nm_report_free(r);
}

/* libFuzzer calls this once before the first input; every target (one per
 * binary) gets it from here. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init_logging();
    const char *digest = getenv("NICEMU_FUZZ_DIGEST");
    fz_digest_on = digest && *digest && strcmp(digest, "0");
    return 0;
}

#endif
