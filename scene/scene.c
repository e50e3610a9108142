/* scene.c - load a scene file: YAML -> node tree (yaml_tree.c) -> --set
 * overrides spliced into the tree -> one walk over the tree driven by the
 * schema table (scene_schema.c) -> cross-key checks. See scene.h.
 *
 * Because overrides become tree nodes (marked with the --set string they
 * came from; see scene_set.c), they are checked by exactly the code that
 * checks the file. */
#include "scene.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "scene_accuracy.h"
#include "scene_schema.h"
#include "scene_warn.h"
#include "yaml_tree.h"

#define SCENE_FILE_MAX (16u << 20) /* a scene is text; refuse anything larger */
#define SCHEMA_MAX 256

struct load_ctx {
	struct scene_errctx ec;
	struct scene *sc;
	struct ynode *root;
	const struct ynode *seen[SCHEMA_MAX]; /* value node of each key, by schema index */
	const struct ynode *key_node[SCENE_MAX_KEYS];
	const struct ynode *key_fov[SCENE_MAX_KEYS]; /* its fov, if given (scene_warn_unused) */
	const struct ynode *body_placed[SCENE_MAX_BODIES]; /* its position or velocity, if given */
	const struct ynode *body_mass[SCENE_MAX_BODIES];   /* its mass, or the entry */
	const struct ynode *body_dust[SCENE_MAX_BODIES];   /* its dust.mass_fraction, if given */
	/* its scale, disk.scale, bulge.scale, halo.scale (each: the key, or the entry) */
	const struct ynode *body_scale[SCENE_MAX_BODIES][4];
	const struct ynode *body_series[SCENE_MAX_BODIES]; /* its snapshots: key, if given */
};

static int key_index(const struct scene_key *k) { return (int)(k - scene_schema); }

/* Key text fit for a message path: printable, at most 40 characters. */
static void clean_key(const char *k, char *buf, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; k[i] && o + 1 < size && i < 40; i++)
		buf[o++] = (k[i] > 32 && k[i] < 127) ? k[i] : '?';
	buf[o] = '\0';
	if (o == 0 && size > 2)
		snprintf(buf, size, "''");
}

static void index_path(char *out, size_t size, const char *parent, int i)
{
	char num[16];
	snprintf(num, sizeof(num), "%d", i);
	scene_path_join(out, size, parent, num);
}

static int walk_map(struct load_ctx *c, const struct ynode *m, const char *norm, const char *path,
		    struct scene_body *b, struct scene_camera_key *ck);

static void where_set(struct scene_where *w, const struct ynode *n)
{
	w->line = n->line;
	w->col = n->col;
	snprintf(w->origin, sizeof(w->origin), "%s", n->origin ? n->origin : "");
}

static int fail_not_map(struct load_ctx *c, const struct ynode *v, const char *norm,
			const char *path)
{
	char keys[512], got[160];
	scene_schema_list_keys(norm, keys, sizeof(keys));
	return scene_fail(&c->ec, v, path, "expected a map with keys %s, got %s", keys,
			  yaml_tree_describe(v, got, sizeof(got)));
}

/* Set every default of keys on BASE. */
static int apply_defaults(struct load_ctx *c, enum skey_base base, struct scene_body *b,
			  struct scene_camera_key *ck)
{
	enum scene_units units = c->sc->units; /* read before "units" gets its own default */
	for (int i = 0; i < scene_schema_count; i++) {
		const struct scene_key *k = &scene_schema[i];
		if (k->base != base || k->type == SKEY_MAP || k->type == SKEY_LIST)
			continue;
		void *dst = scene_schema_addr(k, c->sc, b, ck);
		int *aux = k->type == SKEY_NUM_OR_WORD || k->type == SKEY_PAIR_OR_WORD
				   ? (int *)((char *)c->sc + k->has_off)
				   : NULL;
		if (scene_value_default(k, units, dst, aux))
			return NB_EINPUT;
	}
	return 0;
}

/* A model's own length scales against its mass: the accelerations of its
 * initial state are about G M / a^2 (internal units, G = 1), which must
 * stay below SCENE_ACC_MAX (check_force_scale) or the initial state
 * overflows before the first step (a Plummer sphere of scale 1e-300, a
 * disk of scale 1e-30: refused at the scale, not by the run's finiteness
 * check, which would blame the time step). */
#define SCENE_SCALE_ACC_MAX 1e30
static int body_scale_check(struct load_ctx *c, int idx)
{
	const struct scene_body *b = &c->sc->bodies[idx];
	struct sim_units u;
	scene_units(c->sc, &u);
	const int galaxy = b->model == SCENE_MODEL_DISK_GALAXY;
	const int sphere = b->model == SCENE_MODEL_PLUMMER || b->model == SCENE_MODEL_HERNQUIST;
	if (!galaxy && !sphere)
		return 0;
	const struct {
		const char *key; /* under the entry */
		double mass, scale;
		long count;
	} sc5[4] = {
		{"scale", b->mass, b->scale, sphere ? b->count : 0},
		{"disk.scale", b->disk.mass, b->disk.scale, galaxy ? b->disk.count : 0},
		{"bulge.scale", b->bulge.mass, b->bulge.scale, galaxy ? b->bulge.count : 0},
		{"halo.scale", b->halo.mass, b->halo.scale, galaxy ? b->halo.count : 0},
	};
	for (int i = 0; i < 4; i++) {
		const char *key = sc5[i].key;
		const double mass = sc5[i].mass, a = sc5[i].scale;
		const long count = sc5[i].count;
		if (count <= 0 || !(mass > 0) || !(a > 0))
			continue;
		/* in logarithms: the quotient itself may overflow */
		double lg = log10(mass) + log10(u.mass) - 2 * (log10(a) + log10(u.length));
		if (lg <= log10(SCENE_SCALE_ACC_MAX))
			continue;
		char p[300];
		snprintf(p, sizeof(p), "bodies.%d.%s", idx, key);
		return scene_fail(&c->ec, c->body_scale[idx][i], p,
				  "expected a scale whose forces stay finite: a mass of %g within %g "
				  "gives accelerations of about 1e%.0f internal units (G M / scale^2), "
				  "beyond %g where the initial state overflows; raise the scale or lower "
				  "the mass",
				  mass, a, lg, SCENE_SCALE_ACC_MAX);
	}
	return 0;
}

static int body_checks(struct load_ctx *c, const struct ynode *m, const char *path, int idx)
{
	struct scene_body *b = &c->sc->bodies[idx];
	const struct ynode *name = yaml_tree_get(m, "name", NULL);
	char p[300];
	for (int j = 0; j < idx; j++) {
		if (strcmp(c->sc->bodies[j].name, b->name) == 0) {
			scene_path_join(p, sizeof(p), path, "name");
			return scene_fail(&c->ec, name, p,
					  "expected a name not used before, got '%s' (also bodies.%d.name)",
					  b->name, j);
		}
	}
	const struct ynode *cn = c->seen[key_index(scene_schema_find("bodies.*.count"))];
	where_set(&c->sc->where_body[idx], cn ? cn : m);
	const struct ynode *mn = c->seen[key_index(scene_schema_find("bodies.*.mass"))];
	c->body_mass[idx] = mn ? mn : m;
	c->body_placed[idx] = c->seen[key_index(scene_schema_find("bodies.*.position"))];
	if (!c->body_placed[idx])
		c->body_placed[idx] = c->seen[key_index(scene_schema_find("bodies.*.velocity"))];
	if (!c->seen[key_index(scene_schema_find("bodies.*.rmax"))])
		b->rmax = b->model == SCENE_MODEL_HERNQUIST ? 50.0 : 20.0;
	if (b->model == SCENE_MODEL_DISK_GALAXY && b->disk.count + b->bulge.count + b->halo.count < 1)
		return scene_fail(&c->ec, m, path,
				  "expected a disk-galaxy with at least one of disk, bulge, halo "
				  "with count > 0, got none");
	if (b->model == SCENE_MODEL_DISK_GALAXY) {
		/* a part with bodies needs mass (sim/galaxy.c builds none without):
		 * refused here, at the key, so that --dry-run refuses it too */
		static const char *const parts[3] = {"disk", "bulge", "halo"};
		const struct scene_part *pp[3] = {&b->disk, &b->bulge, &b->halo};
		for (int j = 0; j < 3; j++) {
			if (pp[j]->count <= 0 || pp[j]->mass > 0)
				continue;
			char key[40], sub[24];
			snprintf(key, sizeof(key), "bodies.*.%s.mass", parts[j]);
			snprintf(sub, sizeof(sub), "%s.mass", parts[j]);
			const struct ynode *at = c->seen[key_index(scene_schema_find(key))];
			scene_path_join(p, sizeof(p), path, sub);
			return scene_fail(&c->ec, at ? at : m, p,
					  "expected a mass > 0 for a %s with %ld bodies, got %g (count: 0 "
					  "leaves the part out)",
					  parts[j], pp[j]->count, pp[j]->mass);
		}
	}
	static const char *const scale_keys[4] = {"bodies.*.scale", "bodies.*.disk.scale",
						  "bodies.*.bulge.scale", "bodies.*.halo.scale"};
	for (int j = 0; j < 4; j++) {
		const struct ynode *at = c->seen[key_index(scene_schema_find(scale_keys[j]))];
		c->body_scale[idx][j] = at ? at : m;
	}
	c->body_series[idx] = c->seen[key_index(scene_schema_find("bodies.*.snapshots"))];
	if (b->model == SCENE_MODEL_FILE || b->model == SCENE_MODEL_SNAPSHOT) {
		const struct ynode *fn = yaml_tree_get(m, "file", NULL);
		const char *what = b->model == SCENE_MODEL_FILE ? "a state CSV" : "a snapshot";
		scene_path_join(p, sizeof(p), path, "file");
		if (b->file[0] == '\0')
			return scene_fail(&c->ec, fn ? fn : m, p, "missing required key (model %s needs %s path)",
					  scene_model_names[b->model], what);
		/* Stored absolute, so that an emitted scene works from anywhere. */
		char joined[2 * SCENE_PATH_MAX + 2], real[PATH_MAX];
		if (b->file[0] == '/')
			snprintf(joined, sizeof(joined), "%s", b->file);
		else
			snprintf(joined, sizeof(joined), "%s/%s", c->sc->dir, b->file);
		if (!realpath(joined, real))
			return scene_fail(&c->ec, fn, p, "cannot open '%s': %s%s%s", joined, strerror(errno),
					  b->source[0] ? "; it comes from " : "", b->source);
		char why[300];
		int fd = scene_infile_open(real, why, sizeof(why));
		if (fd < 0)
			return scene_fail(&c->ec, fn, p, "cannot use '%s' as %s: %s", real, what, why);
		close(fd);
		if (strlen(real) >= sizeof(b->file))
			return scene_fail(&c->ec, fn, p, "expected a path shorter than %d, got %zu characters",
					  SCENE_PATH_MAX, strlen(real));
		memcpy(b->file, real, strlen(real) + 1);
	}
	return 0;
}

static int walk_list(struct load_ctx *c, const struct scene_key *k, const struct ynode *v,
		     const char *norm, const char *path)
{
	char got[160], inorm[300], ipath[300];
	int is_bodies = strcmp(k->path, "bodies") == 0;
	int max = is_bodies ? SCENE_MAX_BODIES : SCENE_MAX_KEYS;
	if (v->kind != YNODE_SEQ)
		return scene_fail(&c->ec, v, path, "expected a list of maps, got %s",
				  yaml_tree_describe(v, got, sizeof(got)));
	if (v->n > max)
		return scene_fail(&c->ec, v->items[max], path, "expected at most %d entries, got %d",
				  max, v->n);
	if (is_bodies && v->n == 0)
		return scene_fail(&c->ec, v, path, "expected a list of at least one body, got an empty list");
	scene_path_join(inorm, sizeof(inorm), norm, "*");
	for (int i = 0; i < v->n; i++) {
		const struct ynode *item = v->items[i];
		index_path(ipath, sizeof(ipath), path, i);
		if (item->kind != YNODE_MAP)
			return fail_not_map(c, item, inorm, ipath);
		/* forget the previous entry's keys */
		for (int j = 0; j < scene_schema_count; j++)
			if (strncmp(scene_schema[j].path, inorm, strlen(inorm)) == 0)
				c->seen[j] = NULL;
		if (is_bodies) {
			struct scene_body *b = &c->sc->bodies[i];
			memset(b, 0, sizeof(*b));
			if (apply_defaults(c, SBASE_BODY, b, NULL) ||
			    walk_map(c, item, inorm, ipath, b, NULL))
				return NB_EINPUT;
			c->sc->nbodies = i + 1;
			if (body_checks(c, item, ipath, i))
				return NB_EINPUT;
		} else {
			struct scene_camera_key *ck = &c->sc->camera.keys[i];
			memset(ck, 0, sizeof(*ck));
			if (walk_map(c, item, inorm, ipath, NULL, ck))
				return NB_EINPUT;
			c->key_node[i] = c->seen[key_index(scene_schema_find("camera.keys.*.frame"))];
			c->key_fov[i] = c->seen[key_index(scene_schema_find("camera.keys.*.fov"))];
			c->sc->camera.nkeys = i + 1;
			if (i > 0 && ck->frame <= c->sc->camera.keys[i - 1].frame) {
				char fp[300];
				scene_path_join(fp, sizeof(fp), ipath, "frame");
				return scene_fail(&c->ec, c->key_node[i], fp,
						  "expected a frame > %d (keys must be strictly increasing), got %d",
						  c->sc->camera.keys[i - 1].frame, ck->frame);
			}
		}
	}
	return 0;
}

/* Key KN (at KPATH) is not in the schema under NORM. NB_EINPUT (reported). */
static int fail_unknown_key(struct load_ctx *c, const struct ynode *kn, const char *norm,
			    const char *kpath)
{
	char list[512];
	const char *near = scene_schema_suggest(norm, kn->text);
	scene_schema_list_keys(norm, list, sizeof(list));
	if (near)
		return scene_fail(&c->ec, kn, kpath,
				  "unknown key, did you mean '%s'? (expected one of %s)", near, list);
	return scene_fail(&c->ec, kn, kpath, "unknown key (expected one of %s)", list);
}

/* Key KN (at KPATH) is not one of body B's model's. NB_EINPUT (reported). */
static int fail_model_key(struct load_ctx *c, const struct ynode *kn, const char *norm,
			  const char *kpath, const struct scene_body *b)
{
	char keys[512];
	size_t o = 0;
	keys[0] = '\0';
	for (int j = 0; j < scene_schema_count && o < sizeof(keys); j++)
		if (scene_schema_is_child(&scene_schema[j], norm) &&
		    (scene_schema[j].models & SMODEL(b->model)))
			o += (size_t)snprintf(keys + o, sizeof(keys) - o, "%s%s", o ? ", " : "",
					      scene_schema_leaf(&scene_schema[j]));
	return scene_fail(&c->ec, kn, kpath, "unknown key for model %s (its keys are %s)",
			  scene_model_names[b->model], keys);
}

/* Every required key under NORM is in map M (at PATH). */
static int check_required(struct load_ctx *c, const struct ynode *m, const char *norm,
			  const char *path)
{
	char kpath[300];
	for (int j = 0; j < scene_schema_count; j++) {
		const struct scene_key *k = &scene_schema[j];
		if (!(k->flags & SKEY_REQUIRED) || !scene_schema_is_child(k, norm))
			continue;
		const struct ynode *v = yaml_tree_get(m, scene_schema_leaf(k), NULL);
		if (!v || ((k->type == SKEY_MAP || k->type == SKEY_LIST) && yaml_tree_is_null(v))) {
			scene_path_join(kpath, sizeof(kpath), path, scene_schema_leaf(k));
			return scene_fail(&c->ec, v ? v : m, kpath,
					  "missing required key (expected %s: %s)", k->type_doc, k->help);
		}
	}
	return 0;
}

static int walk_map(struct load_ctx *c, const struct ynode *m, const char *norm, const char *path,
		    struct scene_body *b, struct scene_camera_key *ck)
{
	char knorm[300], kpath[300], clean[64];
	if (m->kind != YNODE_MAP)
		return fail_not_map(c, m, norm, path);
	if (b) { /* the model decides which keys a body may have: read it first */
		const struct ynode *mv = yaml_tree_get(m, "model", NULL);
		if (mv) {
			scene_path_join(kpath, sizeof(kpath), path, "model");
			if (scene_value_set(&c->ec, scene_schema_find("bodies.*.model"), mv, kpath,
					    &b->model, NULL))
				return NB_EINPUT;
		}
	}
	for (int i = 0; i < m->n; i++) {
		const struct ynode *kn = m->keys[i], *v = m->items[i];
		clean_key(kn->text, clean, sizeof(clean));
		scene_path_join(kpath, sizeof(kpath), path, clean);
		for (int j = 0; j < i; j++)
			if (strcmp(m->keys[j]->text, kn->text) == 0) {
				if (m->keys[j]->origin)
					return scene_fail(&c->ec, kn, kpath, "duplicate key");
				return scene_fail(&c->ec, kn, kpath, "duplicate key (first given at line %d)",
						  m->keys[j]->line);
			}
		scene_path_join(knorm, sizeof(knorm), norm, kn->text);
		const struct scene_key *k = kn->len == strlen(kn->text) ? scene_schema_find(knorm) : NULL;
		if (!k)
			return fail_unknown_key(c, kn, norm, kpath);
		if (b && k->models && !(k->models & SMODEL(b->model)))
			return fail_model_key(c, kn, norm, kpath, b);
		c->seen[key_index(k)] = v;
		if (b && strcmp(k->path, "bodies.*.dust.mass_fraction") == 0)
			c->body_dust[b - c->sc->bodies] = v;
		if (k->base == SBASE_SCENE)
			where_set(&c->sc->where[key_index(k)], v);
		if (k->type == SKEY_MAP || k->type == SKEY_LIST) {
			if (yaml_tree_is_null(v))
				continue; /* "key:" alone or null: as if absent */
			if (strcmp(k->path, "encounter") == 0)
				c->sc->encounter.enabled = 1;
			int err = k->type == SKEY_MAP ? walk_map(c, v, knorm, kpath, b, ck)
						      : walk_list(c, k, v, knorm, kpath);
			if (err)
				return err;
			continue;
		}
		if (k->path[0] == 'b' && strcmp(k->path, "bodies.*.model") == 0)
			continue; /* read above */
		void *dst = scene_schema_addr(k, c->sc, b, ck);
		int *aux = NULL;
		if (k->type == SKEY_NUM_OR_WORD || k->type == SKEY_PAIR_OR_WORD)
			aux = (int *)((char *)c->sc + k->has_off);
		else if (k->flags & SKEY_HAS)
			aux = (int *)((char *)ck + k->has_off);
		if (scene_value_set(&c->ec, k, v, kpath, dst, aux))
			return NB_EINPUT;
	}
	return check_required(c, m, norm, path);
}

/* ---- checks across keys ---- */

static const struct ynode *seen(struct load_ctx *c, const char *path)
{
	const struct ynode *n = c->seen[key_index(scene_schema_find(path))];
	return n ? n : c->root;
}

/* The place of the first of the keys PATHS (NULL-terminated) that the file
 * or a --set gave: a check across keys points at a key the user wrote, not
 * at line 1 when the key it names was left at its default. */
static const struct ynode *seen_any(struct load_ctx *c, const char *const *paths)
{
	for (; *paths; paths++) {
		const struct ynode *n = c->seen[key_index(scene_schema_find(*paths))];
		if (n)
			return n;
	}
	return c->root;
}

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* Camera frame sanity: up not zero, eye not on the target, up not along the
 * line of sight (the view basis would be undefined). */
static int check_view(struct load_ctx *c, const struct ynode *at, const char *path,
		      const double pos[3], const double tgt[3], const double up[3])
{
	double d[3] = {tgt[0] - pos[0], tgt[1] - pos[1], tgt[2] - pos[2]};
	double nd = norm3(d), nu = norm3(up);
	if (!(nu > 0))
		return scene_fail(&c->ec, at, path, "expected an up vector that is not zero, got [0, 0, 0]");
	if (!(nd > 0))
		return scene_fail(&c->ec, at, path,
				  "expected a position away from the target, got both at the same point");
	double cr[3] = {d[1] * up[2] - d[2] * up[1], d[2] * up[0] - d[0] * up[2],
			d[0] * up[1] - d[1] * up[0]};
	if (!(norm3(cr) > 1e-9 * nd * nu))
		return scene_fail(&c->ec, at, path,
				  "expected an up vector not along the line of sight, got one parallel to it");
	return 0;
}

static int ends_with_ci(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcasecmp(s + ls - lx, suffix) == 0;
}

/* Mass against softening: the largest acceleration two bodies can give
 * each other is G M / eps^2 (M: all the mass, internal units, G = 1). Above
 * SCENE_ACC_MAX forces, velocities and energies overflow, first in float on
 * the GPU (3.4e38) - a run that would blow up at its first step. File
 * models are left out (their masses are in the CSV). */
#define SCENE_ACC_MAX 1e30
/* The smallest softening length the scene gives any body (entry, disk part
 * or snapshot type; 0 = the level above), scene length units. */
static double scene_soft_min(struct scene *sc)
{
	double *keys[SCENE_SOFT_KEYS_MAX], lo = sc->simulation.softening;
	const int n = scene_soft_keys(sc, keys);
	for (int k = 1; k < n; k++)
		if (*keys[k] > 0 && *keys[k] < lo)
			lo = *keys[k];
	return lo;
}

static int check_force_scale(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	const double eps_lo = scene_soft_min(c->sc);
	struct sim_units u;
	scene_units(sc, &u);
	double total = 0, most = -1; /* total / 256: no overflow even when every mass is huge */
	int heavy = -1;
	for (int i = 0; i < sc->nbodies; i++) {
		const struct scene_body *b = &sc->bodies[i];
		double m = b->model == SCENE_MODEL_DISK_GALAXY
				   ? b->disk.mass + b->bulge.mass + b->halo.mass
			   : b->model == SCENE_MODEL_FILE || b->model == SCENE_MODEL_SNAPSHOT ? 0
							  : b->mass;
		total += m / 256;
		if (m > most)
			most = m, heavy = i;
	}
	if (heavy < 0 || !(total > 0))
		return 0;
	/* in logarithms: the quotient itself may overflow; the smallest
	 * softening length any entry, part or type gives */
	double eps = eps_lo * u.length;
	double lg = log10(total) + log10(256.0) + log10(u.mass) - 2 * log10(eps);
	if (lg <= log10(SCENE_ACC_MAX))
		return 0;
	total *= 256;
	char p[64];
	snprintf(p, sizeof(p), "bodies.%d%s", heavy,
		 sc->bodies[heavy].model == SCENE_MODEL_DISK_GALAXY ? "" : ".mass");
	return scene_fail(&c->ec, c->body_mass[heavy], p,
			  "expected a mass whose forces stay finite: a total mass of %g with "
			  "a softening of %g (the smallest length given) gives accelerations up to "
			  "about 1e%.0f internal units (G M / softening^2), beyond %g where they "
			  "overflow; lower the masses or raise the softening",
			  total, eps_lo, lg, SCENE_ACC_MAX);
}

/* A film series (bodies.*.snapshots) is filmed, not simulated: it needs
 * simulation.solver: none and must be the scene's only entry (app/run.c
 * plays it so). Refused here, at the key, so that --dry-run refuses it
 * too (before: only the run did, without a place). */
static int check_series(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	for (int i = 0; i < sc->nbodies; i++) {
		const struct scene_body *b = &sc->bodies[i];
		if (b->model != SCENE_MODEL_SNAPSHOT || !b->snap.series[0])
			continue;
		char p[64];
		snprintf(p, sizeof(p), "bodies.%d.snapshots", i);
		const struct ynode *at = c->body_series[i] ? c->body_series[i] : c->root;
		if (sc->simulation.solver != SCENE_SOLVER_NONE)
			return scene_fail(&c->ec, at, p,
					  "a series is filmed, not simulated: it needs simulation.solver: "
					  "none, got %s",
					  sc->simulation.solver == SCENE_SOLVER_BARNES_HUT ? "barnes-hut"
											 : "direct");
		if (sc->nbodies != 1)
			return scene_fail(&c->ec, at, p,
					  "a filmed series must be the scene's only bodies entry, got %d "
					  "entries",
					  sc->nbodies);
	}
	return 0;
}

/* An encounter: two bodies, and a separation its orbit reaches. */
static int check_encounter(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	if (sc->encounter.enabled) {
		if (sc->nbodies != 2)
			return scene_fail(&c->ec, seen(c, "encounter"), "encounter",
					  "expected exactly 2 entries in bodies (the two galaxies), got %d",
					  sc->nbodies);
		for (int i = 0; i < 2; i++) {
			/* a snapshot's mass is in its file, which the orbit cannot see */
			if (sc->bodies[i].model == SCENE_MODEL_SNAPSHOT)
				return scene_fail(&c->ec, seen(c, "encounter"), "encounter",
						  "expected bodies 0 and 1 whose mass the scene gives, got "
						  "bodies.%d (%s) of model snapshot (its mass is in the file: "
						  "place it with bodies.%d.position and velocity instead)",
						  i, sc->bodies[i].name, i);
			const struct ynode *at = c->body_placed[i];
			if (!at)
				continue;
			if (at->origin)
				log_warn("%s: bodies.%d: position and velocity are ignored: "
					 "encounter places bodies 0 and 1", at->origin, i);
			else
				log_warn("%s:%d:%d: bodies.%d: position and velocity are ignored: "
					 "encounter places bodies 0 and 1", c->ec.name, at->line, at->col, i);
		}
		static const char *const orbit_keys[] = {"encounter.separation", "encounter.pericenter",
							 "encounter.eccentricity", NULL};
		double rp = sc->encounter.pericenter, r0 = sc->encounter.separation;
		double e = sc->encounter.eccentricity;
		if (r0 < rp)
			return scene_fail(&c->ec, seen_any(c, orbit_keys), "encounter.separation",
					  "expected a number >= encounter.pericenter (%g), got %g", rp, r0);
		if (e < 1) {
			double apo = rp * (1 + e) / (1 - e);
			if (r0 > apo)
				return scene_fail(&c->ec, seen_any(c, orbit_keys),
						  "encounter.separation",
						  "expected a number <= the apocentre %g of a bound orbit with "
						  "eccentricity %g, got %g",
						  apo, e, r0);
		}
	}
	return 0;
}

/* The camera and its keys: each key completed from the camera, each view
 * sane. */
static int check_camera(struct load_ctx *c)
{
	struct scene *sc = c->sc;
	char p[300];
	static const char *const view_keys[] = {"camera.up", "camera.position", "camera.target", NULL};
	if (check_view(c, seen_any(c, view_keys), "camera", sc->camera.position, sc->camera.target,
		       sc->camera.up))
		return NB_EINPUT;
	if (sc->camera.nkeys == 0) { /* one key with the defaults: renderers see >= 1 key */
		memset(&sc->camera.keys[0], 0, sizeof(sc->camera.keys[0]));
		sc->camera.nkeys = 1;
	}
	for (int i = 0; i < sc->camera.nkeys; i++) {
		struct scene_camera_key *k = &sc->camera.keys[i];
		if (!k->has_position)
			memcpy(k->position, sc->camera.position, sizeof(k->position));
		if (!k->has_target)
			memcpy(k->target, sc->camera.target, sizeof(k->target));
		if (!k->has_up)
			memcpy(k->up, sc->camera.up, sizeof(k->up));
		if (!k->has_fov)
			k->fov = sc->camera.fov;
		index_path(p, sizeof(p), "camera.keys", i);
		if (check_view(c, c->key_node[i] ? c->key_node[i] : seen(c, "camera.keys"), p,
			       k->position, k->target, k->up))
			return NB_EINPUT;
	}
	return 0;
}

/* camera.projection and camera.stereo against the frame and the look:
 * each eye's image (the frame, or its half with stereo) is square for the
 * fisheye and 2:1 for equirectangular; no stereo with the fisheye; no dust
 * with equirectangular (its optical depth does not wrap at the seam). */
static int check_projection(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	static const char *const size_keys[] = {"render.width", "render.height", "camera.projection",
						"camera.stereo.mode", NULL};
	static const char *const proj_keys[] = {"camera.projection", NULL};
	const int proj = sc->camera.projection, mode = sc->camera.stereo.mode;
	const int w = sc->render.width, h = sc->render.height;
	const int ew = mode == SCENE_STEREO_SIDE_BY_SIDE ? w / 2 : w;
	const int eh = mode == SCENE_STEREO_TOP_BOTTOM ? h / 2 : h;
	if (proj == SCENE_PROJ_FISHEYE && mode != SCENE_STEREO_NONE)
		return scene_fail(&c->ec, seen(c, "camera.stereo.mode"), "camera.stereo.mode",
				  "expected none with camera.projection: fisheye (stereo is built "
				  "for perspective and equirectangular), got %s",
				  mode == SCENE_STEREO_SIDE_BY_SIDE ? "side-by-side" : "top-bottom");
	if (proj == SCENE_PROJ_FISHEYE && w != h)
		return scene_fail(&c->ec, seen_any(c, size_keys), "render.width",
				  "camera.projection: fisheye draws a domemaster: expected a square "
				  "frame, got %dx%d",
				  w, h);
	if (proj == SCENE_PROJ_EQUIRECT && (ew != 2 * eh || ew % 2))
		return scene_fail(&c->ec, seen_any(c, size_keys), "render.width",
				  "camera.projection: equirectangular needs each eye's image 2:1 with "
				  "an even width (%s: width = %s height), got a %dx%d frame",
				  mode == SCENE_STEREO_NONE ? "mono" : mode == SCENE_STEREO_TOP_BOTTOM ?
				  "top-bottom" : "side-by-side",
				  mode == SCENE_STEREO_NONE ? "2 x" : mode == SCENE_STEREO_TOP_BOTTOM ?
				  "1 x" : "4 x", w, h);
	if (mode == SCENE_STEREO_SIDE_BY_SIDE && w % 4)
		return scene_fail(&c->ec, seen_any(c, size_keys), "render.width",
				  "camera.stereo.mode: side-by-side needs a width divisible by 4 "
				  "(two even halves), got %d", w);
	if (mode == SCENE_STEREO_TOP_BOTTOM && h % 4)
		return scene_fail(&c->ec, seen_any(c, size_keys), "render.height",
				  "camera.stereo.mode: top-bottom needs a height divisible by 4 "
				  "(two even halves), got %d", h);
	/* FITS maps carry one coordinate system (output/fits.c): one eye's */
	static const char *const fits_keys[] = {"output.fits_dir", NULL};
	if (sc->output.fits_dir[0] && mode != SCENE_STEREO_NONE)
		return scene_fail(&c->ec, seen_any(c, fits_keys), "output.fits_dir",
				  "FITS maps are written for one eye (their keywords give one "
				  "coordinate system for the whole image), got camera.stereo.mode: %s; "
				  "write the maps from a mono run of the same camera",
				  mode == SCENE_STEREO_TOP_BOTTOM ? "top-bottom" : "side-by-side");
	if (proj != SCENE_PROJ_EQUIRECT)
		return 0;
	for (int i = 0; i < sc->nbodies; i++) {
		const struct scene_body *b = &sc->bodies[i];
		if (b->model == SCENE_MODEL_DISK_GALAXY && b->dust.mass_fraction > 0)
			return scene_fail(&c->ec, seen_any(c, proj_keys), "camera.projection",
					  "equirectangular frames do not draw dust (bodies.%d.dust: "
					  "its absorption does not wrap at the +-180 degree seam); use "
					  "perspective or fisheye, or remove the dust",
					  i);
	}
	return 0;
}

/* camera.follow names a body, a part of a disk galaxy, all or nothing. */
static int check_follow(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	const char *f = sc->camera.follow;
	if (f[0] && strcmp(f, "all") != 0 && strcmp(f, "light") != 0 && scene_find_body(sc, f) < 0) {
		/* NAME.disk / NAME.bulge / NAME.halo (/ NAME.dust) of a disk galaxy */
		const char *dot = strrchr(f, '.');
		int ok = 0;
		if (dot && (strcmp(dot, ".disk") == 0 || strcmp(dot, ".bulge") == 0 ||
			    strcmp(dot, ".halo") == 0 || strcmp(dot, ".young") == 0 ||
			    strcmp(dot, ".dust") == 0)) {
			char base[SCENE_NAME_MAX];
			snprintf(base, sizeof(base), "%.*s", (int)(dot - f), f);
			int b = scene_find_body(sc, base);
			ok = b >= 0 && sc->bodies[b].model == SCENE_MODEL_DISK_GALAXY &&
			     (strcmp(dot, ".dust") != 0 || scene_dust_count(&sc->bodies[b]) > 0);
		}
		if (!ok) {
			char names[600];
			size_t o = (size_t)snprintf(names, sizeof(names), "\"\", all, light");
			for (int i = 0; i < sc->nbodies && o < sizeof(names); i++)
				o += (size_t)snprintf(names + o, sizeof(names) - o, ", %s", sc->bodies[i].name);
			return scene_fail(&c->ec, seen(c, "camera.follow"), "camera.follow",
					  "expected one of %s (or NAME.disk/.bulge/.halo/.young/.dust of a disk-galaxy), got '%s'",
					  names, f);
		}
	}
	return 0;
}

/* camera.frame_range is [lo, hi] with lo <= hi (each bound by the schema);
 * camera.frame: auto frames a perspective picture (render/framing_shared.h). */
static int check_framing(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	const double *r = sc->camera.frame_range;
	if (!(r[0] <= r[1]))
		return scene_fail(&c->ec, seen(c, "camera.frame_range"), "camera.frame_range",
				  "expected [lo, hi] with lo <= hi, got [%g, %g]", r[0], r[1]);
	if (sc->camera.frame == SCENE_FRAME_AUTO && sc->camera.projection != SCENE_PROJ_PERSPECTIVE)
		return scene_fail(&c->ec, seen(c, "camera.frame"), "camera.frame",
				  "expected keys with camera.projection: %s (auto frames the "
				  "perspective picture only), got auto",
				  sc->camera.projection == SCENE_PROJ_FISHEYE ? "fisheye" : "equirectangular");
	return 0;
}

/* Dust (bodies.*.dust): drawn only by render.style: stars in components
 * mode (render/dust.c), and at least one dust body. */
static int check_dust(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	char p[64];
	for (int i = 0; i < sc->nbodies; i++) {
		const struct scene_body *b = &sc->bodies[i];
		if (b->model != SCENE_MODEL_DISK_GALAXY || !(b->dust.mass_fraction > 0))
			continue;
		const struct ynode *at = c->body_dust[i] ? c->body_dust[i] : c->root;
		snprintf(p, sizeof(p), "bodies.%d.dust.mass_fraction", i);
		if (sc->render.style != SCENE_STYLE_STARS)
			return scene_fail(&c->ec, at, p,
					  "dust is drawn only with render.style: stars (the smooth style "
					  "has no depth compositing); set render.style: stars or remove the dust");
		if (sc->render.mode != SCENE_COLOR_COMPONENTS)
			return scene_fail(&c->ec, at, p,
					  "dust is drawn only with render.mode: components (density mode "
					  "lights every body by its mass, dust included)");
		if (sc->render.color_by != SCENE_COLOR_BY_COMPONENT)
			return scene_fail(&c->ec, at, p,
					  "dust is drawn only with render.color_by: component (colouring "
					  "by a quantity through dust is not built yet)");
		if (scene_dust_count(b) < 1)
			return scene_fail(&c->ec, at, p,
					  "expected a fraction that leaves at least one dust body: %g x "
					  "disk.count %ld rounds to 0",
					  b->dust.mass_fraction, b->disk.count);
		/* young and dust bodies are both carved out of the disk's */
		long ny = (long)floor(b->disk.young_fraction * (double)b->disk.count + 0.5);
		if (ny + scene_dust_count(b) > b->disk.count)
			return scene_fail(&c->ec, at, p,
					  "expected dust.mass_fraction + disk.young_fraction <= 1: %g + %g "
					  "of disk.count %ld leaves no room",
					  b->dust.mass_fraction, b->disk.young_fraction, b->disk.count);
	}
	return 0;
}

/* overlay.title is drawn with a font of printable ASCII (render.h). */
static int check_overlay_title(struct load_ctx *c)
{
	const unsigned char *t = (const unsigned char *)c->sc->overlay.title;
	for (int i = 0; t[i]; i++)
		if (t[i] < 32 || t[i] > 126)
			return scene_fail(&c->ec, seen(c, "overlay.title"), "overlay.title",
					  "character %d (byte 0x%02x) has no glyph: the overlay font "
					  "draws printable ASCII only (space to '~')", i + 1, t[i]);
	return 0;
}

/* render.color_by, color_range and colormap_file (read here, stored
 * absolute like a body file). */
static int check_colour(struct load_ctx *c)
{
	struct scene *sc = c->sc;
	if (sc->render.color_by != SCENE_COLOR_BY_COMPONENT && sc->render.mode == SCENE_COLOR_DENSITY)
		return scene_fail(&c->ec, seen(c, "render.color_by"), "render.color_by",
				  "expected component with render.mode: density (colour by a "
				  "quantity needs mode components)");
	if (!sc->render.color_range_auto && !(sc->render.color_range[0] < sc->render.color_range[1]))
		return scene_fail(&c->ec, seen(c, "render.color_range"), "render.color_range",
				  "expected [lo, hi] with lo < hi, got [%g, %g]",
				  sc->render.color_range[0], sc->render.color_range[1]);
	char *file = sc->render.colormap_file;
	if (!file[0])
		return 0;
	char joined[2 * SCENE_PATH_MAX + 2], real[PATH_MAX];
	if (file[0] == '/')
		snprintf(joined, sizeof(joined), "%s", file);
	else
		snprintf(joined, sizeof(joined), "%s/%s", sc->dir, file);
	if (!realpath(joined, real))
		return scene_fail(&c->ec, seen(c, "render.colormap_file"), "render.colormap_file",
				  "cannot open '%s': %s", joined, strerror(errno));
	if (strlen(real) >= sizeof(sc->render.colormap_file))
		return scene_fail(&c->ec, seen(c, "render.colormap_file"), "render.colormap_file",
				  "expected a path shorter than %d, got %zu characters", SCENE_PATH_MAX,
				  strlen(real));
	if (scene_lut_read(real, sc->render.colormap_lut))
		return NB_EINPUT;
	memcpy(file, real, strlen(real) + 1);
	return 0;
}

/* render.motion_blur: the stars splat draws the sub-frame positions
 * (render/blur.c); the smooth splat, the adaptive diffuse layer (a smooth
 * splat) and the dust slabs do not, so they refuse it rather than blur
 * half a frame. */
static int check_motion_blur(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	if (sc->render.motion_blur.samples <= 1)
		return 0;
	const struct ynode *at = seen(c, "render.motion_blur.samples");
	const char *k = "render.motion_blur.samples";
	if (sc->render.style != SCENE_STYLE_STARS)
		return scene_fail(&c->ec, at, k,
				  "motion blur is drawn only with render.style: stars (the smooth "
				  "style does not blur); set render.style: stars or samples: 1");
	if (sc->render.diffuse > 0 && sc->render.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE)
		return scene_fail(&c->ec, at, k,
				  "motion blur needs render.diffuse_smoothing: screen (the adaptive "
				  "layer is a smooth splat, which does not blur), or render.diffuse: 0");
	for (int i = 0; i < sc->nbodies; i++)
		if (scene_dust_count(&sc->bodies[i]) > 0)
			return scene_fail(&c->ec, at, k,
					  "motion blur is not drawn through dust (bodies.%d.dust): "
					  "set samples: 1 or remove the dust", i);
	return 0;
}

/* render.gpu_memory given in bytes may draw out of core (render/cuda/
 * render_ooc.cu): only film mode does, and only what adds up chunk by
 * chunk. Refused here: a neighbour search over all bodies (adaptive h,
 * the adaptive diffuse layer) and the dust's depth slabs (spanning all the
 * dust bodies' depths). auto is checked when the renderer is made. */
static int check_gpu_memory(struct load_ctx *c)
{
	const struct scene *sc = c->sc;
	if (sc->render.gpu_memory_auto)
		return 0;
	const struct ynode *at = seen(c, "render.gpu_memory");
	const char *k = "render.gpu_memory";
	if (sc->simulation.solver != SCENE_SOLVER_NONE)
		return scene_fail(&c->ec, at, k,
				  "a budget is for film mode (simulation.solver: none), which can "
				  "stream bodies through the GPU in chunks; a simulation keeps all its "
				  "bodies on the device and cannot run out of core: use auto");
	if (sc->render.style == SCENE_STYLE_SMOOTH && sc->render.smoothing_adaptive)
		return scene_fail(&c->ec, at, k,
				  "out of core, render.smoothing: adaptive cannot be drawn (its "
				  "neighbour search needs all bodies on the GPU at once): give a "
				  "number, use render.style: stars, or use auto");
	if (sc->render.style == SCENE_STYLE_STARS && sc->render.diffuse > 0 &&
	    sc->render.diffuse_smoothing == SCENE_DIFFUSE_ADAPTIVE)
		return scene_fail(&c->ec, at, k,
				  "out of core, render.diffuse_smoothing: adaptive cannot be drawn "
				  "(its neighbour search needs all bodies on the GPU at once): use "
				  "render.diffuse_smoothing: screen, or auto");
	for (int i = 0; i < sc->nbodies; i++)
		if (scene_dust_count(&sc->bodies[i]) > 0)
			return scene_fail(&c->ec, at, k,
					  "out of core, dust (bodies.%d.dust) cannot be drawn (its depth "
					  "slabs span all the dust bodies at once): remove the dust or use "
					  "auto", i);
	return 0;
}

static int cross_checks(struct load_ctx *c)
{
	if (check_overlay_title(c))
		return NB_EINPUT;
	if (check_force_scale(c) || check_series(c))
		return NB_EINPUT;
	for (int i = 0; i < c->sc->nbodies; i++) /* after the mass: a huge mass is the mass's fault */
		if (body_scale_check(c, i))
			return NB_EINPUT;
	if (check_encounter(c) || check_camera(c) || check_follow(c) ||
	    check_framing(c) ||
	    check_dust(c) || check_colour(c) || check_motion_blur(c) || check_projection(c) ||
	    check_gpu_memory(c))
		return NB_EINPUT;
	struct scene *sc = c->sc;
	if (sc->output.preview[0] && !ends_with_ci(sc->output.preview, ".jpg") &&
	    !ends_with_ci(sc->output.preview, ".jpeg"))
		return scene_fail(&c->ec, seen(c, "output.preview"), "output.preview",
				  "expected a path ending in .jpg or .jpeg, got '%s'", sc->output.preview);
	if (!sc->output.preview[0])
		sc->output.preview_kind = SCENE_PREVIEW_NONE;
	return 0;
}

/* ---- loading ---- */

static int load_tree(struct load_ctx *c, const char *const *overrides, char **labels,
		     int noverrides)
{
	struct scene *sc = c->sc;
	char got[160];
	int err;
	for (int i = 0; i < noverrides; i++)
		if ((err = scene_set_apply(&c->ec, &c->root, overrides[i], labels[i])))
			return err;
	if (!c->root && !(c->root = yaml_tree_new(YNODE_MAP, 1, 1, NULL)))
		return NB_ERUNTIME;
	if (c->root->kind != YNODE_MAP) {
		char keys[512];
		scene_schema_list_keys("", keys, sizeof(keys));
		return scene_fail(&c->ec, c->root, NULL, "expected a map of scene keys (%s), got %s",
				  keys, yaml_tree_describe(c->root, got, sizeof(got)));
	}
	/* units first: other defaults depend on it */
	enum scene_units units = SCENE_UNITS_NBODY;
	const struct ynode *u = yaml_tree_get(c->root, "units", NULL);
	if (u && scene_value_set(&c->ec, scene_schema_find("units"), u, "units", &units, NULL))
		return NB_EINPUT;
	sc->units = units;
	if (apply_defaults(c, SBASE_SCENE, NULL, NULL))
		return NB_EINPUT;
	sc->units = units; /* the defaults pass wrote units' own default */
	if ((err = walk_map(c, c->root, "", "", NULL, NULL)))
		return err;
	/* units: snapshot: the first snapshot entry's code units (units.c),
	 * before any check converts a value */
	if (units == SCENE_UNITS_SNAPSHOT && scene_units_snapshot_entry(sc) < 0)
		return scene_fail(&c->ec, u, "units",
				  "expected a scene with a bodies entry of model: snapshot for units: "
				  "snapshot (its keys are in that file's code units); this scene has "
				  "none: use units: galactic or nbody");
	/* the preset, before the checks: they see the values the run will use */
	if ((err = scene_accuracy_apply(sc, c->root, c->ec.name)))
		return err;
	if ((err = cross_checks(c)))
		return err;
	return scene_warn_unused(sc, c->ec.name, c->key_node, c->key_fov);
}

static void err_labels_free(char **labels, int n)
{
	for (int i = 0; labels && i < n; i++)
		free(labels[i]);
	free(labels);
}

/* Each override's label for messages: "FROM: K=V" where the caller says
 * where it came from, else "--set K=V". NULL when out of memory. */
static char **override_labels(const char *const *overrides, const char *const *froms, int n)
{
	char **l = calloc((size_t)(n > 0 ? n : 1), sizeof *l);
	for (int i = 0; l && i < n; i++) {
		const char *from = froms ? froms[i] : NULL;
		size_t len = strlen(overrides[i]) + (from ? strlen(from) : 0) + 8;
		if (!(l[i] = malloc(len))) {
			for (int k = 0; k < i; k++)
				free(l[k]);
			free(l);
			return NULL;
		}
		if (from)
			snprintf(l[i], len, "%s: %s", from, overrides[i]);
		else
			snprintf(l[i], len, "--set %s", overrides[i]);
	}
	return l;
}

static int load_text(const char *text, size_t len, const char *name, const char *dir,
		     const char *const *overrides, const char *const *froms, int noverrides,
		     struct scene *sc)
{
	struct load_ctx *c = calloc(1, sizeof(*c));
	char **labels = override_labels(overrides, froms, noverrides);
	if (!c || !labels) {
		log_error("%s: out of memory", name);
		free(c);
		free(labels);
		return NB_ERUNTIME;
	}
	if (scene_schema_count > SCHEMA_MAX || scene_schema_count > SCENE_WHERE_MAX) {
		log_error("scene schema has %d keys, more than %d", scene_schema_count, SCHEMA_MAX);
		free(c);
		err_labels_free(labels, noverrides);
		return NB_ERUNTIME;
	}
	memset(sc, 0, sizeof(*sc));
	snprintf(sc->dir, sizeof(sc->dir), "%s", dir && dir[0] ? dir : ".");
	c->ec.name = name;
	c->sc = sc;
	int err = yaml_tree_parse(text, len, name, NULL, &c->root);
	if (!err)
		err = load_tree(c, overrides, labels, noverrides);
	yaml_tree_free(c->root);
	free(c);
	err_labels_free(labels, noverrides);
	return err;
}

int scene_load_string(const char *text, const char *name, const char *dir,
			  const char *const *overrides, int noverrides, struct scene *sc)
{
	if (!name)
		name = "(scene)";
	if (!text)
		text = "";
	return load_text(text, strlen(text), name, dir, overrides, NULL, noverrides, sc);
}

int scene_load(const char *path, const char *const *overrides, int noverrides,
		   struct scene *sc)
{
	return scene_load_from(path, overrides, NULL, noverrides, sc);
}

int scene_load_from(const char *path, const char *const *overrides, const char *const *froms,
			int noverrides, struct scene *sc)
{
	char *buf = NULL;
	size_t len = 0;
	int err = NB_EINPUT;
	FILE *f = fopen(path, "rb");
	if (!f) {
		log_error("cannot open %s: %s", path, strerror(errno));
		return NB_EINPUT;
	}
	if (strlen(path) >= SCENE_PATH_MAX) {
		log_error("%s: path longer than %d characters", path, SCENE_PATH_MAX - 1);
		goto cleanup;
	}
	buf = malloc(SCENE_FILE_MAX + 1);
	if (!buf) {
		log_error("%s: out of memory", path);
		err = NB_ERUNTIME;
		goto cleanup;
	}
	len = fread(buf, 1, SCENE_FILE_MAX + 1, f);
	if (ferror(f)) {
		log_error("cannot read %s: %s", path, strerror(errno));
		goto cleanup;
	}
	if (len > SCENE_FILE_MAX) {
		log_error("%s: expected a scene file of at most %u bytes, got a larger file", path,
			  SCENE_FILE_MAX);
		goto cleanup;
	}
	buf[len] = '\0';
	char dir[SCENE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	err = load_text(buf, len, path, dir, overrides, froms, noverrides, sc);
	if (!err)
		snprintf(sc->path, sizeof(sc->path), "%s", path);
cleanup:
	free(buf);
	fclose(f);
	return err;
}

int scene_fail_key(const struct scene *sc, const char *key, int body, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const struct scene_where *w = NULL;
	const struct scene_key *k = body < 0 ? scene_schema_find(key) : NULL;
	if (body >= 0 && body < sc->nbodies)
		w = &sc->where_body[body];
	else if (k && k->base == SBASE_SCENE && key_index(k) < SCENE_WHERE_MAX)
		w = &sc->where[key_index(k)];
	const char *name = sc->path[0] ? sc->path : "(scene)";
	if (w && w->origin[0])
		log_error("%s: %s: %s", w->origin, key, msg);
	else if (w && w->line > 0)
		log_error("%s:%d:%d: %s: %s", name, w->line, w->col, key, msg);
	else
		log_error("%s: %s: %s", name, key, msg);
	return NB_EINPUT;
}

int scene_find_body(const struct scene *sc, const char *name)
{
	for (int i = 0; i < sc->nbodies; i++)
		if (strcmp(sc->bodies[i].name, name) == 0)
			return i;
	return -1;
}
