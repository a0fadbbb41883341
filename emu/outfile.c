#include "emu/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/config.h"

static bool file_error(GError **err, const char *option, const char *path, const char *what)
{
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: %s: %s", option, path, what);
    return false;
}

static bool write_error(GError **err, const char *option, const char *path, const char *why)
{
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: cannot write '%s': %s", option,
                path, why);
    return false;
}

bool nm_input_file_check(const char *option, const char *path, GError **err)
{
    struct stat st;
    if (stat(path, &st) != 0) return file_error(err, option, path, g_strerror(errno));
    if (!S_ISREG(st.st_mode)) return file_error(err, option, path, "not a regular file");
    return true;
}

bool nm_output_file_check(const char *option, const char *path, GError **err)
{
    if (!*path) return write_error(err, option, path, "empty file name");
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return write_error(err, option, path, g_strerror(EISDIR));
        /* A FIFO cannot be opened to test it without a reader (or blocking):
         * it is written when the time comes. */
        if (S_ISFIFO(st.st_mode)) return true;
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) return write_error(err, option, path, g_strerror(errno));
        close(fd);
        return true;
    }
    if (errno != ENOENT) return write_error(err, option, path, g_strerror(errno));
    /* A new name: its directory must exist and take new files. */
    g_autofree char *dir = g_path_get_dirname(path);
    if (stat(dir, &st) != 0) return write_error(err, option, path, g_strerror(errno));
    if (!S_ISDIR(st.st_mode)) return write_error(err, option, path, g_strerror(ENOTDIR));
    if (access(dir, W_OK | X_OK) != 0) return write_error(err, option, path, g_strerror(errno));
    return true;
}

static bool write_all(int fd, const char *data, size_t len, int *error)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *error = n < 0 ? errno : EIO;
            return false;
        }
        data += n;
        len -= (size_t)n;
    }
    return true;
}

bool nm_output_file_write(const char *option, const char *path, const char *data, size_t len,
                          GError **err)
{
    struct stat st;
    int e = 0;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* Through the symlink or into the device: never replace it. */
        int fd = open(path, O_WRONLY | O_TRUNC | O_NOCTTY);
        if (fd < 0) return write_error(err, option, path, g_strerror(errno));
        bool ok = write_all(fd, data, len, &e);
        if (close(fd) != 0 && ok) {
            e = errno;
            ok = false;
        }
        return ok || write_error(err, option, path, g_strerror(e));
    }
    /* A temporary file beside it, renamed over it: readers never see half a
     * file, and a failed write leaves the old one. */
    g_autofree char *tmp = g_strdup_printf("%s.XXXXXX", path);
    int fd = g_mkstemp_full(tmp, O_WRONLY, 0644);
    if (fd < 0) return write_error(err, option, path, g_strerror(errno));
    bool ok = write_all(fd, data, len, &e);
    if (close(fd) != 0 && ok) {
        e = errno;
        ok = false;
    }
    if (ok && rename(tmp, path) != 0) {
        e = errno;
        ok = false;
    }
    if (!ok) {
        unlink(tmp);
        return write_error(err, option, path, g_strerror(e));
    }
    return true;
}
