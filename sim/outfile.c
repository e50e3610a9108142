/* outfile.c - how every output file reaches its final name: written under
 * a temporary name beside it, ".NAME.<pid>-<token>.partial", created with
 * O_EXCL, and renamed into place only when complete. The name is unique to
 * the process (pid, and a random token drawn once, for processes of other
 * PID namespaces sharing the directory), so two runs writing the same path
 * never share a temporary file: the last complete rename wins and neither
 * file is mixed. The name depends only on PATH within a process, so a
 * writer that keeps no name (sim_stats_close) finds it again; two writers
 * of one path in one process are refused (EEXIST) - the outputs check
 * (app/outputs_check.c) keeps a run's outputs apart.
 * The rename never replaces a device, FIFO, socket or directory. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

static unsigned g_token;
static pthread_once_t g_token_once = PTHREAD_ONCE_INIT;

static void token_init(void)
{
	unsigned t = 0;
	if (getrandom(&t, sizeof t, GRND_NONBLOCK) != (ssize_t)sizeof t) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		t = (unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec * 2654435761u;
	}
	g_token = t;
}

int sim_outfile_temp_name(const char *path, char *tmp, size_t cap)
{
	pthread_once(&g_token_once, token_init);
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
	const char *base = path + dirlen;
	int n = snprintf(tmp, cap, "%.*s.%s.%ld-%08x.partial", (int)dirlen, path, base,
			 (long)getpid(), g_token);
	if (*base == '\0' || n < 0 || (size_t)n >= cap) {
		log_error("%s: bad output path (empty name or too long)", path);
		return NB_ERUNTIME;
	}
	return 0;
}

int sim_outfile_temp(const char *path, char *tmp, size_t cap)
{
	if (sim_outfile_temp_name(path, tmp, cap))
		return NB_ERUNTIME;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		log_error("%s: cannot create the temporary file %s: %s", path, tmp, strerror(errno));
		return NB_ERUNTIME;
	}
	return fd;
}

FILE *sim_outfile_fopen(const char *path, char *tmp, size_t cap)
{
	int fd = sim_outfile_temp(path, tmp, cap);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		log_error("%s: cannot open %s for writing: %s", path, tmp, strerror(errno));
		close(fd);
		unlink(tmp);
	}
	return f;
}

const char *sim_outfile_special(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) != 0 || S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode))
		return NULL;
	if (S_ISDIR(sb.st_mode))
		return "a directory";
	if (S_ISFIFO(sb.st_mode))
		return "a FIFO";
	if (S_ISCHR(sb.st_mode))
		return "a character device";
	if (S_ISBLK(sb.st_mode))
		return "a block device";
	if (S_ISSOCK(sb.st_mode))
		return "a socket";
	return "not a regular file";
}

int sim_outfile_commit(const char *tmp, const char *path, int ok)
{
	if (!ok) {
		unlink(tmp);
		return 0;
	}
	/* Checked at load too (app/outputs_check.c); here again, since the
	 * path may have changed since. A small window remains between this
	 * check and the rename: rename(2) has no "regular files only" flag. */
	const char *what = sim_outfile_special(path);
	if (what) {
		log_error("%s: is %s; not replacing it (the output stays in no file)", path, what);
		unlink(tmp);
		return NB_ERUNTIME;
	}
	if (rename(tmp, path) != 0) {
		log_error("%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
		unlink(tmp);
		return NB_ERUNTIME;
	}
	return 0;
}
