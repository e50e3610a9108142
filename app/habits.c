/* habits.c - the table of options other tools' users type (app/habits.h):
 * ffmpeg's -frames:v, -r, -s, -crf, and the -o, --output, --size of many
 * other programs. Each row says which scene key does what the option did there;
 * main's parser (app/main.c) looks every unknown option up here before it
 * refuses it, so the refusal names the exact --set. Two rows are aliases
 * (--frames, --fps: one meaning in every tool), documented in --help. */
#include "habits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app.h"

const struct app_habit app_habits[] = {
	{"--frames", "", APP_HABIT_KEY, "output.frames", 1, 1, ""},
	{"--fps", "", APP_HABIT_KEY, "output.fps", 1, 1, ""},
	{"-frames:v", "ffmpeg", APP_HABIT_KEY, "output.frames", 1, 0, ""},
	{"-vframes", "ffmpeg", APP_HABIT_KEY, "output.frames", 1, 0, ""},
	{"-frames", "ffmpeg", APP_HABIT_KEY, "output.frames", 1, 0, ""},
	{"-r", "ffmpeg", APP_HABIT_KEY, "output.fps", 1, 0, ""},
	{"-framerate", "ffmpeg", APP_HABIT_KEY, "output.fps", 1, 0, ""},
	{"-o", "", APP_HABIT_OUTPUT, NULL, 1, 0, ""},
	{"--output", "", APP_HABIT_OUTPUT, NULL, 1, 0, ""},
	{"-s", "ffmpeg", APP_HABIT_SIZE, NULL, 1, 0, " (`nbody-render batch` reads -s as --set)"},
	{"--size", "", APP_HABIT_SIZE, NULL, 1, 0, ""},
	{"-crf", "ffmpeg", APP_HABIT_KEY, "output.crf", 1, 0, ""},
	{"-preset", "ffmpeg", APP_HABIT_KEY, "output.preset", 1, 0, ""},
	{"-c:v", "ffmpeg", APP_HABIT_KEY, "output.codec", 1, 0, " (h264 or h265)"},
	{"-vcodec", "ffmpeg", APP_HABIT_KEY, "output.codec", 1, 0, " (h264 or h265)"},
	{"-t", "ffmpeg", APP_HABIT_SECONDS, "output.frames", 1, 0, ""},
	{"-y", "ffmpeg", APP_HABIT_NONE, NULL, 0, 0,
	 ": not needed: a run replaces the outputs it wrote before, and refuses what it did not write"},
	{"--seed", "", APP_HABIT_KEY, "seed", 1, 0, ""},
};
const int app_habits_n = (int)(sizeof app_habits / sizeof app_habits[0]);

const struct app_habit *app_habit_find(const char *arg, const char **inline_value)
{
	*inline_value = NULL;
	for (int i = 0; i < app_habits_n; i++) {
		const struct app_habit *h = &app_habits[i];
		size_t n = strlen(h->opt);
		if (strncmp(arg, h->opt, n) != 0)
			continue;
		if (arg[n] == '\0')
			return h;
		if (arg[n] == '=' && h->value && h->opt[1] == '-') { /* --frames=10 */
			*inline_value = arg + n + 1;
			return h;
		}
	}
	return NULL;
}

/* File name NAME's role: 1 a video, 2 a JPEG preview, 0 anything else (a
 * directory of PNG frames). */
static int output_kind(const char *name)
{
	static const char *const video[] = {".mp4", ".mkv", ".mov", ".webm", ".gif", ".avi", ".m4v"};
	const char *dot = strrchr(name, '.');
	if (!dot || strchr(dot, '/'))
		return 0;
	for (size_t i = 0; i < sizeof video / sizeof video[0]; i++)
		if (strcasecmp(dot, video[i]) == 0)
			return 1;
	return strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0 ? 2 : 0;
}

/* The exact --set text that does what H did with VALUE (NULL: a
 * placeholder), in OUT. */
static void habit_hint(const struct app_habit *h, const char *value, char *out, size_t len)
{
	int w = 0, ht = 0;
	char tail;
	switch (h->map) {
	case APP_HABIT_KEY:
		snprintf(out, len, "--set %s=%s", h->key, value ? value : "N");
		break;
	case APP_HABIT_OUTPUT: {
		const int k = value ? output_kind(value) : 1;
		snprintf(out, len, "--set %s=%s", k == 1 ? "output.video" : k == 2 ? "output.preview"
							       : "output.png_dir",
			 value ? value : "FILE.mp4");
		break;
	}
	case APP_HABIT_SIZE:
		if (value && sscanf(value, "%d%*[xX]%d%c", &w, &ht, &tail) == 2 && w > 0 && ht > 0)
			snprintf(out, len, "--set render.width=%d --set render.height=%d", w, ht);
		else
			snprintf(out, len, "--set render.width=W --set render.height=H");
		break;
	case APP_HABIT_SECONDS: /* a clip's length: frames = seconds x fps */
		snprintf(out, len, "--set output.frames=N, N = %s x output.fps (%.0f at the default 30 "
			 "fps)", value ? value : "SECONDS", value ? 30 * atof(value) : 300.0);
		break;
	case APP_HABIT_NONE:
		out[0] = '\0';
		break;
	}
}

int app_habit_set(const struct app_habit *h, const char *value, char *out, size_t len)
{
	if (!h->alias || h->map != APP_HABIT_KEY) {
		log_error("%s: not an alias (internal)", h->opt);
		return NB_EINPUT;
	}
	if (!value || !value[0]) {
		log_error("%s needs a value: %s N is --set %s=N", h->opt, h->opt, h->key);
		return NB_EINPUT;
	}
	if ((size_t)snprintf(out, len, "%s=%s", h->key, value) >= len) {
		log_error("%s: the value is too long (%zu characters)", h->opt, strlen(value));
		return NB_EINPUT;
	}
	return 0;
}

int app_habit_refuse(const struct app_habit *h, const char *value)
{
	char hint[600];
	char as[32] = "";
	if (h->tool[0])
		snprintf(as, sizeof as, " (as in %s)", h->tool);
	habit_hint(h, value, hint, sizeof hint);
	if (h->map == APP_HABIT_NONE)
		log_error("unknown option '%s'%s%s", h->opt, as, h->note);
	else
		log_error("unknown option '%s'%s: use %s%s", h->opt, as, hint, h->note);
	return NB_EINPUT;
}
