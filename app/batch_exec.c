/* batch_exec.c - run the planned runs, each in a forked child process, at
 * most --jobs at once.
 *
 * Isolation: a run that crashes, aborts or exits takes only its own process
 * down; the parent records the exit status and goes on. The child reloads
 * its scene (deterministic, so it is the run that was planned), calls
 * app_run, hands its app_result back through a pipe and exits with
 * log_exit_status(rc). Its stderr (and stdout) come to the parent through
 * another pipe and are printed line by line prefixed with "[NAME] ".
 *
 * Sharing the machine: CPU runs get max(1, cores / slots) OpenMP threads
 * each. GPU runs (backend not cpu, and an NVIDIA device present) go one per
 * device: with several devices and --jobs > 1 each child sees only its own
 * through CUDA_VISIBLE_DEVICES. The parent never touches CUDA (a CUDA
 * context does not survive fork); it counts devices from
 * /proc/driver/nvidia/gpus, or from CUDA_VISIBLE_DEVICES when that is set.
 *
 * Ctrl-C: children run in their own process group, so the terminal's SIGINT
 * reaches only the parent, which stops launching and sends each running
 * child exactly one SIGINT: the child finishes its current frame, finalises
 * its video and exits 130. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../output/output.h"
#include "batch.h"
#include "progress.h"

#define MAX_GPUS 64

struct slot {
	pid_t pid;        /* 0: free */
	int run;
	int err_fd, res_fd;
	int gpu;          /* device index into the list, -1 none */
	double t0;
	char line[2048];  /* partial line from the child */
	size_t len;
};

static int cpu_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* Device names for CUDA_VISIBLE_DEVICES, one per usable GPU. */
static int gpu_list(char list[][64])
{
	int n = 0;
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	if (env) {
		for (const char *s = env; *s && n < MAX_GPUS;) {
			size_t len = strcspn(s, ",");
			if (len > 0 && len < 64)
				snprintf(list[n++], 64, "%.*s", (int)len, s);
			s += len + (s[len] == ',');
		}
		return n;
	}
	DIR *d = opendir("/proc/driver/nvidia/gpus");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d)) && n < MAX_GPUS;)
		if (e->d_name[0] != '.') {
			snprintf(list[n], 64, "%d", n);
			n++;
		}
	closedir(d);
	return n;
}

static int g_nruns; /* for "[k/M name]" */

static void emit_line(struct batch_run *r, const char *line)
{
	const char *e = strstr(line, "error: ");
	if (e && !r->message[0])
		snprintf(r->message, sizeof r->message, "%s", e + 7);
	if (log_get_level() != LOG_QUIET)
		log_info("[%d/%d %s] %s", r->index + 1, g_nruns, r->name, line);
	else if (e) /* errors show even when quiet */
		log_error("[%d/%d %s] %s", r->index + 1, g_nruns, r->name, e + 7);
}

/* Read what the child wrote; print complete lines (all at eof). */
static void drain(struct slot *s, struct batch_run *r, int eof)
{
	for (;;) {
		ssize_t got = read(s->err_fd, s->line + s->len, sizeof s->line - 1 - s->len);
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			break;
		}
		s->len += (size_t)got;
		s->line[s->len] = '\0';
		char *nl;
		while ((nl = memchr(s->line, '\n', s->len)) || (nl = memchr(s->line, '\r', s->len))) {
			*nl = '\0';
			if (nl > s->line)
				emit_line(r, s->line);
			s->len -= (size_t)(nl + 1 - s->line);
			memmove(s->line, nl + 1, s->len);
		}
		if (s->len == sizeof s->line - 1) { /* an overlong line: print it in pieces */
			s->line[s->len] = '\0';
			emit_line(r, s->line);
			s->len = 0;
		}
	}
	if (eof && s->len) {
		s->line[s->len] = '\0';
		emit_line(r, s->line);
		s->len = 0;
	}
}

static void __attribute__((noreturn))
child(const struct batch_run *r, const struct batch_opts *o, int threads, const char *gpu, int err_w,
      int res_w)
{
	struct scene *sc = malloc(sizeof *sc);
	struct app_result res;
	char msg[512], num[16];
	int rc = NB_ERUNTIME;

	setpgid(0, 0);
	dup2(err_w, 2);
	dup2(err_w, 1);
	close(err_w);
	memset(&res, 0, sizeof res);
	snprintf(num, sizeof num, "%d", threads);
	setenv("OMP_NUM_THREADS", num, 1);
	omp_set_num_threads(threads);
	if (gpu)
		setenv("CUDA_VISIBLE_DEVICES", gpu, 1);
	if (!sc)
		goto end;
	rc = batch_scene_load(r, sc, msg, sizeof msg);
	if (!rc)
		rc = batch_scene_place(sc, r->dir, msg, sizeof msg);
	if (rc) {
		log_error("%s", msg);
		goto end;
	}
	rc = out_mkdirs(r->dir);
	if (!rc)
		rc = app_run(sc, o->backend_cli, &res);
end:
	if (write(res_w, &res, sizeof res) != (ssize_t)sizeof res)
		rc = rc ? rc : NB_ERUNTIME;
	fflush(NULL);
	_exit(log_exit_status(rc));
}

static int launch(struct slot *s, struct batch_run *r, const struct batch_opts *o, int threads,
		  const char *gpu)
{
	int ep[2], rp[2];
	if (pipe(ep))
		return NB_ERUNTIME;
	if (pipe(rp)) {
		close(ep[0]), close(ep[1]);
		return NB_ERUNTIME;
	}
	fflush(NULL); /* no buffered output duplicated into the child */
	pid_t pid = fork();
	if (pid < 0) {
		close(ep[0]), close(ep[1]), close(rp[0]), close(rp[1]);
		return NB_ERUNTIME;
	}
	if (pid == 0) {
		close(ep[0]), close(rp[0]);
		child(r, o, threads, gpu, ep[1], rp[1]);
	}
	setpgid(pid, pid); /* also here: no window where Ctrl-C reaches the child */
	close(ep[1]), close(rp[1]);
	fcntl(ep[0], F_SETFL, fcntl(ep[0], F_GETFL) | O_NONBLOCK);
	s->pid = pid;
	s->run = r->index;
	s->err_fd = ep[0];
	s->res_fd = rp[0];
	s->t0 = app_now();
	s->len = 0;
	return 0;
}

/* The child has exited with wait status ws: record the outcome. */
static void reap(struct slot *s, struct batch_run *r, int ws)
{
	struct app_result res;
	drain(s, r, 1);
	r->wall_s = app_now() - s->t0;
	if (read(s->res_fd, &res, sizeof res) == (ssize_t)sizeof res)
		r->frames_done = res.frames_done;
	close(s->err_fd), close(s->res_fd);
	if (WIFEXITED(ws)) {
		r->exit_code = WEXITSTATUS(ws);
		r->status = r->exit_code == 0 ? BATCH_OK
			  : r->exit_code == 2 ? BATCH_BAD_INPUT
			  : r->exit_code == 130 ? BATCH_INTERRUPTED : BATCH_FAILED;
	} else {
		int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
		r->exit_code = 128 + sig;
		r->status = BATCH_FAILED;
		if (!r->message[0])
			snprintf(r->message, sizeof r->message, "killed by signal %d (%s)", sig, strsignal(sig));
	}
	s->pid = 0;
}

static double work_of(const struct batch_run *r)
{
	double w = (double)r->bodies * (double)r->steps;
	return w > 1 ? w : 1;
}

int batch_exec(const struct batch_file *bf, struct batch_run *runs, int nruns,
	       const struct batch_opts *opts)
{
	(void)bf;
	static char gpus[MAX_GPUS][64];
	int ngpu = gpu_list(gpus), gpu_busy[MAX_GPUS] = {0};
	int todo = 0, finished = 0, next = 0, active = 0, forwarded = 0;
	double total_work = 0, done_work = 0, t_start = app_now();

	g_nruns = nruns;
	for (int i = 0; i < nruns; i++)
		if (runs[i].status == BATCH_PENDING)
			todo++, total_work += work_of(&runs[i]);
	int nslots = opts->jobs < todo ? opts->jobs : todo;
	if (nslots < 1)
		return 0;
	int threads = cpu_count() / nslots > 1 ? cpu_count() / nslots : 1;
	struct slot *slots = calloc((size_t)nslots, sizeof *slots);
	if (!slots) {
		log_error("out of memory starting the batch");
		return NB_ERUNTIME;
	}
	log_info("batch: %d run%s to do, up to %d at a time (%d CPU thread%s each%s)", todo,
		 todo == 1 ? "" : "s", nslots, threads, threads == 1 ? "" : "s",
		 ngpu && nslots > 1 ? ", GPU runs one per device" : "");

	for (;;) {
		/* launch while there is a free slot (and a free device for GPU runs) */
		while (!app_interrupted() && active < nslots) {
			while (next < nruns && runs[next].status != BATCH_PENDING)
				next++;
			if (next == nruns)
				break;
			struct batch_run *r = &runs[next];
			int gpu = -1;
			int want_gpu = ngpu > 0 && (opts->backend_cli >= 0 ? opts->backend_cli != SCENE_BACKEND_CPU
									  : r->uses_gpu_backend);
			if (want_gpu && nslots > 1) {
				for (int d = 0; d < ngpu && gpu < 0; d++)
					if (!gpu_busy[d])
						gpu = d;
				if (gpu < 0)
					break; /* wait for a device; keep the batch's order */
			}
			int k = 0;
			while (slots[k].pid)
				k++;
			log_info("run %d/%d %s: started", r->index + 1, nruns, r->name);
			if (launch(&slots[k], r, opts, threads, gpu >= 0 && ngpu > 1 ? gpus[gpu] : NULL)) {
				log_error("run %s: cannot start a process: %s", r->name, strerror(errno));
				r->status = BATCH_FAILED;
				snprintf(r->message, sizeof r->message, "cannot start a process");
				finished++;
				next++;
				continue;
			}
			slots[k].gpu = gpu;
			if (gpu >= 0)
				gpu_busy[gpu] = 1;
			active++;
			next++;
		}
		if (app_interrupted() && !forwarded) {
			forwarded = 1;
			if (active)
				log_info("batch: interrupted; %d running run%s finish their current frame",
					 active, active == 1 ? "" : "s");
			for (int k = 0; k < nslots; k++)
				if (slots[k].pid)
					kill(slots[k].pid, SIGINT);
		}
		if (active == 0)
			break;

		struct pollfd pfd[nslots];
		for (int k = 0; k < nslots; k++)
			pfd[k] = (struct pollfd){.fd = slots[k].pid ? slots[k].err_fd : -1, .events = POLLIN};
		poll(pfd, (nfds_t)nslots, 200); /* EINTR (Ctrl-C) just comes round again */
		for (int k = 0; k < nslots; k++) {
			struct slot *s = &slots[k];
			int ws;
			if (!s->pid)
				continue;
			drain(s, &runs[s->run], 0);
			if (waitpid(s->pid, &ws, WNOHANG) != s->pid)
				continue;
			struct batch_run *r = &runs[s->run];
			if (s->gpu >= 0)
				gpu_busy[s->gpu] = 0;
			reap(s, r, ws);
			active--;
			finished++;
			done_work += work_of(r);
			/* ETA: the elapsed time scaled by the work left (bodies x steps) */
			char took[32], eta[64] = "";
			batch_format_duration(r->wall_s, took, sizeof took);
			if (finished < todo && !app_interrupted()) {
				size_t l = (size_t)snprintf(eta, sizeof eta, ", overall ETA ");
				batch_format_duration((app_now() - t_start) * (total_work - done_work) / done_work,
						      eta + l, sizeof eta - l);
			}
			if (r->status == BATCH_OK)
				log_info("run %d/%d %s: done in %s; %d of %d finished%s", r->index + 1, nruns,
					 r->name, took, finished, todo, eta);
			else
				log_info("run %d/%d %s: %s (exit %d) after %s; %d of %d finished%s", r->index + 1,
					 nruns, r->name, batch_status_name(r->status), r->exit_code, took, finished,
					 todo, eta);
		}
	}
	free(slots);
	if (!app_interrupted())
		return 0;
	for (int i = 0; i < nruns; i++)
		if (runs[i].status == BATCH_PENDING)
			runs[i].status = BATCH_NOT_RUN;
	return NB_EINTR;
}
