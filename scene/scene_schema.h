/* scene_schema.h - the one table that describes every scene key (private to
 * scene/scene*.c, and read by the key reference printer app/keys.c).
 * Loading, defaults, --set, "did you mean", emit and the reference in
 * docs/scenes.md (nbody-render --list-keys --markdown) all come from
 * scene_schema[].
 *
 * A key's path names its place in the document: "render.width",
 * "bodies.*.disk.count", "camera.keys.*.frame" ('*' stands for a list index).
 * Its value lives at `off` bytes into the struct named by `base`. */
#ifndef NB_SCENE_SCHEMA_H
#define NB_SCENE_SCHEMA_H

#include <stddef.h>

#include "scene.h"
#include "yaml_tree.h"

enum skey_type {
	SKEY_MAP,       /* a map of further keys */
	SKEY_LIST,      /* a list of maps, each with the keys "path.*.KEY" */
	SKEY_INT,       /* int */
	SKEY_LONG,      /* long */
	SKEY_U64,       /* uint64_t */
	SKEY_DOUBLE,    /* double */
	SKEY_VEC3,      /* double[3] */
	SKEY_COLOR,     /* float[3], linear RGB */
	SKEY_PAIR,      /* double[2] (a scalar sets both) */
	SKEY_ENUM,      /* int-sized enum, value = index into names */
	SKEY_SPIN2,     /* enum scene_spin[2] (a scalar sets both) */
	SKEY_NAME,      /* char[size], [A-Za-z0-9_-]+ */
	SKEY_STRING,    /* char[size], any text (paths; null = "") */
	SKEY_WORD,      /* char[size], one of names (x264 presets) */
	SKEY_NUM_OR_WORD, /* a number (*has_off 0), or word i of names (*has_off
			  * i + 1): render.smoothing: adaptive, render.exposure: auto,
			  * overlay.scale_bar: none | auto */
	SKEY_PAIR_OR_WORD, /* double[2] given as [a, b], or the one word names[0]
			    * (*has_off set to 1): render.color_range: auto */
};

enum skey_base { SBASE_SCENE, SBASE_BODY, SBASE_KEY };

/* flags */
#define SKEY_REQUIRED 1u  /* no default: must be given */
#define SKEY_LO_OPEN 2u   /* value > lo (else >= lo) */
#define SKEY_HI_OPEN 4u   /* value < hi (else <= hi) */
#define SKEY_EVEN 8u      /* even integer (video sizes) */
#define SKEY_HAS 16u      /* camera key: has_off marks it as given */
#define SKEY_BYTES 32u    /* SKEY_NUM_OR_WORD: a byte count, whole, with an optional
			   * binary suffix K, M, G or T (8G = 8 x 2^30); lo, hi in bytes */

/* bodies.* keys: which models use them */
#define SMODEL(m) (1u << (m))
#define SMODEL_SPHERES (SMODEL(SCENE_MODEL_PLUMMER) | SMODEL(SCENE_MODEL_HERNQUIST))
#define SMODEL_ALL 0x1fu

struct scene_key {
	const char *path;
	enum skey_type type;
	enum skey_base base;
	size_t off;
	size_t size;              /* strings: buffer size */
	size_t has_off;           /* SKEY_HAS: offset of the int has_* flag */
	unsigned flags;
	double lo, hi;            /* numeric range (each element of vectors) */
	const char *const *names; /* SKEY_ENUM / SKEY_WORD / SKEY_SPIN2 choices, NULL-ended */
	const char *def;          /* default as YAML text; NULL: required or derived */
	const char *def_galactic; /* default when units: galactic, if different */
	unsigned models;          /* bodies.* keys: SMODEL bits (0 = not a body key) */
	const char *type_doc;     /* type as shown in docs ("number > 0") */
	const char *help;         /* one line: what it means (required keys: also in the
				   * "missing required key" message; top-level maps: also
				   * the resolved scene's comment) */
	/* where the docs say more, for the key reference (app/keys.c): a
	 * section of docs/scenes.md ("#Glow") or of another docs/ file
	 * ("snapshots.md#Particle types"), named by its heading without
	 * backticks; NULL: nowhere */
	const char *see;
};

extern const struct scene_key scene_schema[];
extern const int scene_schema_count;

extern const char *const scene_model_names[];

/* The entry for normalized path P ("bodies.*.count"), or NULL. */
const struct scene_key *scene_schema_find(const char *path);
/* 1 if KEY's parent path is PARENT ("" for top level). */
int scene_schema_is_child(const struct scene_key *key, const char *parent);
/* Last component of the key's path. */
const char *scene_schema_leaf(const struct scene_key *key);
/* Closest valid key name under PARENT to WORD (edit distance <= 3, or a
 * prefix), or NULL. */
const char *scene_schema_suggest(const char *parent, const char *word);
/* "a, b, c": the valid key names under PARENT. */
void scene_schema_list_keys(const char *parent, char *buf, size_t size);
/* Address of KEY's value given the three possible bases. */
void *scene_schema_addr(const struct scene_key *key, struct scene *sc, struct scene_body *b,
			struct scene_camera_key *ck);

/* ---- values (scene/scene_value.c) ---- */

/* Where an error is reported: the file name for messages. */
struct scene_errctx {
	const char *name;
};

/* Log "NAME:LINE:COL: PATH: MSG" (or "--set ORIGIN: PATH: MSG" for nodes from
 * an override) as the one error message, and return NB_EINPUT. */
int scene_fail(const struct scene_errctx *ec, const struct ynode *at, const char *path,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Parse node V as KEY's type, check it, and store it at DST. AUX, if not
 * NULL, is set to 1 (the has_* flag of a camera key); for SKEY_NUM_OR_WORD it
 * must be the key's word flag (has_off: 1 for the word, 0 for a number). PATH is the key path for messages. */
int scene_value_set(const struct scene_errctx *ec, const struct scene_key *key,
		    const struct ynode *v, const char *path, void *dst, int *aux);
/* Store KEY's default for UNITS at DST (no-op for keys without one); AUX as
 * for scene_value_set (may be NULL except for SKEY_NUM_OR_WORD). 0 or NB_EINPUT
 * (a bad table entry: logged). */
int scene_value_default(const struct scene_key *key, enum scene_units units, void *dst, int *aux);
/* The name in NAMES (N of them, or NULL-ended when N < 0) closest to WORD by
 * edit distance, if close enough to be a likely typo; else NULL. */
const char *scene_closest(const char *const *names, int n, const char *word);

/* OUT = PARENT.LEAF (LEAF alone when PARENT is ""), truncated to SIZE;
 * OUT may not overlap PARENT. */
void scene_path_join(char *out, size_t size, const char *parent, const char *leaf);

/* Splice the override OV ("a.b.0.c=value") into the tree *ROOT (created if
 * NULL). 0, or NB_EINPUT after one "--set OV: ..." message. */
/* label: how messages name the override's origin, e.g. "--set render.width=5"
 * or "batch.yaml:4:12: runs.0.sweep: render.width=5"; it must outlive the
 * tree (its nodes point at it). */
int scene_set_apply(const struct scene_errctx *ec, struct ynode **root, const char *ov,
		    const char *label);

/* Shortest "%.Ng" text that reads back as exactly X (double or float). */
void scene_fmt_double(double x, char *buf, size_t size);
void scene_fmt_float(float x, char *buf, size_t size);

#endif
