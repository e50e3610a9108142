/* estimate_model.c - the estimate's fixed parts (estimate.h): the reference
 * rates and the interaction count of a force evaluation. The bottom of the
 * estimate's files: the calibration (calibrate.c), the cache (rates.c) and
 * the model (estimate.c) read it, and it calls none of them, so the three
 * make no circle (make check-rules). */
#include <math.h>

#include "app.h"
#include "estimate.h"

/* Measured on the development machine (2 shared cores, busy; docs/
 * BENCHMARKS.md, issue 29): the calibration's figures there, and encode,
 * PNG and file rates from real runs (the writer's busy time per pixel). */
const struct app_rates app_rates_reference = {
	.create_body = 1.8e-6,
	.create_disk = 5.4e-5,
	.direct_pair = 9.2e-9,
	.tree_inter = 5.9e-9,
	.frame_px = 6.9e-7,
	.frame_body = 2.6e-6,
	.encode_px = 5.8e-8,
	.png_px = 7.5e-7,
	.file_byte = 3.2e-8,
	/* issue 29's second round: in proportion to tree_inter as measured on
	 * the same machine (disk galaxy 1.25x, a build 200 interactions' time
	 * per body, the light's statistics 0.05 frame_body) */
	.tree_disk = 7.4e-9,
	.tree_build = 1.1e-6,
	.frame_track = 1.3e-7,
};

/* Rough tree model: interactions per body ~ 60 log2(N) / theta^2 (close
 * to the ~5,500 per body Ryoanji reports at N = 1M, theta = 0.6). */
double app_estimate_interactions(const struct scene *sc, double n)
{
	if (sc->simulation.solver == SCENE_SOLVER_DIRECT || n < 2)
		return n * (n - 1) / 2;
	double th = sc->simulation.theta > 0.05 ? sc->simulation.theta : 0.05;
	double per = 60 * log2(n) / (th * th);
	return n * (per < n ? per : n);
}
