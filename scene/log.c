/* log.c - message output and error-code mapping (see log.h). */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level g_level = LOG_NORMAL;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_stderr_gone; /* a write failed with EPIPE or EBADF: nobody reads stderr */
static int g_hold;        /* log_hold: messages go to g_held */
static char g_held[8192];
static size_t g_held_len;
static int g_held_lost;   /* a held message did not fit */

void log_set_level(enum log_level level) { g_level = level; }
enum log_level log_get_level(void) { return g_level; }

/* Append prefix, the message and a newline to g_held (g_lock held). */
static void hold_append(const char *prefix, const char *fmt, va_list ap)
{
	char line[2048];
	int len = snprintf(line, sizeof line, "%s", prefix);
	if (len >= 0 && (size_t)len < sizeof line)
		vsnprintf(line + len, sizeof line - (size_t)len, fmt, ap);
	size_t n = strlen(line);
	if (g_held_len + n + 1 >= sizeof g_held) {
		g_held_lost = 1;
		return;
	}
	memcpy(g_held + g_held_len, line, n);
	g_held[g_held_len + n] = '\n';
	g_held_len += n + 1;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	const int saved = errno; /* a caller may still want its errno */
	pthread_mutex_lock(&g_lock);
	if (g_hold) {
		hold_append(prefix, fmt, ap);
	} else if (!g_stderr_gone) {
		/* one line, one write: lines of several processes on one
		 * stderr (mpirun's ranks, a batch's runs) never interleave
		 * (a pipe keeps writes of up to PIPE_BUF, 4096 bytes, whole) */
		char line[4096];
		va_list aq;
		va_copy(aq, ap);
		int len = snprintf(line, sizeof line, "%s", prefix);
		if (len >= 0 && (size_t)len < sizeof line)
			len += vsnprintf(line + len, sizeof line - (size_t)len, fmt, aq);
		va_end(aq);
		errno = 0;
		if (len >= 0 && (size_t)len + 1 < sizeof line) {
			line[len] = '\n';
			fwrite(line, 1, (size_t)len + 1, stderr);
		} else { /* too long for one line: in pieces */
			fputs(prefix, stderr);
			vfprintf(stderr, fmt, ap);
			fputc('\n', stderr);
		}
		if (fflush(stderr) != 0 || ferror(stderr)) {
			/* a closed pipe or descriptor stays closed: stop writing */
			if (errno == EPIPE || errno == EBADF)
				g_stderr_gone = 1;
			clearerr(stderr);
		}
	}
	pthread_mutex_unlock(&g_lock);
	errno = saved;
}

void log_hold(void)
{
	pthread_mutex_lock(&g_lock);
	g_hold = 1;
	pthread_mutex_unlock(&g_lock);
}

void log_release(int print)
{
	pthread_mutex_lock(&g_lock);
	if (print && g_held_len && !g_stderr_gone) {
		errno = 0;
		fwrite(g_held, 1, g_held_len, stderr);
		if (g_held_lost)
			fputs("nbody-render: (more messages were dropped)\n", stderr);
		if ((fflush(stderr) != 0 || ferror(stderr)) && (errno == EPIPE || errno == EBADF))
			g_stderr_gone = 1;
		clearerr(stderr);
	}
	g_hold = 0;
	g_held_len = 0;
	g_held_lost = 0;
	pthread_mutex_unlock(&g_lock);
}

void log_error(const char *fmt, ...)
{
	if (g_level == LOG_SILENT)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog("nbody-render: error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	if (g_level <= LOG_QUIET)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog("nbody-render: warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	if (g_level <= LOG_QUIET)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

int log_exit_status(int err)
{
	switch (err) {
	case NB_OK: return 0;
	case NB_EINPUT: return 2;
	case NB_EINTR: return 130;
	default: return 1;
	}
}

uint64_t log_clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double log_clock_s(void)
{
	return 1e-9 * (double)log_clock_ns();
}
