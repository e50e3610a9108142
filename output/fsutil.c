/* fsutil.c - directories for the output files, their removal (regular
 * files only), and a file written whole from memory (their temporary
 * names and the final rename: sim/outfile.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../scene/log.h"
#include "out_internal.h"
#include "output.h"

/* mkdir that accepts an existing directory. */
static int mkdir_one(const char *dir, const char *whole)
{
	if (mkdir(dir, 0777) == 0)
		return 0;
	int e = errno;
	struct stat sb;
	if (e == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	if (e == EEXIST)
		log_error("%s: cannot create directory: %s exists and is not a directory", whole, dir);
	else
		log_error("%s: cannot create directory %s: %s", whole, dir, strerror(e));
	return NB_ERUNTIME;
}

int out_mkdirs(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir);
	if (n == 0)
		return 0;
	if (n >= sizeof buf) {
		log_error("%s: directory path too long", dir);
		return NB_ERUNTIME;
	}
	memcpy(buf, dir, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	/* Create each prefix ending before a '/', then the whole path. */
	for (size_t i = 1; i < n; i++) {
		if (buf[i] != '/' || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		int err = mkdir_one(buf, dir);
		buf[i] = '/';
		if (err)
			return err;
	}
	return mkdir_one(buf, dir);
}

int out_mkdirs_for(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf) {
		log_error("%s: path too long", path);
		return NB_ERUNTIME;
	}
	memcpy(buf, path, n + 1);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0; /* current directory or "/" */
	*slash = '\0';
	return out_mkdirs(buf);
}

int out_remove_regular(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISREG(sb.st_mode))
		return 1;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

int out_stage_bytes(const char *path, const void *buf, size_t len, const char *what)
{
	char tmp[SCENE_PATH_MAX + 64];
	int fd = sim_outfile_temp(path, tmp, sizeof tmp);
	if (fd < 0)
		return NB_ERUNTIME;
	const unsigned char *p = buf;
	size_t left = len;
	int err = 0;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : ENOSPC; /* write 0: no room for a byte */
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	if (close(fd) != 0 && !err)
		err = errno;
	if (err) {
		log_error("%s: cannot write the %s (temporary file %s): %s", path, what, tmp,
			  strerror(err));
		unlink(tmp);
		return NB_ERUNTIME;
	}
	return 0;
}

int out_save_bytes(const char *path, const void *buf, size_t len, const char *what)
{
	char tmp[SCENE_PATH_MAX + 64];
	if (out_stage_bytes(path, buf, len, what) || sim_outfile_temp_name(path, tmp, sizeof tmp))
		return NB_ERUNTIME;
	return sim_outfile_commit(tmp, path, 1);
}
