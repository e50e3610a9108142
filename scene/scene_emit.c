/* scene_emit.c - write a resolved scene back as YAML (scene_emit): every
 * key of the schema table, in table order, defaults included, so that
 * loading the output gives the same struct scene. Numbers are written with
 * the fewest digits that read back exactly; strings are double-quoted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "scene.h"
#include "scene_schema.h"

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 32 || *p == 127)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void put_doubles(FILE *f, const double *v, int n)
{
	char buf[40];
	fputc('[', f);
	for (int i = 0; i < n; i++) {
		scene_fmt_double(v[i], buf, sizeof(buf));
		fprintf(f, "%s%s", i ? ", " : "", buf);
	}
	fputc(']', f);
}

static int name_of(const struct scene_key *k, int v, const char **out)
{
	int n = 0;
	while (k->names[n])
		n++;
	if (v < 0 || v >= n) {
		log_error("cannot write the scene: %s holds %d, not one of its %d choices", k->path, v, n);
		return NB_ERUNTIME;
	}
	*out = k->names[v];
	return 0;
}

static int put_value(FILE *f, const struct scene_key *k, const struct scene *sc, const void *p)
{
	char buf[40];
	const char *name;
	switch (k->type) {
	case SKEY_INT: fprintf(f, "%d", *(const int *)p); break;
	case SKEY_LONG: fprintf(f, "%ld", *(const long *)p); break;
	case SKEY_U64: fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)p); break;
	case SKEY_DOUBLE:
		scene_fmt_double(*(const double *)p, buf, sizeof(buf));
		fputs(buf, f);
		break;
	case SKEY_NUM_OR_WORD:
		if (*(const int *)((const char *)sc + k->has_off)) {
			/* word i + 1 of names (every such key has one word or a few) */
			fputs(k->names[*(const int *)((const char *)sc + k->has_off) - 1], f);
		} else {
			scene_fmt_double(*(const double *)p, buf, sizeof(buf));
			fputs(buf, f);
		}
		break;
	case SKEY_PAIR_OR_WORD:
		if (*(const int *)((const char *)sc + k->has_off))
			fputs(k->names[0], f);
		else
			put_doubles(f, p, 2);
		break;
	case SKEY_VEC3: put_doubles(f, p, 3); break;
	case SKEY_PAIR: put_doubles(f, p, 2); break;
	case SKEY_COLOR:
		fputc('[', f);
		for (int i = 0; i < 3; i++) {
			scene_fmt_float(((const float *)p)[i], buf, sizeof(buf));
			fprintf(f, "%s%s", i ? ", " : "", buf);
		}
		fputc(']', f);
		break;
	case SKEY_ENUM:
		if (name_of(k, *(const int *)p, &name))
			return NB_ERUNTIME;
		fputs(name, f);
		break;
	case SKEY_SPIN2:
		for (int i = 0; i < 2; i++) {
			if (name_of(k, (int)((const enum scene_spin *)p)[i], &name))
				return NB_ERUNTIME;
			fprintf(f, "%s%s", i ? ", " : "[", name);
		}
		fputc(']', f);
		break;
	case SKEY_NAME:
	case SKEY_STRING:
	case SKEY_WORD: put_string(f, p); break;
	case SKEY_MAP:
	case SKEY_LIST: break;
	}
	return 0;
}

/* Keys under NORM at INDENT spaces; with DASH the first line starts "- ". */
static int emit_level(FILE *f, const char *norm, int indent, int dash, const struct scene *sc,
		      const struct scene_body *b, const struct scene_camera_key *ck)
{
	char child[300];
	for (int i = 0; i < scene_schema_count; i++) {
		const struct scene_key *k = &scene_schema[i];
		if (!scene_schema_is_child(k, norm))
			continue;
		if (b && k->models && !(k->models & SMODEL(b->model)))
			continue;
		if (ck && (k->flags & SKEY_HAS) && !*(const int *)((const char *)ck + k->has_off))
			continue;
		if (k->type == SKEY_MAP && strcmp(k->path, "encounter") == 0 && !sc->encounter.enabled)
			continue;
		if (dash) {
			fprintf(f, "%*s- ", indent - 2, "");
			dash = 0;
		} else {
			fprintf(f, "%*s", indent, "");
		}
		const char *leaf = scene_schema_leaf(k);
		if (k->type == SKEY_MAP) {
			fprintf(f, "%s:%s%s\n", leaf, indent == 0 ? "  # " : "", indent == 0 ? k->help : "");
			snprintf(child, sizeof(child), "%s", k->path);
			if (emit_level(f, child, indent + 2, 0, sc, b, ck))
				return NB_ERUNTIME;
			continue;
		}
		if (k->type == SKEY_LIST) {
			int is_bodies = strcmp(k->path, "bodies") == 0;
			int n = is_bodies ? sc->nbodies : sc->camera.nkeys;
			fprintf(f, "%s:%s\n", leaf, n == 0 ? " []" : "");
			snprintf(child, sizeof(child), "%s.*", k->path);
			for (int j = 0; j < n; j++) {
				if (emit_level(f, child, indent + 4, 1, sc, is_bodies ? &sc->bodies[j] : NULL,
					       is_bodies ? NULL : &sc->camera.keys[j]))
					return NB_ERUNTIME;
			}
			continue;
		}
		const char *base = k->base == SBASE_SCENE ? (const char *)sc
				 : k->base == SBASE_BODY  ? (const char *)b
							  : (const char *)ck;
		fprintf(f, "%s: ", leaf);
		if (strcmp(k->path, "simulation.accuracy") == 0 &&
		    sc->simulation.accuracy != SCENE_ACCURACY_DEFAULT) {
			/* applied at load (scene/scene_accuracy.c): loading these values must not
			 * apply it twice */
			fprintf(f, "default  # %s applied: the values here are its\n",
				k->names[sc->simulation.accuracy]);
			continue;
		}
		if (put_value(f, k, sc, base + k->off))
			return NB_ERUNTIME;
		if (k->type == SKEY_ENUM || k->type == SKEY_NUM_OR_WORD || k->type == SKEY_PAIR_OR_WORD)
			fprintf(f, "  # %s", k->type_doc);
		fputc('\n', f);
	}
	return 0;
}

int scene_emit(const struct scene *sc, FILE *f)
{
	fprintf(f, "# nbody-render resolved scene%s%s: every key, defaults included.\n",
		sc->path[0] ? " from " : "", sc->path);
	if (emit_level(f, "", 0, 0, sc, NULL, NULL))
		return NB_ERUNTIME;
	if (fflush(f) != 0 || ferror(f)) {
		/* not logged: the caller names its file with errno's reason */
		return NB_ERUNTIME;
	}
	return 0;
}
