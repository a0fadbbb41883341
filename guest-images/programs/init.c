/* nicemu-init: PID 1 of the nicemu guest.
 *
 * Mounts the pseudo file systems, prints the boot banner, runs the workload
 * named by `nicemu.run=WORKLOAD[,arg,...]` on the kernel command line
 * (default `boot`) and hands its exit status to the emulator through the exit
 * port (outb to 0xf4), falling back to a power-off.
 */
#include "lib/nlib.h"

#define EXIT_PORT 0xf4 /* also QEMU's `-device isa-debug-exit,iobase=0xf4` */
#define MAX_ARGS 16

static const char tag[] = "nicemu-init";

/* ---- workloads ------------------------------------------------------------
 * A workload gets the comma-separated arguments after its name (argv[0] is
 * the name) and returns the exit status to report. To add one, write the
 * function and add a row to `workloads`. */

static int run_boot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%s: run=boot ok\n", tag);
	return 0;
}

struct workload {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct workload workloads[] = {
	{ "boot", run_boot, "print a line and exit 0 (boot test)" },
	/* later: ping, ttcp, udp, exec */
};

#define N_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

/* ---- boot plumbing ------------------------------------------------------- */

static void mount_fs(const char *type, const char *dir)
{
	int r;
	mkdir(dir, 0755); /* may exist already: fine */
	r = mount(type, dir, type, 0, NULL);
	if (r < 0 && r != -EBUSY) /* EBUSY: already mounted (DEVTMPFS_MOUNT) */
		dprintf(2, "%s: warning: mount %s on %s: error %d\n", tag, type, dir, -r);
}

/* The kernel opens /dev/console as fds 0-2 for init if the initramfs has the
 * node; if that failed, try again now that devtmpfs is mounted. */
static void ensure_console(void)
{
	int fd;
	if (write(1, "", 0) != -EBADF)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY, 0);
	if (fd < 0)
		return; /* nowhere to print; the exit port still works */
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

/* Finds `nicemu.run=VALUE` in the command line; the last one wins, as the
 * kernel does for its own parameters. Returns a pointer into cmdline, with the
 * value NUL-terminated, or NULL. */
static char *find_run_param(char *cmdline)
{
	static const char key[] = "nicemu.run=";
	char *found = NULL, *p = cmdline;
	while (*p) {
		char *tok;
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (!*p)
			break;
		tok = p;
		while (*p && *p != ' ' && *p != '\n' && *p != '\t')
			p++;
		if (*p)
			*p++ = 0;
		if (!strncmp(tok, key, sizeof(key) - 1))
			found = tok + sizeof(key) - 1;
	}
	return found;
}

/* Splits "name,a,b" in place into argv; returns argc. */
static int split_args(char *s, char **argv, int max)
{
	int argc = 0;
	argv[argc++] = s;
	for (; *s && argc < max; s++)
		if (*s == ',') {
			*s = 0;
			argv[argc++] = s + 1;
		}
	argv[argc] = NULL;
	return argc;
}

/* Reports `status` to the emulator and stops the machine. Never returns:
 * PID 1 exiting would panic the kernel. */
static __attribute__((noreturn)) void finish(int status)
{
	int r;
	printf("%s: exit %d\n", tag, status);
	/* The exit port ends the run at once: let the console finish first. */
	tcdrain(1);
	r = ioperm(EXIT_PORT, 4, 1);
	if (r < 0)
		r = iopl(3);
	if (r == 0)
		outb((u8)status, EXIT_PORT); /* nicemu stops here with `status` */
	else
		dprintf(2, "%s: no I/O port access (error %d)\n", tag, -r);
	/* Not under nicemu/QEMU: power off, or halt forever. */
	r = reboot(LINUX_REBOOT_CMD_POWER_OFF);
	dprintf(2, "%s: power off failed (error %d); halting\n", tag, -r);
	for (;;)
		pause();
}

int main(int argc, char **argv, char **envp)
{
	static char cmdline[4096];
	struct utsname u;
	char *run, *wargv[MAX_ARGS + 1];
	int wargc;
	(void)argc;
	(void)argv;
	(void)envp;

	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("devtmpfs", "/dev");
	ensure_console();

	if (uname(&u) < 0)
		strlcpy(u.release, "?", sizeof(u.release)), strlcpy(u.sysname, "Linux", sizeof(u.sysname));
	printf("%s: booted %s %s\n", tag, u.sysname, u.release);

	if (read_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = 0;
	run = find_run_param(cmdline);
	if (!run || !*run)
		run = "boot";
	wargc = split_args(run, wargv, MAX_ARGS);

	for (unsigned i = 0; i < N_WORKLOADS; i++)
		if (!strcmp(workloads[i].name, wargv[0]))
			finish(workloads[i].run(wargc, wargv));

	dprintf(2, "%s: error: unknown workload '%s'; known:", tag, wargv[0]);
	for (unsigned i = 0; i < N_WORKLOADS; i++)
		dprintf(2, " %s", workloads[i].name);
	dprintf(2, "\n");
	finish(1);
}
