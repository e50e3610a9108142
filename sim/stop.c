/* stop.c - the process-wide stop check (sim_set_stop_check in sim.h): the
 * app installs one (a signal arrived), and the long CPU loops of sim/ ask it
 * (the direct sum before each row, the engine between steps). */
#include "sim.h"

static int (*g_stop_check)(void);

void sim_set_stop_check(int (*check)(void)) { g_stop_check = check; }

int sim_stop_requested(void) { return g_stop_check && g_stop_check(); }
