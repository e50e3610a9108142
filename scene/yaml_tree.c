/* yaml_tree.c - build a YAML node tree with positions from libyaml events
 * (see yaml_tree.h). The tree is built with an explicit stack, so deeply
 * nested junk cannot overflow the C stack; nesting is capped at
 * YTREE_MAX_DEPTH, far beyond what a scene uses. */
#include "yaml_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "log.h"

#define YTREE_MAX_DEPTH 64

struct ynode *yaml_tree_new(enum ynode_kind kind, int line, int col, const char *origin)
{
	struct ynode *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->kind = kind;
	n->line = line;
	n->col = col;
	n->origin = origin;
	return n;
}

static struct ynode *new_scalar_len(const char *s, size_t len, int plain, int line, int col,
				    const char *origin)
{
	struct ynode *n = yaml_tree_new(YNODE_SCALAR, line, col, origin);
	if (!n)
		return NULL;
	n->text = malloc(len + 1);
	if (!n->text) {
		free(n);
		return NULL;
	}
	memcpy(n->text, s, len);
	n->text[len] = '\0';
	n->len = len;
	n->plain = plain;
	return n;
}

struct ynode *yaml_tree_new_scalar(const char *s, int plain, int line, int col, const char *origin)
{
	return new_scalar_len(s, strlen(s), plain, line, col, origin);
}

void yaml_tree_free(struct ynode *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->n; i++) {
		if (n->keys)
			yaml_tree_free(n->keys[i]);
		yaml_tree_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->text);
	free(n);
}

int yaml_tree_append(struct ynode *parent, struct ynode *key, struct ynode *value)
{
	if (parent->n == parent->cap) {
		int cap = parent->cap ? 2 * parent->cap : 8;
		struct ynode **items = realloc(parent->items, (size_t)cap * sizeof(*items));
		if (!items)
			return NB_ERUNTIME;
		parent->items = items;
		if (parent->kind == YNODE_MAP) {
			struct ynode **keys = realloc(parent->keys, (size_t)cap * sizeof(*keys));
			if (!keys)
				return NB_ERUNTIME;
			parent->keys = keys;
		}
		parent->cap = cap;
	}
	if (parent->kind == YNODE_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = value;
	return 0;
}

struct ynode *yaml_tree_get(const struct ynode *m, const char *key, int *index)
{
	if (!m || m->kind != YNODE_MAP)
		return NULL;
	for (int i = m->n - 1; i >= 0; i--) {
		if (strcmp(m->keys[i]->text, key) == 0) {
			if (index)
				*index = i;
			return m->items[i];
		}
	}
	return NULL;
}

int yaml_tree_is_null(const struct ynode *n)
{
	if (!n || n->kind != YNODE_SCALAR || !n->plain)
		return 0;
	const char *t = n->text;
	return t[0] == '\0' || strcmp(t, "~") == 0 || strcmp(t, "null") == 0 ||
	       strcmp(t, "Null") == 0 || strcmp(t, "NULL") == 0;
}

const char *yaml_tree_describe(const struct ynode *n, char *buf, size_t size)
{
	if (!n) {
		snprintf(buf, size, "nothing");
		return buf;
	}
	if (n->kind == YNODE_MAP) {
		snprintf(buf, size, "a map");
		return buf;
	}
	if (n->kind == YNODE_SEQ) {
		snprintf(buf, size, "a list of %d", n->n);
		return buf;
	}
	if (yaml_tree_is_null(n)) {
		snprintf(buf, size, "nothing (null)");
		return buf;
	}
	/* 'text', printable ASCII kept, the rest escaped, at most ~40 chars */
	size_t o = 0;
	if (size < 16) {
		snprintf(buf, size, "?");
		return buf;
	}
	buf[o++] = '\'';
	for (size_t i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->text[i];
		if (i >= 40 || o + 10 >= size) {
			o += (size_t)snprintf(buf + o, size - o, "...(%zu chars)", n->len);
			break;
		}
		if (c >= 32 && c < 127 && c != '\'')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	if (o + 2 > size)
		o = size - 2;
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

const struct ynode *yaml_tree_lookup(const struct ynode *root, const char *path)
{
	const struct ynode *n = root;
	char part[1024];
	for (const char *s = path; n && *s;) {
		size_t len = strcspn(s, ".");
		snprintf(part, sizeof(part), "%.*s", (int)len, s);
		s += len + (s[len] == '.');
		if (n->kind == YNODE_MAP) {
			n = yaml_tree_get(n, part, NULL);
		} else if (n->kind == YNODE_SEQ) {
			char *end;
			long i = strtol(part, &end, 10);
			n = !*end && i >= 0 && i < n->n ? n->items[i] : NULL;
		} else {
			n = NULL;
		}
	}
	return n;
}

void yaml_tree_write_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f); /* UTF-8 passes through */
		}
	}
	fputc('"', f);
}

static int write_flow(FILE *f, const struct ynode *n, int label, int depth)
{
	if (depth > YTREE_MAX_DEPTH)
		return -1;
	if (n->kind == YNODE_SCALAR) {
		if (label || n->plain)
			fwrite(n->text, 1, n->len, f);
		else
			yaml_tree_write_quoted(f, n->text);
		return 0;
	}
	int map = n->kind == YNODE_MAP;
	int bare = !map && label; /* a label's list: a,b */
	if (!bare)
		fputc(map ? '{' : '[', f);
	for (int i = 0; i < n->n; i++) {
		if (i > 0)
			fputs(bare ? "," : ", ", f);
		if (map && write_flow(f, n->keys[i], 0, depth + 1))
			return -1;
		if (map)
			fputs(": ", f);
		if (write_flow(f, n->items[i], bare, depth + 1))
			return -1;
	}
	if (!bare)
		fputc(map ? '}' : ']', f);
	return 0;
}

int yaml_tree_write_flow(FILE *f, const struct ynode *n, enum ytree_flow style)
{
	return write_flow(f, n, style == YTREE_FLOW_LABEL, 0);
}

char *yaml_tree_flow_text(const struct ynode *n, enum ytree_flow style)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	int rc = yaml_tree_write_flow(f, n, style);
	if (fclose(f) != 0 || rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Position of byte OFFSET of TEXT as 1-based line and column. */
static void offset_to_linecol(const char *text, size_t len, size_t offset, int *line, int *col)
{
	int l = 1, c = 1;
	for (size_t i = 0; i < offset && i < len; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static void parse_error(const char *name, const char *origin, int line, int col, const char *what)
{
	if (origin)
		log_error("%s: expected a valid YAML value, got %s", origin, what);
	else
		log_error("%s:%d:%d: expected valid YAML, got %s", name, line, col, what);
}

/* Anchors (&a) and tags (!!str, !custom) on a node are refused: a scene
 * never needs them, an anchor only serves aliases (refused too), and a tag
 * would silently change how a value is read. 0 or NB_EINPUT (logged). */
static int refuse_extras(const yaml_event_t *ev, const char *name, const char *origin, int line,
			 int col)
{
	const yaml_char_t *anchor, *tag;
	char what[256];
	if (ev->type == YAML_SCALAR_EVENT) {
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	} else {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	}
	if (anchor) {
		snprintf(what, sizeof(what),
			 "an anchor '&%.60s' (anchors and aliases are not supported)",
			 (const char *)anchor);
		parse_error(name, origin, line, col, what);
		return NB_EINPUT;
	}
	if (tag) {
		snprintf(what, sizeof(what),
			 "a tag '%.80s' (tags are not supported: write the plain value)",
			 (const char *)tag);
		parse_error(name, origin, line, col, what);
		return NB_EINPUT;
	}
	return 0;
}

/* The parser's state: the open collections, each map's key waiting for its
 * value, and the finished root. */
struct ytree_parse {
	const char *text, *name, *origin;
	size_t len;
	struct ynode *stack[YTREE_MAX_DEPTH];
	struct ynode *pending_key[YTREE_MAX_DEPTH];
	struct ynode *root;
	int depth, ndocs, done;
};

static int out_of_memory(const struct ytree_parse *ps)
{
	log_error("out of memory while reading %s", ps->origin ? ps->origin : ps->name);
	return NB_ERUNTIME;
}

/* Attach a finished node to the collection on top of the stack (NODE is
 * owned by the tree, or freed on error). */
static int attach(struct ytree_parse *ps, struct ynode *node)
{
	int d = ps->depth;
	if (d == 0) {
		ps->root = node;
		return 0;
	}
	struct ynode *top = ps->stack[d - 1];
	if (top->kind == YNODE_SEQ) {
		if (yaml_tree_append(top, NULL, node) != 0)
			goto oom;
		return 0;
	}
	if (!ps->pending_key[d - 1]) {
		if (node->kind != YNODE_SCALAR) {
			parse_error(ps->name, ps->origin, node->line, node->col,
				    node->kind == YNODE_MAP ? "a map used as a key"
							    : "a list used as a key");
			yaml_tree_free(node);
			return NB_EINPUT;
		}
		ps->pending_key[d - 1] = node;
		return 0;
	}
	if (yaml_tree_append(top, ps->pending_key[d - 1], node) != 0)
		goto oom;
	ps->pending_key[d - 1] = NULL;
	return 0;
oom:
	yaml_tree_free(node);
	return out_of_memory(ps);
}

/* libyaml's error as "NAME:LINE:COL: expected valid YAML, got a YAML syntax
 * error: PROBLEM CONTEXT (from L:C)". Returns NB_EINPUT. */
static int syntax_error(const struct ytree_parse *ps, const yaml_parser_t *parser)
{
	char what[256], ctx[160] = "";
	int line, col;
	if (parser->error == YAML_READER_ERROR) {
		offset_to_linecol(ps->text, ps->len, parser->problem_offset, &line, &col);
	} else {
		line = (int)parser->problem_mark.line + 1;
		col = (int)parser->problem_mark.column + 1;
	}
	if (parser->context)
		snprintf(ctx, sizeof(ctx), " %s (from %d:%d)", parser->context,
			 (int)parser->context_mark.line + 1, (int)parser->context_mark.column + 1);
	/* the usual cause of "cannot start any token": a tab */
	size_t at = parser->problem_mark.index;
	int tab = parser->error != YAML_READER_ERROR && at < ps->len && ps->text[at] == '\t';
	snprintf(what, sizeof(what), "a YAML syntax error: %s%s%s",
		 parser->problem ? parser->problem : "unknown problem", ctx,
		 tab ? " (a tab: YAML indents with spaces only)" : "");
	parse_error(ps->name, ps->origin, line, col, what);
	return NB_EINPUT;
}

static int on_scalar(struct ytree_parse *ps, const yaml_event_t *ev, int line, int col)
{
	int err = refuse_extras(ev, ps->name, ps->origin, line, col);
	if (err)
		return err;
	int d = ps->depth;
	int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (d > 0 && ps->stack[d - 1]->kind == YNODE_MAP && !ps->pending_key[d - 1] && plain &&
	    strcmp((const char *)ev->data.scalar.value, "<<") == 0) {
		parse_error(ps->name, ps->origin, line, col,
			    "a merge key '<<' (merge keys are not supported: write the keys out)");
		return NB_EINPUT;
	}
	struct ynode *node = new_scalar_len((const char *)ev->data.scalar.value,
					    ev->data.scalar.length, plain, line, col, ps->origin);
	if (!node)
		return out_of_memory(ps);
	return attach(ps, node);
}

static int on_open(struct ytree_parse *ps, const yaml_event_t *ev, int line, int col)
{
	int err = refuse_extras(ev, ps->name, ps->origin, line, col);
	if (err)
		return err;
	if (ps->depth >= YTREE_MAX_DEPTH) {
		char what[64];
		snprintf(what, sizeof(what), "nesting deeper than %d levels", YTREE_MAX_DEPTH);
		parse_error(ps->name, ps->origin, line, col, what);
		return NB_EINPUT;
	}
	struct ynode *node = yaml_tree_new(
		ev->type == YAML_MAPPING_START_EVENT ? YNODE_MAP : YNODE_SEQ, line, col, ps->origin);
	if (!node)
		return out_of_memory(ps);
	ps->pending_key[ps->depth] = NULL;
	ps->stack[ps->depth++] = node;
	return 0;
}

/* One libyaml event into the tree. 0, NB_EINPUT or NB_ERUNTIME (logged). */
static int on_event(struct ytree_parse *ps, const yaml_event_t *ev)
{
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	struct ynode *node;
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++ps->ndocs > 1) {
			parse_error(ps->name, ps->origin, line, col,
				    "a second document (a file holds one)");
			return NB_EINPUT;
		}
		return 0;
	case YAML_ALIAS_EVENT:
		parse_error(ps->name, ps->origin, line, col,
			    "an alias (anchors and aliases are not supported)");
		return NB_EINPUT;
	case YAML_SCALAR_EVENT:
		return on_scalar(ps, ev, line, col);
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		return on_open(ps, ev, line, col);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		node = ps->stack[--ps->depth];
		yaml_tree_free(ps->pending_key[ps->depth]); /* cannot happen: libyaml pairs keys */
		ps->pending_key[ps->depth] = NULL;
		return attach(ps, node);
	case YAML_STREAM_END_EVENT:
		ps->done = 1;
		return 0;
	default:
		return 0;
	}
}

int yaml_tree_parse(const char *text, size_t len, const char *name, const char *origin,
		    struct ynode **out)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct ytree_parse ps = {.text = text, .len = len, .name = name, .origin = origin};
	int err = 0;

	*out = NULL;
	if (!yaml_parser_initialize(&parser)) {
		log_error("cannot start the YAML parser for %s", origin ? origin : name);
		return NB_ERUNTIME;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!ps.done && !err) {
		if (!yaml_parser_parse(&parser, &ev)) {
			err = syntax_error(&ps, &parser);
			break;
		}
		err = on_event(&ps, &ev);
		yaml_event_delete(&ev);
	}
	while (ps.depth > 0) {
		ps.depth--;
		yaml_tree_free(ps.pending_key[ps.depth]);
		yaml_tree_free(ps.stack[ps.depth]);
	}
	yaml_parser_delete(&parser);
	if (err) {
		yaml_tree_free(ps.root);
		return err;
	}
	*out = ps.root;
	return 0;
}
