/* signals.c - Ctrl-C, SIGTERM and SIGHUP stop a run soon and cleanly.
 * The first signal sets a flag; the frame loops poll it after each frame,
 * and the simulation polls it between steps and inside the direct force
 * sum (sim_set_stop_check), so a long frame or a long step is cut short
 * within about a second. The run then finishes its video with the frames
 * made, removes its partial files and exits 130. A second signal takes
 * the default action (immediate exit) for a user who really means it.
 * A SIGHUP ignored at start (nohup) stays ignored.
 * One simulation over MPI ranks: rank 0 writes every output, so only
 * rank 0 acts on a signal; the others go on computing until rank 0 ends
 * the job, so that rank 0 can tell an interrupt (every rank answers) from
 * a dead rank (dist.h, "Ending a run over ranks").
 * SIGPIPE is ignored from main's start (a closed pipe on stdout or stderr
 * is a failed write, never a killed run). */
#include <signal.h>
#include <string.h>

#include "../dist/dist.h"
#include "app.h"

static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
	g_interrupted = 1;
	signal(sig, SIG_DFL);
}

void app_signals_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		/* started under nohup: SIGHUP stays ignored, as nohup asked */
		if (sigs[i] == SIGHUP && sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
	sim_set_stop_check(app_interrupted);
}

int app_interrupted(void) { return g_interrupted != 0 && !dist_defers_stop(); }
