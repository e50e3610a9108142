/* keys.c - the key reference (nbody-render --list-keys [--markdown]):
 * every key of the scene schema (scene/scene_schema.c), in the table's
 * order, with its type, default and meaning. Plain text for a terminal,
 * or the Markdown tables of docs/scenes.md's "Every key" section, which
 * tools/check-keys.sh holds equal to this output: the schema is the one
 * source of the help text, the docs and the resolved scene's comments. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../scene/scene_schema.h"
#include "app.h"

static int key_is_group(const struct scene_key *k)
{
	return k->type == SKEY_MAP || k->type == SKEY_LIST;
}

/* The section K belongs to: its first path component when that is a map
 * or list ("camera" for camera.keys.*.fov), else "top level". */
static void key_section(const struct scene_key *k, char *buf, size_t size)
{
	size_t n = strcspn(k->path, ".");
	snprintf(buf, size, "%.*s", (int)n, k->path);
	const struct scene_key *top = scene_schema_find(buf);
	if (!top || !key_is_group(top))
		snprintf(buf, size, "top level");
}

static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-";

/* S with every '|' escaped, for a Markdown table cell; with links,
 * "docs/NAME.md" becomes a link to NAME.md (the reference lives in docs/). */
static void md_cell(FILE *f, const char *s, int links)
{
	while (*s) {
		size_t n = links && strncmp(s, "docs/", 5) == 0 ? strspn(s + 5, name_chars) : 0;
		if (n && strncmp(s + 5 + n, ".md", 3) == 0) {
			fprintf(f, "[docs/%.*s.md](%.*s.md)", (int)n, s + 5, (int)n, s + 5);
			s += 5 + n + 3;
			continue;
		}
		if (*s == '|')
			fputc('\\', f);
		fputc(*s++, f);
	}
}

/* A heading's anchor as GitHub makes it: lower case, letters, digits,
 * '_' and '-' kept, spaces to '-', the rest dropped. */
static void md_anchor(FILE *f, const char *heading)
{
	for (const char *h = heading; *h; h++) {
		if (*h == ' ')
			fputc('-', f);
		else if (isalnum((unsigned char)*h) || *h == '_' || *h == '-')
			fputc(tolower((unsigned char)*h), f);
	}
}

/* " (see [HEADING](FILE#anchor))" for the key's see (scene_schema.h). */
static void md_see(FILE *f, const char *see)
{
	const char *hash = strchr(see, '#');
	if (!hash)
		return;
	fprintf(f, " (see [%s](%.*s#", hash + 1, (int)(hash - see), see);
	md_anchor(f, hash + 1);
	fputs("))", f);
}

/* The default: `1` (galactic: `1e10`), **required**, "see meaning" (a
 * leaf whose default is derived, as its meaning says) or nothing (a map
 * or an optional list). */
static void md_default(FILE *f, const struct scene_key *k)
{
	if (k->flags & SKEY_REQUIRED) {
		fputs("**required**", f);
	} else if (k->def) {
		fprintf(f, "`%s`", k->def);
		if (k->def_galactic)
			fprintf(f, " (galactic: `%s`)", k->def_galactic);
	} else if (!key_is_group(k)) {
		fputs("see meaning", f);
	}
}

static void md_row(FILE *f, const struct scene_key *k)
{
	fprintf(f, "| `%s` | ", k->path);
	md_cell(f, k->type_doc, 0);
	fputs(" | ", f);
	md_default(f, k);
	fputs(" | ", f);
	md_cell(f, k->help, 1);
	if (k->see)
		md_see(f, k->see);
	fputs(" |\n", f);
}

/* path: type, default D (galactic: G) / required, then the meaning on an
 * indented line of its own. */
static void text_row(FILE *f, const struct scene_key *k)
{
	fprintf(f, "%s: %s", k->path, k->type_doc);
	if (k->flags & SKEY_REQUIRED)
		fputs(", required", f);
	else if (k->def)
		fprintf(f, ", default %s", k->def);
	else if (!key_is_group(k))
		fputs(", default: see meaning", f);
	if (k->def_galactic && !(k->flags & SKEY_REQUIRED))
		fprintf(f, " (galactic: %s)", k->def_galactic);
	fprintf(f, "\n    %s", k->help);
	const char *hash = k->see ? strchr(k->see, '#') : NULL;
	if (hash) { /* see docs/FILE (docs/scenes.md when FILE is empty), "HEADING" */
		const int own = hash == k->see;
		fprintf(f, " (see docs/%.*s, \"%s\")", own ? 9 : (int)(hash - k->see),
			own ? "scenes.md" : k->see, hash + 1);
	}
	fputc('\n', f);
}

void app_list_keys(FILE *f, int markdown)
{
	char section[64] = "", sec[64];
	for (int i = 0; i < scene_schema_count; i++) {
		const struct scene_key *k = &scene_schema[i];
		key_section(k, sec, sizeof sec);
		if (markdown && strcmp(sec, section) != 0) {
			fprintf(f, "%s### %s\n\n| key | type | default | meaning |\n|---|---|---|---|\n",
				section[0] ? "\n" : "", sec);
			snprintf(section, sizeof section, "%s", sec);
		}
		if (markdown)
			md_row(f, k);
		else
			text_row(f, k);
	}
}
