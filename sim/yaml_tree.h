/* yaml_tree.h - a small YAML document tree with the line and column of
 * every node, built from libyaml's event parser (private to sim/scene*.c).
 *
 * Maps keep their keys in file order (duplicates are kept, so the scene
 * checker can report them). Anchors, aliases, tags (!!str, !custom) and
 * merge keys (<<) are refused with their line and column: a scene never
 * needs them, and they make positions ambiguous or change how a value is
 * read. */
#ifndef NB_YAML_TREE_H
#define NB_YAML_TREE_H

#include <stddef.h>

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

#endif
