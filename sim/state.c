/* state.c - allocation and release of struct sim_state (see sim.h). Every
 * array is zeroed so a partly filled state is never read uninitialised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

int sim_state_alloc(struct sim_state *st, size_t n, int ncomp)
{
	memset(st, 0, sizeof *st);
	size_t nn = n > 0 ? n : 1; /* calloc(0) may return NULL */
	st->pos = calloc(3 * nn, sizeof *st->pos);
	st->vel = calloc(3 * nn, sizeof *st->vel);
	st->acc = calloc(3 * nn, sizeof *st->acc);
	st->mass = calloc(nn, sizeof *st->mass);
	st->pot = calloc(nn, sizeof *st->pot);
	st->id = calloc(nn, sizeof *st->id);
	st->comp = calloc(nn, sizeof *st->comp);
	st->comps = calloc(ncomp > 0 ? (size_t)ncomp : 1, sizeof *st->comps);
	if (!st->pos || !st->vel || !st->acc || !st->mass || !st->pot || !st->id || !st->comp ||
	    !st->comps) {
		long long avail = sim_mem_available();
		log_error("out of memory allocating %zu bodies (%.1f MB needed, %.1f MB available)", n,
			  (double)n * (10 * sizeof(double) + sizeof(uint32_t) + sizeof(uint16_t)) / 1e6,
			  avail >= 0 ? (double)avail / 1e6 : NAN);
		sim_state_free(st);
		return NB_ERUNTIME;
	}
	st->n = n;
	st->ncomp = ncomp;
	for (size_t i = 0; i < n; i++)
		st->id[i] = (uint32_t)i;
	for (int c = 0; c < ncomp; c++)
		st->comps[c].brightness = 1.0f;
	return 0;
}

void sim_state_free(struct sim_state *st)
{
	if (!st)
		return;
	free(st->pos);
	free(st->vel);
	free(st->acc);
	free(st->mass);
	free(st->pot);
	free(st->id);
	free(st->pid);
	free(st->comp);
	free(st->comps);
	memset(st, 0, sizeof *st);
}

uint64_t sim_state_pid(const struct sim_state *st, size_t i)
{
	return st->pid ? st->pid[st->id[i]] : st->id[i];
}

int sim_state_pid_init(struct sim_state *st)
{
	if (st->pid)
		return 0;
	st->pid = malloc((st->n ? st->n : 1) * sizeof *st->pid);
	if (!st->pid) {
		log_error("out of memory for the ParticleIDs of %zu bodies", st->n);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < st->n; i++)
		st->pid[i] = i;
	return 0;
}

long long sim_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long long kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb >= 0 ? kb * 1024 : -1;
}

int sim_component_follows(const char *f, const char *cn)
{
	size_t lf = strlen(f);
	if (strcmp(f, cn) == 0)
		return 1;
	return strncmp(f, cn, lf) == 0 && cn[lf] == '.';
}

void sim_state_com(const struct sim_state *st, const unsigned char *sel, double com[3],
		   double *mass, size_t *count)
{
	double m = 0, s[3] = {0, 0, 0}, g[3] = {0, 0, 0};
	size_t cnt = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (sel && !sel[i])
			continue;
		for (int d = 0; d < 3; d++) {
			s[d] += st->mass[i] * st->pos[3 * i + d];
			g[d] += st->pos[3 * i + d];
		}
		m += st->mass[i];
		cnt++;
	}
	for (int d = 0; d < 3; d++)
		com[d] = m > 0 ? s[d] / m : (cnt ? g[d] / (double)cnt : 0.0);
	if (mass)
		*mass = m;
	if (count)
		*count = cnt;
}
