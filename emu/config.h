/* Machine configuration: from a key-file ([machine] and one section per
 * device) and/or the command line.  Both go through one table of keys, so a
 * key means the same and is checked the same way wherever it is written. */
#ifndef NICEMU_CONFIG_H
#define NICEMU_CONFIG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/core/devcfg.h"

typedef struct nm_config {
    char *cpu;
    uint32_t cpu_mhz; /* --mhz: a hypothetical core clock (bus ratio kept); 0: the model's */
    char *fpu;        /* --fpu: "387" or "none" (a 386's coprocessor); NULL: the model's */
    uint64_t ram_bytes;
    char *kernel, *initrd, *append, *rom, *elf;
    char *serial;  /* stdout (default), none, or a file */
    int post_port; /* -1: none */
    uint64_t max_instructions;
    uint64_t max_virtual_ns;
    char *report_json;
    char *debug;
    char *trace_range, *trace_window; /* limits of -d exec */
    bool strict_isa;
    bool no_poll_fast_forward; /* cpu/poll.c off */
    uint32_t share_irqs;       /* IRQ lines two devices may drive (bit n: IRQ n) */
    uint64_t rtc_epoch;        /* seconds since 1970 the RTC starts at */
    /* Cost model (cpu/timing/timing.h; NULL: the default, checked when the
     * machine is built). */
    char *cost_model, *cost_from, *mem_wait_states, *dram_timing, *l2, *board;
    /* Profiler (emu/profiler.h): symbols, when, what to print. */
    bool profile;
    uint64_t profile_top;       /* 0: default */
    char *profile_from;         /* marker (default) or boot */
    char *profile_stack_region; /* kernel stack size (SIZE or 0); NULL: 8K */
    char *profile_callers;      /* FN[,FN...]: call graph and distribution of these */
    char *profile_dist;         /* FN[,FN...]: distribution of these */
    char *symbols;              /* FILE[@ADDR][,FILE[@ADDR]...] */
    char *system_map;
    char *measure_nic; /* the NIC whose frames count as packets */
    /* The window (emu/display.h): "none" (NULL, the default) or "sdl";
     * a PNG of it at the end of the run; the VGA text buffer as text. */
    char *display;
    char *screenshot;
    char *vga_dump;
    /* Snapshots (emu/snapshot.h, docs/snapshots.md): save the machine at the
     * guest's snapshot point (and end the run there), or start from a saved
     * one; the command the guest's mailbox holds. */
    char *save_state;
    bool save_state_exit;
    char *restore;
    char *mailbox;
    GPtrArray *devices; /* nm_devcfg* */
} nm_config;

nm_config *nm_config_new(void);
void nm_config_free(nm_config *c);

/* Set one [machine] key from a string, checking it.  `origin` names where
 * the value came from ("machine.ini" or "command line") for the message. */
bool nm_config_set(nm_config *c, const char *origin, const char *key, const char *value,
                   GError **err);
bool nm_config_load_file(nm_config *c, const char *path, GError **err);
/* "ne2000,io=0x300,irq=9": adds a device of kind `option` ("--nic"). */
bool nm_config_add_device_spec(nm_config *c, const char *option, const char *spec, GError **err);

/* A device configuration from a spec string, checked against its class
 * (for devices the board creates itself).  Free with nm_devcfg_free. */
nm_devcfg *nm_devcfg_parse(const char *origin, const char *spec, GError **err);

/* What a snapshot must have been made with for this configuration to
 * restore it: one "key=value" line per [machine] key that shapes the machine
 * (not the ones that only say where output goes, how long to run, what to
 * profile or the mailbox), then one "device NAME=MODEL,key=value..." line
 * per device (keys sorted; a capture= file only as being there).  The
 * kernel, initrd, ROM and ELF files are not in it: emu/snapshot.c adds their
 * contents' hashes. */
char *nm_config_identity(const nm_config *c);

/* Parses the command line (GOptionContext).  On --help prints and returns
 * true with *exit_now set.  Errors are set in err (exit status 2). */
bool nm_config_parse_args(nm_config *c, int *argc, char ***argv, bool *exit_now, GError **err);

#endif
