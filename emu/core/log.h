/* Per-subsystem logging.  A disabled subsystem costs one load and a
 * predictable branch at each call site: the level check happens in the macro,
 * before any argument is evaluated. */
#ifndef NICEMU_LOG_H
#define NICEMU_LOG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    NM_LOG_OFF = 0,
    NM_LOG_ERROR,
    NM_LOG_WARN, /* default level: guest mistakes worth a line */
    NM_LOG_INFO,
    NM_LOG_DEBUG, /* what "-d SUBSYS" turns on */
    NM_LOG_TRACE,
} nm_log_level;

/* X-macro: the subsystem list, one place. */
#define NM_LOG_SUBSYSTEMS(X)                                                                       \
    X(MACHINE, "machine")                                                                          \
    X(CPU, "cpu")                                                                                  \
    X(EXEC, "exec")                                                                                \
    X(INT, "int")                                                                                  \
    X(MEM, "mem")                                                                                  \
    X(IO, "io")                                                                                    \
    X(IRQ, "irq")                                                                                  \
    X(TIMER, "timer")                                                                              \
    X(LOADER, "loader")                                                                            \
    X(PIC, "pic")                                                                                  \
    X(PIT, "pit")                                                                                  \
    X(UART, "uart")                                                                                \
    X(RTC, "rtc")                                                                                  \
    X(KBD, "kbd")                                                                                  \
    X(PORTS, "ports")                                                                              \
    X(PCI, "pci")                                                                                  \
    X(ISA, "isa")                                                                                  \
    X(SPI, "spi")                                                                                  \
    X(DP8390, "dp8390")                                                                            \
    X(NE2000, "ne2000")                                                                            \
    X(WD8013, "wd8013")                                                                            \
    X(E1000, "e1000")                                                                              \
    X(KS8851, "ks8851")                                                                            \
    X(NET, "net")                                                                                  \
    X(SLIRP, "slirp")                                                                              \
    X(PCAP, "pcap")                                                                                \
    X(PEER, "peer")                                                                                \
    X(PROF, "prof")                                                                                \
    X(VGA, "vga")                                                                                  \
    X(DISPLAY, "display")

typedef enum {
#define NM_LOG_ENUM(id, name) NM_SUB_##id,
    NM_LOG_SUBSYSTEMS(NM_LOG_ENUM)
#undef NM_LOG_ENUM
        NM_SUB_COUNT
} nm_log_subsystem;

/* The one piece of process-wide state outside a machine: which subsystems
 * log.  It never influences guest-visible behaviour. */
extern uint8_t nm_log_levels[NM_SUB_COUNT];

#define nm_log_enabled(sub, lvl) (nm_log_levels[NM_SUB_##sub] >= (lvl))

#define nm_log(sub, lvl, ...)                                                                      \
    do {                                                                                           \
        if (__builtin_expect(nm_log_enabled(sub, lvl), 0))                                         \
            nm_log_emit(NM_SUB_##sub, (lvl), __VA_ARGS__);                                         \
    } while (0)

/* Errors and warnings (mostly a guest's mistakes) are rate-limited: per
 * subsystem, cause (the message's format string: one per call site) and
 * device, the first NM_LOG_LIMIT_FIRST lines print; the rest are counted,
 * and nm_log_limit_flush (called when a machine is freed, i.e. at the end of
 * the run) prints one line per cause with how many were not shown.  A
 * device with several instances passes its state as `dev` (nm_dev_warn) so
 * each instance has its own allowance.  Debug and trace lines, which the
 * user asks for, are never limited. */
#define NM_LOG_LIMIT_FIRST 10

#define nm_dev_log(sub, lvl, dev, ...)                                                             \
    do {                                                                                           \
        if (__builtin_expect(nm_log_enabled(sub, lvl), 0))                                         \
            nm_log_emit_dev(NM_SUB_##sub, (lvl), (dev), __VA_ARGS__);                              \
    } while (0)
#define nm_dev_error(sub, dev, ...) nm_dev_log(sub, NM_LOG_ERROR, dev, __VA_ARGS__)
#define nm_dev_warn(sub, dev, ...)  nm_dev_log(sub, NM_LOG_WARN, dev, __VA_ARGS__)

#define nm_error(sub, ...) nm_log(sub, NM_LOG_ERROR, __VA_ARGS__)
#define nm_warn(sub, ...)  nm_log(sub, NM_LOG_WARN, __VA_ARGS__)
#define nm_info(sub, ...)  nm_log(sub, NM_LOG_INFO, __VA_ARGS__)
#define nm_debug(sub, ...) nm_log(sub, NM_LOG_DEBUG, __VA_ARGS__)
#define nm_trace(sub, ...) nm_log(sub, NM_LOG_TRACE, __VA_ARGS__)

void nm_log_emit(nm_log_subsystem sub, nm_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void nm_log_emit_dev(nm_log_subsystem sub, nm_log_level lvl, const void *dev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints "[sub] warn: N more like "first line" not shown" for every cause
 * past its allowance, in the order the causes first appeared, and forgets
 * every count (a device's identity must not outlive it). */
void nm_log_limit_flush(void);
/* Lines a cause printed and suppressed so far (for tests). */
uint64_t nm_log_limit_suppressed(void);

/* Parses "cpu,ne2000=trace,all" and sets levels.  Returns false and fills
 * *bad with the offending word (caller frees) on an unknown name. */
bool nm_log_parse(const char *spec, char **bad);
void nm_log_reset(void);
const char *nm_log_subsystem_name(nm_log_subsystem sub);
/* Comma-separated list of all subsystem names (static storage). */
const char *nm_log_subsystem_list(void);
/* Where log lines go (default stderr). */
void nm_log_set_file(void *file /* FILE* */);

/* `text` with control characters and bytes that are not UTF-8 as \xNN (for
 * echoing what a user's file holds in one line).  Free with g_free. */
char *nm_escape_for_message(const char *text);

#endif
