/* run_view.c - a view's outcome (run_view.h): what it placed, its
 * failure, how many are live. Read by both the run (app/run.c) and the
 * frame loop (app/frames.c), so it lives with the struct, not in either
 * of them (the run calls the loop; the loop does not call back into the
 * run). */
#include "../output/output.h"
#include "run_view.h"

void app_view_placed(struct run_view *v, enum app_out_row row, int member)
{
	struct run_placed *p = &v->out[row];
	p->placed = 1;
	if (member < 0)
		return;
	if (p->first < 0 || member < p->first)
		p->first = member;
	if (member > p->last)
		p->last = member;
}

void app_view_fail(struct run_view *v, int rc)
{
	if (v->rc)
		return;
	v->rc = rc ? rc : NB_ERUNTIME;
	if (v->w) {
		v->res->encode_s = out_writer_busy_seconds(v->w);
		v->res->png_s = out_writer_png_seconds(v->w);
		out_writer_close(&v->w, 0, 0);
	}
	if (v->stats) {
		sim_stats_close(v->stats, v->sc->output.stats, 0);
		v->stats = NULL;
	}
}

int app_views_live(const struct run_view *v, int nv)
{
	int live = 0;
	for (int i = 0; i < nv; i++)
		live += v[i].rc == 0;
	return live;
}
