/* nicemu guest programs: the little of a C library they need. */
#ifndef NICEMU_NLIB_H
#define NICEMU_NLIB_H

#include <stdarg.h> /* freestanding header from gcc, no libc */
#include "sys.h"

/* gcc may emit calls to these four even with -ffreestanding. */
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
size_t strlcpy(char *d, const char *s, size_t n);
/* Parses a decimal, or hex with 0x, unsigned number; returns 0 on success. */
int parse_u32(const char *s, u32 *out);

/* 64-by-32 division without libgcc's __udivdi3: the 486 `divl` does it in
 * two steps. Returns the quotient, stores the remainder. */
u64 divmod_u64_u32(u64 n, u32 d, u32 *rem);

/* printf subset: %d %i %u %x %X %s %c %p %%, flags '-' '0', width, and the
 * length modifiers l (ignored: long is 32-bit) and ll (64-bit). */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int dprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define printf(...) dprintf(1, __VA_ARGS__)
int write_all(int fd, const void *p, size_t n);
int puts_fd(int fd, const char *s);

/* Reads a small file (e.g. /proc/cmdline) into buf, NUL-terminated; returns
 * its length or -errno. */
int read_file(const char *path, char *buf, size_t size);

int main(int argc, char **argv, char **envp);

#endif
