/* fsutil.c - directories for the output files (their temporary names and
 * the final rename: sim/outfile.c). */
#include <dirent.h>
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

int out_remove_sequence(const char *dir, const char *prefix, const char *suffix, int width,
			int keep_below)
{
	DIR *d = opendir(dir);
	if (!d) {
		log_warn("%s: cannot read the directory to remove an earlier run's files: %s", dir,
			 strerror(errno));
		return NB_ERUNTIME;
	}
	const size_t np = strlen(prefix), ns = strlen(suffix);
	int rc = 0;
	struct dirent *e;
	char path[4096], again[256];
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		size_t len = strlen(name);
		if (len <= np + ns || len > 64 || strncmp(name, prefix, np) != 0 ||
		    strcmp(name + len - ns, suffix) != 0)
			continue;
		int idx = 0, used = 0;
		if (sscanf(name + np, "%9d%n", &idx, &used) != 1 || idx < 0 ||
		    (size_t)used != len - np - ns)
			continue;
		/* exactly the name the writer makes for idx, nothing else */
		snprintf(again, sizeof again, "%s%0*d%s", prefix, width, idx, suffix);
		if (strcmp(again, name) != 0 || idx < keep_below)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (unlink(path) != 0 && errno != ENOENT) {
			log_warn("%s: cannot remove this earlier run's file: %s", path, strerror(errno));
			rc = NB_ERUNTIME;
		}
	}
	closedir(d);
	return rc;
}
