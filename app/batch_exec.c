/* batch_exec.c - run the planned runs, each group (one run, or the runs
 * that share a simulation: batch_group.c) in a forked child process, at
 * most --jobs at once.
 *
 * Isolation: a group that crashes, aborts or exits takes only its own
 * process down; the parent records the exit status and goes on. The child
 * reloads its runs' scenes (deterministic, so they are the runs that were
 * planned), calls app_run_views (one simulation, one view per run), hands
 * each run's frames and outcome back through a pipe and exits with
 * log_exit_status of the first failure. Its stderr (and stdout) come to
 * the parent through another pipe and are printed line by line prefixed
 * with "[k/M NAME] " ("[k/M NAME +N]" for a group of N+1 runs); an error
 * line is charged to the run whose directory it names, or to every run
 * of the group when it names none.
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../output/output.h"
#include "batch.h"
#include "progress.h"

#define MAX_GPUS 64

/* What the child says about each run of its group (small: a pipe holds
 * BATCH_MAX_VIEWS of them without blocking). */
struct view_record {
	int frames_done;
	int rc;
};

struct slot {
	pid_t pid;        /* 0: free */
	int run;          /* the group's leader */
	int members[BATCH_MAX_VIEWS], nmembers; /* its runs, leader first */
	char label[SCENE_PATH_MAX + 48];        /* "k/M NAME" or "k/M NAME +N" */
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

void app_batch_share_gpus(int local_rank, int local_size)
{
	char list[MAX_GPUS][64], env[MAX_GPUS * 8] = "";
	const int n = gpu_list(list);
	if (n < 1 || local_size < 2)
		return;
	size_t len = 0;
	if (n >= local_size) { /* every local_size-th device from local_rank */
		for (int k = local_rank; k < n; k += local_size)
			len += (size_t)snprintf(env + len, sizeof env - len, "%s%s", len ? "," : "",
						list[k]);
	} else { /* more ranks than devices: they share */
		snprintf(env, sizeof env, "%s", list[local_rank % n]);
	}
	setenv("CUDA_VISIBLE_DEVICES", env, 1);
}

/* Does LINE name a path inside DIR? */
static int names_dir(const char *line, const char *dir)
{
	size_t n = strlen(dir);
	for (const char *p = strstr(line, dir); p; p = strstr(p + 1, dir))
		if (p[n] == '/')
			return 1;
	return 0;
}

static void emit_line(struct slot *s, struct batch_run *runs, const char *line)
{
	const char *e = strstr(line, "error: ");
	int named = 0;
	for (int k = 0; e && s->nmembers > 1 && k < s->nmembers; k++) {
		struct batch_run *r = &runs[s->members[k]];
		if (names_dir(e, r->dir) && (named = 1) && !r->message[0])
			snprintf(r->message, sizeof r->message, "%s", e + 7);
	}
	for (int k = 0; e && !named && k < s->nmembers; k++) {
		struct batch_run *r = &runs[s->members[k]];
		if (!r->message[0])
			snprintf(r->message, sizeof r->message, "%s", e + 7);
	}
	if (log_get_level() != LOG_QUIET)
		log_info("[%s] %s", s->label, line);
	else if (e) /* errors show even when quiet */
		log_error("[%s] %s", s->label, e + 7);
}

/* Read what the child wrote; print complete lines (all at eof). */
static void drain(struct slot *s, struct batch_run *runs, int eof)
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
				emit_line(s, runs, s->line);
			s->len -= (size_t)(nl + 1 - s->line);
			memmove(s->line, nl + 1, s->len);
		}
		if (s->len == sizeof s->line - 1) { /* an overlong line: print it in pieces */
			s->line[s->len] = '\0';
			emit_line(s, runs, s->line);
			s->len = 0;
		}
	}
	if (eof && s->len) {
		s->line[s->len] = '\0';
		emit_line(s, runs, s->line);
		s->len = 0;
	}
}

/* Remove the run's resolved-scene file, its completion mark, before any of
 * its outputs is opened: a run killed while it rewrites them (SIGKILL, a
 * power cut) is then never taken as complete by --resume. */
static int unmark_complete(const struct scene *sc)
{
	char path[SCENE_PATH_MAX];
	app_resolved_scene_path(sc, path);
	if (path[0] && app_out_remove_owned(path, "removing the old resolved scene before the run") != 0) {
		log_error("%s: cannot remove the old resolved scene before the run", path);
		return NB_ERUNTIME;
	}
	return 0;
}

static pid_t g_batch_pid; /* the parent, for the child's check that it lives */

/* The child: the runs of slot s, one simulation, one view each. */
static void __attribute__((noreturn))
child(const struct slot *s, const struct batch_run *runs, const struct batch_opts *o, int threads,
      const char *gpu, int err_w, int res_w)
{
	const int nm = s->nmembers;
	struct scene *sc = calloc((size_t)nm, sizeof *sc);
	struct app_view views[BATCH_MAX_VIEWS];
	struct view_record rec[BATCH_MAX_VIEWS];
	int vi[BATCH_MAX_VIEWS], nv = 0, rc = 0;
	char msg[512], num[16];

	setpgid(0, 0);
	/* the batch dies (kill -9, a rank killed under mpirun): this run stops
	 * as on Ctrl-C (exit 130, no temporary file) instead of going on alone */
	prctl(PR_SET_PDEATHSIG, SIGINT);
	if (getppid() != g_batch_pid)
		raise(SIGINT);
	dup2(err_w, 2);
	dup2(err_w, 1);
	close(err_w);
	memset(rec, 0, sizeof rec);
	snprintf(num, sizeof num, "%d", threads);
	setenv("OMP_NUM_THREADS", num, 1);
	omp_set_num_threads(threads);
	if (gpu)
		setenv("CUDA_VISIBLE_DEVICES", gpu, 1);
	for (int k = 0; k < nm; k++) {
		const struct batch_run *r = &runs[s->members[k]];
		int krc = sc ? batch_scene_load(r, &sc[k], msg, sizeof msg) : NB_ERUNTIME;
		if (!sc)
			snprintf(msg, sizeof msg, "out of memory for %d scenes", nm);
		if (!krc)
			krc = app_outputs_place(&sc[k], r->dir, msg, sizeof msg);
		if (krc)
			log_error("%s%s%s", nm > 1 ? r->dir : "", nm > 1 ? "/: " : "", msg);
		else
			krc = out_mkdirs(r->dir);
		if (!krc)
			krc = unmark_complete(&sc[k]);
		rec[k].rc = krc;
		if (!krc) {
			views[nv] = (struct app_view){.sc = &sc[k]};
			vi[nv++] = k;
		}
	}
	if (nv)
		app_run_views(views, nv, o->backend_cli);
	for (int j = 0; j < nv; j++) {
		rec[vi[j]].frames_done = views[j].res.frames_done;
		rec[vi[j]].rc = views[j].rc;
	}
	for (int k = 0; k < nm; k++)
		if (rc == 0)
			rc = rec[k].rc;
	if (write(res_w, rec, (size_t)nm * sizeof *rec) != (ssize_t)((size_t)nm * sizeof *rec))
		rc = rc ? rc : NB_ERUNTIME;
	fflush(NULL);
	_exit(log_exit_status(rc));
}

static int launch(struct slot *s, struct batch_run *runs, const struct batch_opts *o, int threads,
		  const char *gpu)
{
	struct batch_run *r = &runs[s->run];
	int ep[2], rp[2];
	if (pipe(ep))
		return NB_ERUNTIME;
	if (pipe(rp)) {
		close(ep[0]), close(ep[1]);
		return NB_ERUNTIME;
	}
	fflush(NULL); /* no buffered output duplicated into the child */
	g_batch_pid = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(ep[0]), close(ep[1]), close(rp[0]), close(rp[1]);
		return NB_ERUNTIME;
	}
	if (pid == 0) {
		close(ep[0]), close(rp[0]);
		child(s, runs, o, threads, gpu, ep[1], rp[1]);
	}
	setpgid(pid, pid); /* also here: no window where Ctrl-C reaches the child */
	close(ep[1]), close(rp[1]);
	fcntl(ep[0], F_SETFL, fcntl(ep[0], F_GETFL) | O_NONBLOCK);
	s->pid = pid;
	(void)r;
	s->err_fd = ep[0];
	s->res_fd = rp[0];
	s->t0 = log_clock_s();
	s->len = 0;
	return 0;
}

/* The child has exited with wait status ws: record each run's outcome. */
static void reap(struct slot *s, struct batch_run *runs, int ws)
{
	drain(s, runs, 1);
	for (int k = 0; k < s->nmembers; k++) {
		struct batch_run *r = &runs[s->members[k]];
		struct view_record rec;
		int have = read(s->res_fd, &rec, sizeof rec) == (ssize_t)sizeof rec;
		r->wall_s = log_clock_s() - s->t0;
		if (have)
			r->frames_done = rec.frames_done;
		if (WIFEXITED(ws)) {
			r->exit_code = have ? log_exit_status(rec.rc) : WEXITSTATUS(ws);
			r->status = r->exit_code == 0 ? BATCH_OK
				  : r->exit_code == 2 ? BATCH_BAD_INPUT
				  : r->exit_code == 130 ? BATCH_INTERRUPTED : BATCH_FAILED;
			if (r->status == BATCH_OK)
				r->message[0] = '\0'; /* another view's error, named nowhere */
		} else {
			int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
			r->exit_code = 128 + sig;
			r->status = BATCH_FAILED;
			if (!r->message[0])
				snprintf(r->message, sizeof r->message, "killed by signal %d (%s)", sig,
					 strsignal(sig));
		}
	}
	close(s->err_fd), close(s->res_fd);
	s->pid = 0;
}

/* Does r start a job: it leads its group, or was never grouped? */
static int leads(const struct batch_run *r)
{
	return r->group < 0 || r->group == r->index;
}

/* Slot s takes the group led by runs[lead]: its runs and its label. */
static void slot_fill(struct slot *s, const struct batch_run *runs, int nruns, int lead)
{
	const struct batch_run *r = &runs[lead];
	s->run = lead;
	s->nmembers = r->group < 0 ? 0 : batch_group_members(runs, nruns, lead, s->members, BATCH_MAX_VIEWS);
	if (s->nmembers == 0)
		s->members[s->nmembers++] = lead;
	if (s->nmembers > 1)
		snprintf(s->label, sizeof s->label, "%d/%d %s +%d", r->index + 1, nruns, r->name,
			 s->nmembers - 1);
	else
		snprintf(s->label, sizeof s->label, "%d/%d %s", r->index + 1, nruns, r->name);
}

static double work_of(const struct batch_run *r)
{
	double w = (double)r->bodies * (double)r->steps;
	return w > 1 ? w : 1;
}

/* The scheduler's state: the slots, the devices and the counts. */
struct sched {
	struct batch_run *runs;
	int nruns;
	const struct batch_opts *opts;
	struct slot *slots;
	int nslots, threads;
	char (*gpus)[64];
	int ngpu, gpu_busy[MAX_GPUS];
	int todo, finished, next, active;
	double total_work, done_work, t_start;
};

/* Start runs[q->next] (a group leader) in a free slot on device GPU (-1:
 * none). A failed start marks its runs failed. */
static void sched_start(struct sched *q, int gpu)
{
	struct batch_run *runs = q->runs, *r = &runs[q->next];
	int k = 0;
	while (q->slots[k].pid)
		k++;
	struct slot *s = &q->slots[k];
	slot_fill(s, runs, q->nruns, q->next);
	if (s->nmembers > 1)
		log_info("run %s: started, one simulation for %d runs", s->label, s->nmembers);
	else
		log_info("run %d/%d %s: started", r->index + 1, q->nruns, r->name);
	if (launch(s, runs, q->opts, q->threads, gpu >= 0 && q->ngpu > 1 ? q->gpus[gpu] : NULL)) {
		log_error("run %s: cannot start a process: %s", r->name, strerror(errno));
		for (int m = 0; m < s->nmembers; m++) {
			runs[s->members[m]].status = BATCH_FAILED;
			snprintf(runs[s->members[m]].message, sizeof r->message, "cannot start a process");
		}
		q->finished += s->nmembers;
		q->next++;
		return;
	}
	s->gpu = gpu;
	if (gpu >= 0)
		q->gpu_busy[gpu] = 1;
	q->active++;
	q->next++;
}

/* Launch while there is a free slot (and a free device for GPU runs). */
static void sched_launch(struct sched *q)
{
	struct batch_run *runs = q->runs;
	while (!app_interrupted() && q->active < q->nslots) {
		while (q->next < q->nruns &&
		       !(runs[q->next].status == BATCH_PENDING && leads(&runs[q->next])))
			q->next++;
		if (q->next == q->nruns)
			break;
		struct batch_run *r = &runs[q->next];
		int gpu = -1;
		int want_gpu = q->ngpu > 0 && (q->opts->backend_cli >= 0
						       ? q->opts->backend_cli != SCENE_BACKEND_CPU
						       : r->uses_gpu_backend);
		if (want_gpu && q->nslots > 1) {
			for (int d = 0; d < q->ngpu && gpu < 0; d++)
				if (!q->gpu_busy[d])
					gpu = d;
			if (gpu < 0)
				break; /* wait for a device; keep the batch's order */
		}
		sched_start(q, gpu);
	}
}

/* Log the end of slot S's runs, with the overall ETA. */
static void sched_report(const struct sched *q, const struct slot *s)
{
	const struct batch_run *runs = q->runs;
	/* ETA: the elapsed time scaled by the work left (bodies x steps) */
	char took[32], eta[64] = "";
	batch_format_duration(runs[s->run].wall_s, took, sizeof took);
	if (q->finished < q->todo && !app_interrupted()) {
		size_t l = (size_t)snprintf(eta, sizeof eta, ", overall ETA ");
		batch_format_duration((log_clock_s() - q->t_start) * (q->total_work - q->done_work) /
					      q->done_work,
				      eta + l, sizeof eta - l);
	}
	for (int m = 0; m < s->nmembers; m++) {
		const struct batch_run *r = &runs[s->members[m]];
		const char *more = m + 1 < s->nmembers ? "" : eta;
		int nth = q->finished - s->nmembers + m + 1;
		if (r->status == BATCH_OK)
			log_info("run %d/%d %s: done in %s; %d of %d finished%s", r->index + 1,
				 q->nruns, r->name, took, nth, q->todo, more);
		else
			log_info("run %d/%d %s: %s (exit %d) after %s; %d of %d finished%s",
				 r->index + 1, q->nruns, r->name, batch_status_name(r->status),
				 r->exit_code, took, nth, q->todo, more);
	}
}

/* Wait a little for the children's output; reap those that ended. */
static void sched_wait(struct sched *q)
{
	struct pollfd pfd[q->nslots];
	for (int k = 0; k < q->nslots; k++)
		pfd[k] = (struct pollfd){.fd = q->slots[k].pid ? q->slots[k].err_fd : -1,
					 .events = POLLIN};
	poll(pfd, (nfds_t)q->nslots, 200); /* EINTR (Ctrl-C) just comes round again */
	for (int k = 0; k < q->nslots; k++) {
		struct slot *s = &q->slots[k];
		int ws;
		if (!s->pid)
			continue;
		drain(s, q->runs, 0);
		if (waitpid(s->pid, &ws, WNOHANG) != s->pid)
			continue;
		if (s->gpu >= 0)
			q->gpu_busy[s->gpu] = 0;
		reap(s, q->runs, ws);
		q->active--;
		q->finished += s->nmembers;
		q->done_work += work_of(&q->runs[s->run]);
		sched_report(q, s);
	}
}

int batch_exec(const struct batch_file *bf, struct batch_run *runs, int nruns,
	       const struct batch_opts *opts)
{
	(void)bf;
	static char gpus[MAX_GPUS][64];
	struct sched q = {.runs = runs, .nruns = nruns, .opts = opts, .gpus = gpus,
			  .t_start = log_clock_s()};
	q.ngpu = gpu_list(gpus);
	int jobs = 0, forwarded = 0;

	for (int i = 0; i < nruns; i++)
		if (runs[i].status == BATCH_PENDING) {
			q.todo++;
			if (leads(&runs[i]))
				jobs++, q.total_work += work_of(&runs[i]); /* a group simulates once */
		}
	q.nslots = opts->jobs < jobs ? opts->jobs : jobs;
	if (q.nslots < 1)
		return 0;
	q.threads = cpu_count() / q.nslots > 1 ? cpu_count() / q.nslots : 1;
	q.slots = calloc((size_t)q.nslots, sizeof *q.slots);
	if (!q.slots) {
		log_error("out of memory starting the batch");
		return NB_ERUNTIME;
	}
	log_info("batch: %d run%s to do in %d simulation%s, up to %d at a time (%d CPU thread%s each%s)",
		 q.todo, q.todo == 1 ? "" : "s", jobs, jobs == 1 ? "" : "s", q.nslots, q.threads,
		 q.threads == 1 ? "" : "s", q.ngpu && q.nslots > 1 ? ", GPU runs one per device" : "");

	for (;;) {
		sched_launch(&q);
		if (app_interrupted() && !forwarded) {
			forwarded = 1;
			if (q.active)
				log_info("batch: interrupted; %d running run%s finish their current frame",
					 q.active, q.active == 1 ? "" : "s");
			for (int k = 0; k < q.nslots; k++)
				if (q.slots[k].pid)
					kill(q.slots[k].pid, SIGINT);
		}
		if (q.active == 0)
			break;
		sched_wait(&q);
	}
	free(q.slots);
	if (!app_interrupted())
		return 0;
	for (int i = 0; i < nruns; i++)
		if (runs[i].status == BATCH_PENDING)
			runs[i].status = BATCH_NOT_RUN;
	return NB_EINTR;
}
