/* batch_group.c - which runs of a batch can share one simulation.
 *
 * Rule (docs/batch.md, "Simulating once for several views"): two runs
 * share when their resolved scenes, placed in their output directories,
 * are equal except for the view-only keys camera.*, render.* and output.*
 * other than output.frames - so the same scene file, units, seed,
 * simulation.*, bodies.*, encounter.* and output.frames. The comparison is
 * on scene_emit's text (every key, defaults included) of the scene with
 * the view-only keys zeroed, through two independent 64-bit hashes. A group
 * is led by its first run in batch order; its job simulates once and films
 * every run of the group (app_run_views). */
#include <stdlib.h>
#include <string.h>

#include "batch.h"

/* FNV-1a 64 and a multiply-xorshift hash with another basis: two
 * independent hashes of the same bytes (a false match needs both to
 * collide, ~2^-128 per pair). */
static void hash_bytes(const char *s, size_t n, uint64_t key[2])
{
	uint64_t a = 0xcbf29ce484222325ull, b = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		a = (a ^ c) * 0x100000001b3ull;
		b = (b + c + 1) * 0xbf58476d1ce4e5b9ull;
		b ^= b >> 29;
	}
	key[0] = a;
	key[1] = b ^ (uint64_t)n;
}

int batch_sim_key(const struct scene *sc, uint64_t key[2])
{
	struct scene *m = malloc(sizeof *m);
	char *text = NULL;
	size_t len = 0;
	int rc = NB_ERUNTIME;
	key[0] = key[1] = 0;
	if (!m)
		goto end;
	memcpy(m, sc, sizeof *m);
	int frames = m->output.frames;
	memset(&m->camera, 0, sizeof m->camera);
	memset(&m->render, 0, sizeof m->render);
	memset(&m->output, 0, sizeof m->output);
	m->output.frames = frames;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		goto end;
	fprintf(f, "%s\n%s\n", sc->path, sc->dir); /* the scene file, and the base of its file models */
	rc = scene_emit(m, f);
	fclose(f);
	if (rc == 0)
		hash_bytes(text, len, key);
end:
	if (rc)
		log_error("out of memory comparing the runs' scenes");
	free(text);
	free(m);
	return rc;
}

int batch_group(struct batch_run *runs, int nruns, int share)
{
	int groups = 0;
	for (int i = 0; i < nruns; i++) {
		struct batch_run *r = &runs[i];
		r->group = -1;
		r->group_size = 0;
		if (r->status != BATCH_PENDING || !r->loaded)
			continue;
		for (int j = 0; share && j < i && r->group < 0; j++)
			if (runs[j].group == j && runs[j].group_size < BATCH_MAX_VIEWS &&
			    runs[j].sim_key[0] == r->sim_key[0] && runs[j].sim_key[1] == r->sim_key[1])
				r->group = j;
		if (r->group < 0) {
			r->group = i;
			groups++;
		}
		runs[r->group].group_size++;
	}
	for (int i = 0; i < nruns; i++)
		if (runs[i].group >= 0)
			runs[i].group_size = runs[runs[i].group].group_size;
	return groups;
}

int batch_group_members(const struct batch_run *runs, int nruns, int lead, int *idx, int max)
{
	int n = 0;
	for (int i = lead; i < nruns && n < max; i++)
		if (runs[i].group == lead && runs[i].status == BATCH_PENDING)
			idx[n++] = i;
	return n;
}
