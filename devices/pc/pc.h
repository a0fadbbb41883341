/* The PC platform devices (devices/pc/): their classes, for the board that
 * creates them and for the registry, and the few functions through which
 * the board, the run summary and the tests look inside one.  Each `dev`
 * below is the state pointer nm_machine_add_device returned for that class. */
#ifndef NICEMU_DEVICES_PC_H
#define NICEMU_DEVICES_PC_H

#include <stddef.h>
#include <stdint.h>

#include "emu/core/device.h"

extern const nm_device_class nm_debugcon_class;
extern const nm_device_class nm_pic_class;      /* 8259A pair + ELCR */
extern const nm_device_class nm_pit_class;      /* 8254 + port 0x61 */
extern const nm_device_class nm_uart_class;     /* 16550A */
extern const nm_device_class nm_rtc_class;      /* MC146818 + CMOS RAM */
extern const nm_device_class nm_port92_class;   /* system control port A */
extern const nm_device_class nm_fpuerr_class;   /* FERR# latch: IRQ 13, port 0xF0, IGNNE# */
extern const nm_device_class nm_i8042_class;    /* keyboard controller and keyboard */
extern const nm_device_class nm_postcode_class; /* POST code port 0x80 */
extern const nm_device_class nm_exitport_class; /* exit port 0xF4 */
extern const nm_device_class nm_mailbox_class;  /* host-to-guest mailbox 0x604 */

/* debugcon.c: everything the guest wrote. */
const char *nm_debugcon_text(void *dev);

/* uart.c: every byte the guest transmitted (accepted into the transmitter),
 * NUL-terminated; `len` (may be NULL) gets the length, which counts NUL
 * bytes the guest sent. */
const char *nm_uart_text(void *dev, size_t *len);
/* Bytes arriving on the receive line (tests; later a host console).  Bytes
 * that find the receiver full are lost and set the overrun error, as on
 * the chip.  Returns how many were accepted. */
size_t nm_uart_receive(void *dev, const uint8_t *bytes, size_t len);

/* postcode.c: the bytes written to the POST port(s), in order.  Only the
 * first NM_POSTCODE_KEPT are kept; `total` counts all writes. */
#define NM_POSTCODE_KEPT 65536u
const uint8_t *nm_postcode_codes(void *dev, size_t *count);
uint64_t nm_postcode_total(void *dev);

/* i8042.c: scancodes (set 1: make, break = make | 0x80, E0 prefixes) from
 * the host keyboard, queued as bytes from the keyboard (IRQ 1).  Bytes that
 * find the keyboard disabled or the 16-byte output queue full are dropped
 * and counted.  Returns how many were queued. */
size_t nm_i8042_keys(void *dev, const uint8_t *codes, size_t len);

/* rtc.c: CMOS RAM access for the board/boot ROM (index 0..127; the clock
 * registers 0x00-0x0D are not reachable this way). */
uint8_t nm_rtc_cmos_get(void *dev, unsigned index);
void nm_rtc_cmos_set(void *dev, unsigned index, uint8_t value);

#endif
