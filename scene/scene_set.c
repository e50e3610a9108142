/* scene_set.c - --set overrides: "a.b.0.c=value" is checked against the
 * schema's key paths (unknown keys get a suggestion), its value parsed as
 * YAML, and the result spliced into the scene's node tree, creating maps and
 * list entries on the way. The loader then checks it like any other value. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "scene_schema.h"
#include "yaml_tree.h"

/* An override's key, split at its dots. */
struct set_key {
	char comp[32][128];
	int n;
};

/* Split the key part of OV (up to EQ) into K. 0 or NB_EINPUT (reported). */
static int set_split(const struct scene_errctx *ec, struct ynode *dummy, const char *ov,
		     const char *eq, struct set_key *k)
{
	k->n = 0;
	for (const char *s = ov; s < eq;) {
		const char *e = s;
		while (e < eq && *e != '.')
			e++;
		if (e == s || k->n == 32 || (size_t)(e - s) >= sizeof(k->comp[0]))
			return scene_fail(ec, dummy, NULL,
					  "expected a key path like render.width, got an empty or too long part");
		snprintf(k->comp[k->n++], sizeof(k->comp[0]), "%.*s", (int)(e - s), s);
		s = e < eq ? e + 1 : e;
		if (e < eq && s == eq)
			return scene_fail(ec, dummy, NULL, "expected a key path, got one ending in '.'");
	}
	return 0;
}

/* Check the path against the schema before touching the tree: K is the
 * key reached so far (NULL: the top map), IN_ITEM: inside a list entry.
 * 0 or NB_EINPUT (reported). */
static int set_check(const struct scene_errctx *ec, struct ynode *dummy, const struct set_key *sk)
{
	char norm[300] = "", path[300] = "";
	const struct scene_key *k = NULL;
	int in_item = 0;
	for (int i = 0; i < sk->n; i++) {
		const char *comp = sk->comp[i];
		int is_index = 1;
		for (const char *q = comp; *q; q++)
			if (!isdigit((unsigned char)*q))
				is_index = 0;
		char parent[300];
		memcpy(parent, norm, sizeof(parent));
		if (k && k->type == SKEY_LIST && !in_item) {
			if (!is_index || strlen(comp) > 6)
				return scene_fail(ec, dummy, path,
						  "expected a list index (0, 1, ...), got '%s'", comp);
			scene_path_join(norm, sizeof(norm), parent, "*");
			in_item = 1;
		} else {
			if (k && k->type != SKEY_MAP && !in_item)
				return scene_fail(ec, dummy, path,
						  "expected nothing after a value key, got '.%s'", comp);
			scene_path_join(norm, sizeof(norm), parent, comp);
			k = scene_schema_find(norm);
			in_item = 0;
			if (!k) {
				char kp[300], list[512];
				scene_path_join(kp, sizeof(kp), path, comp);
				const char *near = scene_schema_suggest(parent, comp);
				scene_schema_list_keys(parent, list, sizeof(list));
				if (near)
					return scene_fail(ec, dummy, kp,
							  "unknown key, did you mean '%s'? (expected one of %s)",
							  near, list);
				return scene_fail(ec, dummy, kp, "unknown key (expected one of %s)", list);
			}
		}
		char prev[300];
		memcpy(prev, path, sizeof(prev));
		scene_path_join(path, sizeof(path), prev, comp);
	}
	return 0;
}

/* The slot of CUR that COMP names (*SLOT NULL: none yet, to be appended).
 * PATH names COMP, PREV names CUR. 0 or NB_EINPUT (reported). */
static int set_slot(const struct scene_errctx *ec, struct ynode *dummy, struct ynode *cur,
		    const char *comp, const char *path, const char *prev, struct ynode ***slot)
{
	char got[160];
	*slot = NULL;
	if (cur->kind == YNODE_MAP) {
		int idx;
		if (yaml_tree_get(cur, comp, &idx))
			*slot = &cur->items[idx];
	} else if (cur->kind == YNODE_SEQ) {
		long idx = strtol(comp, NULL, 10);
		if (!isdigit((unsigned char)comp[0]) || idx > cur->n)
			return scene_fail(ec, dummy, path,
					  "expected an index in 0..%d (%d adds an entry), got %s",
					  cur->n - 1 < 0 ? 0 : cur->n - 1, cur->n, comp);
		if (idx < cur->n)
			*slot = &cur->items[idx];
	} else {
		return scene_fail(ec, cur, prev, "expected a map or list to hold '%s', got %s", comp,
				  yaml_tree_describe(cur, got, sizeof(got)));
	}
	return 0;
}

/* Splice VAL (owned; freed on failure) into *ROOT at the path SK, creating
 * maps and list entries on the way. */
static int set_splice(const struct scene_errctx *ec, struct ynode *dummy, struct ynode **root,
		      const struct set_key *sk, struct ynode *val, const char *label)
{
	char path[300] = "";
	int err = 0;
	if (!*root && !(*root = yaml_tree_new(YNODE_MAP, 1, 1, label)))
		goto oom;
	struct ynode *cur = *root;
	for (int i = 0; i < sk->n; i++) {
		const char *comp = sk->comp[i];
		int last = i == sk->n - 1;
		/* (the schema check allows digits only after a list) */
		int next_is_index = !last && isdigit((unsigned char)sk->comp[i + 1][0]);
		char prev[300];
		memcpy(prev, path, sizeof(prev));
		scene_path_join(path, sizeof(path), prev, comp);
		struct ynode **slot;
		if ((err = set_slot(ec, dummy, cur, comp, path, prev, &slot)))
			goto fail;
		struct ynode *node;
		if (last) {
			node = val;
			val = NULL;
		} else if (slot && !yaml_tree_is_null(*slot)) {
			cur = *slot;
			continue;
		} else {
			node = yaml_tree_new(next_is_index ? YNODE_SEQ : YNODE_MAP, 1, 1, label);
			if (!node)
				goto oom;
		}
		if (slot) {
			yaml_tree_free(*slot);
			*slot = node;
		} else {
			struct ynode *key = NULL;
			if (cur->kind == YNODE_MAP && !(key = yaml_tree_new_scalar(comp, 1, 1, 1, label))) {
				yaml_tree_free(node);
				goto oom;
			}
			if (yaml_tree_append(cur, key, node)) {
				yaml_tree_free(key);
				yaml_tree_free(node);
				goto oom;
			}
		}
		cur = node;
	}
	return 0;
oom:
	log_error("%s: out of memory", label);
	err = NB_ERUNTIME;
fail:
	yaml_tree_free(val);
	return err;
}

int scene_set_apply(const struct scene_errctx *ec, struct ynode **root, const char *ov,
		    const char *label)
{
	struct set_key sk;
	struct ynode *val = NULL;
	struct ynode dummy = {.origin = label}; /* for messages about the string itself */

	const char *eq = strchr(ov, '=');
	if (!eq || eq == ov)
		return scene_fail(ec, &dummy, NULL, "expected KEY=VALUE, got %s",
				  eq ? "no key before '='" : "no '='");
	int err = set_split(ec, &dummy, ov, eq, &sk);
	if (!err)
		err = set_check(ec, &dummy, &sk);
	if (err)
		return err;
	const char *text = eq + 1;
	err = yaml_tree_parse(text, strlen(text), "--set", label, &val);
	if (err)
		return err;
	if (!val && !(val = yaml_tree_new_scalar("", 1, 1, 1, label))) {
		log_error("%s: out of memory", label);
		return NB_ERUNTIME;
	}
	return set_splice(ec, &dummy, root, &sk, val, label);
}
