/* progress.h - the progress line of a run (stderr).
 * On a terminal: one line rewritten in place. Otherwise: a plain line every
 * few seconds. Quiet (log level LOG_QUIET): nothing. */
#ifndef NB_PROGRESS_H
#define NB_PROGRESS_H

struct app_progress {
	int total_frames;
	int steps_per_frame;
	int tty, quiet;
	double t0, last_print;
};

void app_progress_start(struct app_progress *p, int total_frames, int steps_per_frame);
/* frames_done frames finished (1..total). */
void app_progress_update(struct app_progress *p, int frames_done);
/* End the live line (newline on a terminal). */
void app_progress_end(struct app_progress *p);

#endif
