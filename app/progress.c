/* progress.c - frame i/N, sim steps/s, frames/s and ETA on stderr. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "../scene/log.h"

void app_progress_start(struct app_progress *p, int total_frames, int steps_per_frame, int first)
{
	p->total_frames = total_frames;
	p->first = first > 0 ? first : 0;
	p->steps_per_frame = steps_per_frame;
	p->tty = isatty(2);
	p->quiet = log_get_level() == LOG_QUIET;
	p->t0 = log_clock_s();
	p->last_print = -1e9;
}

long app_progress_steps(int frames_done, int first, int steps_per_frame)
{
	/* frame f > 0 takes steps_per_frame steps; a restart starts with the
	 * snapshot's frame first - 1 in hand */
	int from = first > 1 ? first : 1;
	return frames_done > from ? (long)(frames_done - from) * steps_per_frame : 0;
}

static void fmt_eta(double s, char *buf, size_t n)
{
	if (s < 0 || s > 1e7)
		snprintf(buf, n, "--");
	else if (s >= 3600)
		snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
	else if (s >= 60)
		snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else
		snprintf(buf, n, "%.0fs", s);
}

void app_progress_update(struct app_progress *p, int done)
{
	if (p->quiet)
		return;
	double now = log_clock_s(), el = now - p->t0;
	int last = done >= p->total_frames;
	if (!last && now - p->last_print < (p->tty ? 0.2 : 5.0))
		return;
	p->last_print = now;
	/* this run's frames and steps only (a restart's earlier frames are not) */
	const int mine = done > p->first ? done - p->first : 0;
	double fps = el > 0 ? mine / el : 0;
	double steps = (double)app_progress_steps(done, p->first, p->steps_per_frame);
	char eta[32], rate[48] = "";
	fmt_eta(fps > 0 ? (p->total_frames - done) / fps : -1, eta, sizeof eta);
	if (steps > 0 && el > 0) /* frame 1 took no steps: no rate to say */
		snprintf(rate, sizeof rate, "  %.1f steps/s", steps / el);
	fprintf(stderr, "%sframe %d/%d%s  %.2f frames/s  ETA %s%s", p->tty ? "\r" : "", done,
		p->total_frames, rate, fps, eta, p->tty ? "\033[K" : "\n");
	fflush(stderr);
}

void app_progress_end(struct app_progress *p)
{
	if (!p->quiet && p->tty)
		fputc('\n', stderr);
}
