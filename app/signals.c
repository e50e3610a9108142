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
#include <unistd.h>

#include "../dist/dist.h"
#include "app.h"

static volatile sig_atomic_t g_interrupted;
static pid_t g_installer; /* the process that set the handlers up */

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	g_interrupted = 1;
	/* A signal sent by the process that set these handlers up is never
	 * the user insisting: a batch sends each run one SIGINT, and a run
	 * whose batch died gets its parent-death SIGINT once per thread of
	 * the dead batch (app/batch_exec.c). Any other second signal takes
	 * the default action. */
	if (!(si && si->si_code == SI_USER && si->si_pid == g_installer))
		signal(sig, SIG_DFL);
}

void app_signals_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	g_installer = getpid();
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
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
