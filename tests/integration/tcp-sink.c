/* tcp-sink: a one-connection TCP receiver on the host's loopback, for the
 * slirp test (tests/integration/linux-slirp).
 *
 *   tcp-sink PORTFILE BUFLEN [TIMEOUT_S]
 *
 * Listens on 127.0.0.1 at a port the kernel picks, writes that port number
 * to PORTFILE (written to PORTFILE.tmp, then renamed, so a reader never sees
 * half of it), accepts one connection, reads until EOF and checks ttcp's
 * pattern: byte n of the stream is (n mod BUFLEN) & 0xff. Prints
 * "tcp-sink: BYTES bytes, pattern ok" (or where the pattern broke) and exits
 * 0 if the pattern held, 1 otherwise; gives up after TIMEOUT_S (default 120)
 * seconds of host time. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: tcp-sink PORTFILE BUFLEN [TIMEOUT_S]\n");
        return 2;
    }
    unsigned long buflen = strtoul(argv[2], NULL, 0);
    unsigned timeout = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 120;
    if (buflen == 0 || timeout == 0) {
        fprintf(stderr, "tcp-sink: bad BUFLEN or TIMEOUT_S\n");
        return 2;
    }
    alarm(timeout); /* SIGALRM ends us: the test sees a failure */

    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) < 0) {
        perror("tcp-sink: listen");
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 ||
        rename(tmp, argv[1]) < 0) {
        perror("tcp-sink: port file");
        return 1;
    }

    int s = accept(ls, NULL, NULL);
    if (s < 0) {
        perror("tcp-sink: accept");
        return 1;
    }
    unsigned long long total = 0, bad_at = 0;
    int bad = 0;
    unsigned char buf[65536];
    for (;;) {
        ssize_t n = read(s, buf, sizeof buf);
        if (n < 0) {
            perror("tcp-sink: read");
            return 1;
        }
        if (n == 0) break;
        for (ssize_t i = 0; i < n && !bad; i++)
            if (buf[i] != (unsigned char)((total + (unsigned long long)i) % buflen)) {
                bad = 1;
                bad_at = total + (unsigned long long)i;
            }
        total += (unsigned long long)n;
    }
    close(s);
    close(ls);
    if (bad) {
        printf("tcp-sink: %llu bytes, pattern broken at byte %llu\n", total, bad_at);
        return 1;
    }
    printf("tcp-sink: %llu bytes, pattern ok\n", total);
    return 0;
}
