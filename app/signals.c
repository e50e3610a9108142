/* signals.c - Ctrl-C and SIGTERM stop a run after the current frame.
 * The first signal sets a flag the frame loop polls; a second one takes the
 * default action (immediate exit) for a user who really means it. */
#include <signal.h>
#include <string.h>

#include "app.h"

static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
	g_interrupted = 1;
	signal(sig, SIG_DFL);
}

void app_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int app_interrupted(void) { return g_interrupted != 0; }
