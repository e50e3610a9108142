/* log.h - one place where messages leave the program, and the error codes.
 *
 * Every function in the project returns 0 on success or one of the negative
 * codes below; only main() turns a code into an exit status:
 *   NB_EINPUT   -> exit 2 (bad scene, bad command line)
 *   NB_ERUNTIME -> exit 1 (I/O failure, GPU failure, NaN in the simulation)
 *   NB_EINTR    -> exit 130 (SIGINT / SIGTERM)
 * A function that returns an error has already logged one message that names
 * the thing (file:line:col: key.path: expected ..., got ...). */
#ifndef NB_LOG_H
#define NB_LOG_H

#include <stdarg.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	NB_OK = 0,
	NB_ERUNTIME = -1,
	NB_EINPUT = -2,
	NB_EINTR = -130,
};

/* Verbosity: LOG_QUIET prints only errors; set once by main from --quiet.
 * LOG_SILENT prints nothing at all (the fuzz harnesses, where an error is
 * the expected outcome of most inputs). */
enum log_level { LOG_SILENT = -1, LOG_QUIET = 0, LOG_NORMAL = 1 };
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* "nbody-render: error: <msg>\n" on stderr unless silent. Thread-safe.
 * A stderr that nobody reads (a closed pipe: EPIPE, with SIGPIPE ignored
 * by main; a closed descriptor: EBADF) is given up after the first failed
 * write: later messages are dropped, never retried, and the run goes on. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "nbody-render: warning: <msg>\n" on stderr unless quiet. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<msg>\n" on stderr unless quiet (progress and notices never go to stdout,
 * which carries --dry-run output only). */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Keep messages instead of printing them: the MPI ranks other than 0 make
 * the same input checks as rank 0, which alone reports them (main.c).
 * log_hold() starts keeping (up to 8 KB; the rest is dropped, and the
 * kept text then ends with a note saying so); log_release(print) stops
 * keeping, and prints what was kept when print is non-zero, else drops it. */
void log_hold(void);
void log_release(int print);

/* The one monotonic clock (CLOCK_MONOTONIC) every duration the program
 * reports is measured with: nanoseconds, and seconds as a double. */
uint64_t log_clock_ns(void);
double log_clock_s(void);

/* Exit status for an error code (see above). */
int log_exit_status(int err);

#ifdef __cplusplus
}
#endif
#endif
