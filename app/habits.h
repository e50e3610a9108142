/* habits.h - options that users of ffmpeg and SPLASH type out of habit
 * (`--frames 10`, `-o out.mp4`, `-r 30`, `-s 1920x1080`): ONE table of
 * rows (app/habits.c), read by main's argument parser. A row either acts
 * as the --set it stands for (an alias: unambiguous, listed in --help) or
 * is refused (exit 2) with the exact --set that does what it does. */
#ifndef NB_APP_HABITS_H
#define NB_APP_HABITS_H

#include <stddef.h>

/* How a row's value becomes scene keys. */
enum app_habit_map {
	APP_HABIT_KEY,    /* the value is KEY's: --set KEY=VALUE */
	APP_HABIT_OUTPUT, /* a file name: output.video (a video extension), output.preview
			   * (.jpg), else output.png_dir */
	APP_HABIT_SIZE,   /* WxH: render.width=W and render.height=H */
	APP_HABIT_SECONDS,/* a length in seconds: output.frames = seconds x output.fps */
	APP_HABIT_NONE,   /* nothing to set: the row's note says why */
};

struct app_habit {
	const char *opt;  /* as typed: "--frames", "-frames:v" */
	const char *tool; /* whose habit: "ffmpeg", "SPLASH" */
	enum app_habit_map map;
	const char *key;  /* APP_HABIT_KEY: the scene key */
	int value;        /* 1: takes a value (the next argument, or after '=') */
	int alias;        /* 1: acts as --set KEY=VALUE (only APP_HABIT_KEY rows) */
	const char *note; /* said with the hint: what differs ("" none) */
};

extern const struct app_habit app_habits[];
extern const int app_habits_n;

/* The row for command-line argument ARG, or NULL. "--frames=10" finds
 * "--frames" with *inline_value "10" (else *inline_value is NULL). */
const struct app_habit *app_habit_find(const char *arg, const char **inline_value);

/* An alias row's override "KEY=VALUE" in OUT (LEN bytes). 0, or NB_EINPUT
 * (logged: the row is not an alias, the value is missing or too long). */
int app_habit_set(const struct app_habit *h, const char *value, char *out, size_t len);

/* Log the refusal of row H, typed with VALUE (NULL: none given):
 * "unknown option '-o' (ffmpeg's output file): use --set output.video=a.mp4".
 * Returns NB_EINPUT. */
int app_habit_refuse(const struct app_habit *h, const char *value);

#endif
