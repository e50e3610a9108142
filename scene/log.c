/* log.c - message output and error-code mapping (see log.h). */
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

static enum log_level g_level = LOG_NORMAL;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level level) { g_level = level; }
enum log_level log_get_level(void) { return g_level; }

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&g_lock);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
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
