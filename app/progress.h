/* progress.h - the progress line of a run (stderr).
 * On a terminal: one line rewritten in place. Otherwise: a plain line every
 * few seconds. Quiet (log level LOG_QUIET): nothing. */
#ifndef NB_PROGRESS_H
#define NB_PROGRESS_H

struct app_progress {
	int total_frames;
	int first; /* frames done before this run (a --restart's), not counted in its rates */
	int steps_per_frame;
	int tty, quiet;
	double t0, last_print;
};

/* first: the first frame this run renders (0, or after --restart the
 * snapshot's frame + 1): the frames before it and their steps were the
 * earlier run's, so the rates and the ETA count from it. */
void app_progress_start(struct app_progress *p, int total_frames, int steps_per_frame, int first);
/* Steps this run took once frames_done frames (0..total) are done: none
 * for frame 0 (the initial state) nor for the frames before first. */
long app_progress_steps(int frames_done, int first, int steps_per_frame);
/* frames_done frames finished (1..total). */
void app_progress_update(struct app_progress *p, int frames_done);
/* End the live line (newline on a terminal). */
void app_progress_end(struct app_progress *p);

#endif
