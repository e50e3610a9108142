/* preview_fit.h - --preview TIME: the scene shrunk to fit a time budget on
 * this machine (issue 29).
 *
 * The fit works on the estimate model (app/estimate.h) and answers with
 * --set overrides, which the caller loads through scene_load_from like the
 * user's own: every check of the scene loader still holds, --dry-run shows
 * the shrunk scene and its estimate, and the list it prints can be given
 * back as --set options for the same scene. What it changes: the draft
 * accuracy when the scene is over budget at the default one (said; the
 * user's own --set simulation.accuracy keeps theirs), fewer frames
 * (steps_per_frame raised in proportion, so the simulated time is kept), a
 * smaller frame (aspect kept, even sizes), fewer bodies (each component's
 * total mass is a scene key, so it is unchanged: each body weighs more; a
 * dark part, a halo, keeps half the drawn parts' share; a
 * snapshot entry's bodies.*.subsample is lowered, which keeps its total
 * on average: the share kept by ID hash varies as 1/sqrt(kept); a body
 * table's rows are kept),
 * and the keys counted in frames rescaled so the last frame maps to the
 * last frame: camera keys (with their exposures), output.snapshots.every,
 * the smoothings of auto framing and auto exposure.
 *
 * Try: nbody-render scenes/plummer.yaml --preview 60s --dry-run | tail -12 */
#ifndef NB_APP_PREVIEW_FIT_H
#define NB_APP_PREVIEW_FIT_H

#include "../scene/scene.h"

/* The overrides to load: the user's, then the fit's. */
struct app_preview {
	char **mine;        /* the fit's "key=value" overrides (owned), nmine of them */
	int nmine;
	const char **sets;  /* the user's overrides then mine: nsets in all */
	const char **froms; /* their labels: the user's, then "--preview TIME" */
	int nsets;
	char label[96];     /* "--preview 60s" */
};

/* "60s", "2m", "1.5min", "1h", "90" (seconds) into *budget_s (> 0).
 * 0, or NB_EINPUT after one message naming the option and the value. */
int app_preview_parse(const char *text, double *budget_s);

/* sc: the scene as loaded with the user's overrides (sets, froms, nsets).
 * Fills p with the overrides that bring sc's estimate (this machine's
 * rates, app_rates_get) to within budget_s, and logs them as the exact
 * --set list; p->nmine is 0 when sc already fits (said). NB_EINPUT (logged,
 * before any work) when even the least scene it shrinks to - its bodies'
 * creation and the first frames at the smallest size - is over budget_s,
 * naming that minimum; NB_ERUNTIME on memory, or app_rates_get's error.
 * text: the option's value as given, for the messages. Free p with
 * app_preview_free, whatever the result. */
int app_preview_fit(const struct scene *sc, double budget_s, const char *text,
		    const char *const *sets, const char *const *froms, int nsets,
		    struct app_preview *p);
void app_preview_free(struct app_preview *p);

#endif
