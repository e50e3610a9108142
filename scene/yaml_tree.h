/* yaml_tree.h - a small YAML document tree with the line and column of
 * every node, built from libyaml's event parser: the one YAML reader of the
 * program (scenes and --set values in sim/scene*.c, batch files in
 * app/batch_file.c).
 *
 * Maps keep their keys in file order (duplicates are kept, so the scene
 * checker can report them). Anchors, aliases, tags (!!str, !custom) and
 * merge keys (<<) are refused with their line and column: a scene never
 * needs them, and they make positions ambiguous or change how a value is
 * read. */
#ifndef NB_YAML_TREE_H
#define NB_YAML_TREE_H

#include <stddef.h>
#include <stdio.h>

enum ynode_kind { YNODE_SCALAR, YNODE_MAP, YNODE_SEQ };

struct ynode {
	enum ynode_kind kind;
	int line, col;          /* 1-based position of the node's first character */
	const char *origin;     /* NULL: from the file; else the label of the override it came from ("--set K=V") */
	char *text;             /* scalar: its value (NUL-terminated) */
	size_t len;             /* scalar: strlen-safe length (text may hold NULs) */
	int plain;              /* scalar: written without quotes (so it may be a number) */
	int n, cap;             /* map: pairs; seq: items */
	struct ynode **keys;    /* map: key nodes (always scalars) */
	struct ynode **items;   /* map: values; seq: items */
};

/* Parse TEXT (LEN bytes) as one YAML document. *out gets the root, or NULL
 * for an empty document. NAME is used in messages; ORIGIN is stored in every
 * node (NULL for files). Returns 0, or NB_EINPUT after logging one message:
 * "NAME:LINE:COL: expected valid YAML, got ..." (or, with ORIGIN set,
 * "--set ORIGIN: ..."). */
int yaml_tree_parse(const char *text, size_t len, const char *name, const char *origin,
		    struct ynode **out);

/* Free a tree (NULL is fine). */
void yaml_tree_free(struct ynode *n);

/* New empty node of KIND at (line, col) with ORIGIN; NULL on allocation failure. */
struct ynode *yaml_tree_new(enum ynode_kind kind, int line, int col, const char *origin);
/* New scalar holding a copy of S. */
struct ynode *yaml_tree_new_scalar(const char *s, int plain, int line, int col, const char *origin);
/* Append an item to a seq, or a key/value pair to a map (key NULL for seqs).
 * Returns 0 or NB_ERUNTIME; on failure nothing is owned by PARENT. */
int yaml_tree_append(struct ynode *parent, struct ynode *key, struct ynode *value);
/* Value of KEY in map M (the last one if duplicated), or NULL; *index gets
 * its position when INDEX is not NULL. */
struct ynode *yaml_tree_get(const struct ynode *m, const char *key, int *index);

/* Short description of a node for "got ..." in messages, written to BUF:
 * 'text' (truncated and escaped), "nothing (null)", "a map", "a list of 3". */
const char *yaml_tree_describe(const struct ynode *n, char *buf, size_t size);
/* 1 if a plain scalar is YAML null (empty, ~, null, Null, NULL). */
int yaml_tree_is_null(const struct ynode *n);

/* The node at dotted PATH under ROOT ("bodies.0.position"): map keys by
 * name (the last if duplicated, as yaml_tree_get), list items by index.
 * "" is ROOT itself; NULL if absent. */
const struct ynode *yaml_tree_lookup(const struct ynode *root, const char *path);

/* How yaml_tree_write_flow writes a node. */
enum ytree_flow {
	YTREE_FLOW_YAML,  /* YAML flow text: loading it gives the same values */
	YTREE_FLOW_LABEL, /* a label for names: scalars without quotes, list
			   * items joined by ',' without brackets */
};

/* Write N to F on one line. YTREE_FLOW_YAML: plain scalars as written,
 * other scalars double-quoted (yaml_tree_write_quoted), lists as [a, b],
 * maps as {k: v}. YTREE_FLOW_LABEL: the same, except that scalars are
 * their bare text and a list is its items joined by ',' (a map, and
 * anything inside one, is still YAML). Returns 0, or -1 if N nests deeper
 * than the parser allows (only a tree built by hand can). */
int yaml_tree_write_flow(FILE *f, const struct ynode *n, enum ytree_flow style);
/* The same as a malloc'd string; NULL when out of memory or too deep. */
char *yaml_tree_flow_text(const struct ynode *n, enum ytree_flow style);
/* Write S in double quotes, escaped so that it reads back as S both as a
 * YAML double-quoted scalar and as a JSON string (\" \\ \n \r \t, other
 * control bytes as \u00XX; UTF-8 passes through). */
void yaml_tree_write_quoted(FILE *f, const char *s);

#endif
