/* nicemu guest programs: string, format and I/O helpers (no libc). */
#include "nlib.h"

void *memcpy(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;
	if (dp < sp)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

void *memset(void *d, int c, size_t n)
{
	u8 *dp = d;
	while (n--)
		*dp++ = (u8)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (u8)*a - (u8)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (u8)*a - (u8)*b;
		if (!*a)
			break;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

size_t strlcpy(char *d, const char *s, size_t n)
{
	size_t len = strlen(s);
	if (n) {
		size_t k = len < n - 1 ? len : n - 1;
		memcpy(d, s, k);
		d[k] = 0;
	}
	return len;
}

int parse_u32(const char *s, u32 *out)
{
	u32 v = 0, base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	if (!*s)
		return -1;
	for (; *s; s++) {
		u32 dig;
		if (*s >= '0' && *s <= '9')
			dig = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			dig = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			dig = *s - 'A' + 10;
		else
			return -1;
		if (v > (0xffffffffu - dig) / base)
			return -1; /* overflow */
		v = v * base + dig;
	}
	*out = v;
	return 0;
}

u64 divmod_u64_u32(u64 n, u32 d, u32 *rem)
{
	u32 hi = (u32)(n >> 32), lo = (u32)n, qhi = hi / d, r = hi % d, qlo;
	/* r < d, so the quotient of r:lo / d fits in 32 bits: no #DE. */
	__asm__("divl %4" : "=a"(qlo), "=d"(r) : "0"(lo), "1"(r), "rm"(d));
	if (rem)
		*rem = r;
	return ((u64)qhi << 32) | qlo;
}

/* Output sink for vsnprintf: counts everything, stores what fits. */
struct sink {
	char *buf;
	size_t size, len;
};

static void put(struct sink *s, char c)
{
	if (s->len + 1 < s->size)
		s->buf[s->len] = c;
	s->len++;
}

static void put_field(struct sink *s, const char *p, size_t n, int width,
		      int left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;
	if (!left)
		while (fill-- > 0)
			put(s, pad);
	while (n--)
		put(s, *p++);
	if (left)
		while (fill-- > 0)
			put(s, ' ');
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct sink s = { buf, size, 0 };
	char tmp[24];

	for (; *fmt; fmt++) {
		int left = 0, width = 0, longlong = 0;
		char pad = ' ';
		if (*fmt != '%') {
			put(&s, *fmt);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				left = 1;
			else if (*fmt == '0')
				pad = '0';
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l')
			longlong += 1, fmt++;
		longlong = longlong >= 2;

		switch (*fmt) {
		case 'd': case 'i': case 'u': case 'x': case 'X': case 'p': {
			u64 v;
			int neg = 0, n = 0;
			u32 base = (*fmt == 'x' || *fmt == 'X' || *fmt == 'p') ? 16 : 10;
			const char *digits = *fmt == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
			if (*fmt == 'p')
				v = (u32)va_arg(ap, void *);
			else if (*fmt == 'd' || *fmt == 'i') {
				s64 sv = longlong ? va_arg(ap, s64) : va_arg(ap, s32);
				if (sv < 0)
					neg = 1, sv = -sv;
				v = (u64)sv;
			} else
				v = longlong ? va_arg(ap, u64) : va_arg(ap, u32);
			do {
				u32 r;
				v = divmod_u64_u32(v, base, &r);
				tmp[sizeof(tmp) - 1 - n++] = digits[r];
			} while (v);
			if (*fmt == 'p') {
				tmp[sizeof(tmp) - 1 - n++] = 'x';
				tmp[sizeof(tmp) - 1 - n++] = '0';
			}
			if (neg) {
				if (pad == '0' && width > 0) {
					put(&s, '-'); /* sign goes before zero padding */
					width--;
				} else
					tmp[sizeof(tmp) - 1 - n++] = '-';
			}
			put_field(&s, tmp + sizeof(tmp) - n, n, width, left, pad);
			break;
		}
		case 's': {
			const char *p = va_arg(ap, const char *);
			if (!p)
				p = "(null)";
			put_field(&s, p, strlen(p), width, left, ' ');
			break;
		}
		case 'c':
			tmp[0] = (char)va_arg(ap, int);
			put_field(&s, tmp, 1, width, left, ' ');
			break;
		case '%':
			put(&s, '%');
			break;
		case 0:
			fmt--; /* lone '%' at the end */
			break;
		default:
			put(&s, '%');
			put(&s, *fmt);
		}
	}
	if (size)
		buf[s.len < size ? s.len : size - 1] = 0;
	return (int)s.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0)
			return w;
		c += w;
		n -= w;
	}
	return 0;
}

int puts_fd(int fd, const char *s)
{
	return write_all(fd, s, strlen(s));
}

/* One write() per call, so lines from one printf are not split on the console. */
int dprintf(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	return write_all(fd, buf, n);
}

int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY, 0), len = 0;
	if (fd < 0)
		return fd;
	while ((size_t)len + 1 < size) {
		ssize_t r = read(fd, buf + len, size - 1 - len);
		if (r < 0) {
			close(fd);
			return r;
		}
		if (r == 0)
			break;
		len += r;
	}
	buf[len] = 0;
	close(fd);
	return len;
}

/* Called from _start with the initial stack pointer. */
void nicemu_start(long *sp) __attribute__((noreturn, used));
void nicemu_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	exit(main(argc, argv, argv + argc + 1));
}
