/* exitwith: a tiny static program for `nicemu.run=exec,...` tests.
 *   exitwith [STATUS [WORD...]]
 * prints "exitwith: argc=N WORD..." and exits with STATUS (default 0). */
#include "lib/nlib.h"

int main(int argc, char **argv, char **envp)
{
	char line[256];
	int n;
	u32 status = 0;
	(void)envp;
	n = snprintf(line, sizeof(line), "exitwith: argc=%d", argc);
	for (int i = 2; i < argc && n < (int)sizeof(line); i++)
		n += snprintf(line + n, sizeof(line) - n, " %s", argv[i]);
	printf("%s\n", line);
	if (argc > 1 && parse_u32(argv[1], &status) < 0)
		status = 255;
	return (int)(status & 0xff);
}
