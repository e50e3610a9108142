/* dist.h - runs over MPI ranks (issue 19): one simulation over P ranks,
 * its frames summed over them, and batches spread over ranks or shards.
 * One public header for dist/, the layer between engine/ and app/.
 *
 * The scheme (docs/PHYSICS.md, section "Over MPI ranks"; numbers in
 * docs/BENCHMARKS.md): every rank holds the whole state and integrates
 * every body (kick and drift are O(n) and the same on every rank, bit for
 * bit); each rank computes the forces of its own bodies only, a domain of
 * consecutive bodies along the Morton curve, and the ranks then exchange
 * those forces (4 doubles a body: acceleration and potential) so every
 * rank has them all. Domains are recut by measured work every
 * NB_DIST_REBALANCE steps (default 8) or when the ranks' force times
 * differ by more than 10%. Because a body's force does not depend on which
 * rank computes it (the direct sum in body order; the replicated tree's
 * walk), the state is the same on 1..P ranks.
 *
 * A build without MPI (the default) compiles this layer with one rank:
 * dist_size() is 1 and nothing is exchanged. Errors between ranks (an MPI
 * call that fails, a rank silent for NB_DIST_TIMEOUT seconds) end every
 * rank with exit status 1 through MPI_Abort, after one message naming the
 * rank: a half-dead distributed run must not hang.
 *
 * Ending a run over ranks (one simulation, not a batch: dist_run_over_ranks).
 * Rank 0 writes every output, so rank 0 ends the job, after its outputs
 * were finished or removed as for one process (README, exit status):
 *   - rank 0's exchanges do not end the job: a rank silent for
 *     NB_DIST_TIMEOUT seconds, an MPI error or another rank's failure
 *     note breaks them (dist_broken; one message), the force and the
 *     checks below return NB_ERUNTIME, the run fails and removes its
 *     outputs, and dist_finish ends every rank;
 *   - another rank that fails tells rank 0 (dist_finish, dist_fail) and
 *     waits for it (at most NB_DIST_TIMEOUT s) instead of aborting at once;
 *   - a signal stops rank 0 only: the other ranks go on (dist_defers_stop)
 *     so they still answer. Stopped, rank 0 waits at most NB_DIST_STOP_GRACE
 *     seconds (default 0.5) for an exchange in flight, and then asks every
 *     rank (dist_stop_status): all answer, the run was interrupted (exit
 *     130); one does not (killed, or mpirun's SIGTERM after a rank died),
 *     the run failed (exit 1). mpirun sends SIGKILL 1 s after its SIGTERM. */
#ifndef NB_DIST_H
#define NB_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/engine.h"
#include "../sim/cuda/gpu.h"
#include "../render/render.h"
#include "../sim/sim.h"

/* ---- the ranks (dist/comm.c) ---------------------------------------------- */
/* MPI_Init (when built with MPI) with errors returned, not fatal. Call once,
 * first thing in main. 0 or NB_ERUNTIME (logged). */
int dist_init(int *argc, char ***argv);
/* Finish with exit status STATUS (0, 1, 2, 130): 0: MPI_Finalize;
 * otherwise, over several ranks, MPI_Abort(STATUS) so no rank waits on
 * this one. Returns STATUS (a single rank, or no MPI). */
int dist_finish(int status);
int dist_rank(void);
int dist_size(void);
/* The input checks' verdict over the ranks, which all make them alike
 * (main.c: only rank 0 prints its messages). rc: this rank's (0 or an NB_
 * code). Returns the first non-zero rc in rank order (rank 0's first), 0
 * when every rank's is 0; *who gets its rank (-1: none). A collective call.
 * When it returns non-zero the ranks end together: dist_finish then
 * finalizes every rank with that status, no MPI_Abort. */
int dist_agree(int rc, int *who);
/* This process is one rank of one simulation over the ranks (not a
 * batch): from here a run's end is rank 0's (see "Ending a run over
 * ranks" above). No effect on one rank. */
void dist_run_over_ranks(void);
/* 1 on the ranks other than 0 of a run over ranks: they leave stopping
 * (a signal) to rank 0 (app_interrupted says no). */
int dist_defers_stop(void);
/* NB_ERUNTIME once rank 0's exchanges broke (logged), else 0. */
int dist_broken(void);
/* Rank 0 of a run over ranks that a signal stopped (NB_EINTR): NB_EINTR
 * when every other rank answers within NB_DIST_STOP_GRACE seconds (an
 * interrupt), NB_ERUNTIME (logged) when one does not or the exchanges
 * broke (a rank died or failed). NB_EINTR elsewhere. */
int dist_stop_status(void);
/* This rank's place among the ranks of its host (MPI_COMM_TYPE_SHARED),
 * and how many they are: GPU ranks bind GPU local_rank % count. 0 and 1
 * without MPI. */
int dist_local_rank(void);
int dist_local_size(void);
/* 1 when this binary has MPI compiled in. */
int dist_have_mpi(void);
/* A distributed failure: log "rank R: MSG" and end every rank with exit
 * status 1 (MPI_Abort; on another rank than 0 of a run over ranks, after
 * telling rank 0). Does not return. */
void dist_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The seconds a rank waits for another in one exchange before it calls
 * the other dead (NB_DIST_TIMEOUT, default 120). */
double dist_timeout_s(void);
/* Every rank's block to every rank: rank r sends bytes[r] bytes from send,
 * and recv gets rank r's block at offset off[r]. Point-to-point messages
 * waited for with a deadline, so a rank that died or hangs is named
 * (dist_fail). what names the exchange in messages. Counts the bytes. */
void dist_allgatherv(const void *send, void *recv, const size_t *bytes, const size_t *off,
		     const char *what);
/* Sum n floats over the ranks into rank 0's buf (other ranks' buf is left
 * as it was), bounded in time. */
void dist_sum_floats(float *buf, size_t n, const char *what);
/* The maximum over ranks of v[0..n-1], on every rank. */
void dist_max_doubles(double *v, int n, const char *what);
/* Gather bytes (the same count on every rank) into rank 0's recv
 * (size() * bytes; NULL on other ranks). */
void dist_gather(const void *send, size_t bytes, void *recv, const char *what);
/* The sum over ranks of v[0..n-1], on every rank, added in rank order (the
 * same bits on every rank). */
void dist_sum_doubles(double *v, int n, const char *what);
/* The sum over ranks of v[0..n-1] (integers: exact, modulo 2^64), on every
 * rank. */
void dist_sum_u64(uint64_t *v, int n, const char *what);
/* Every rank's blocks to every rank, of sizes known only to the sender:
 * rank r sends sbytes[k] bytes from send + soff[k] to rank k (its own
 * block copied). The sizes go first (an allgather of P sizes a rank), then
 * the blocks as point-to-point messages with the deadline and failure
 * rules above. Returns the received bytes (malloc'd, the caller frees),
 * rank k's block at roff[k], rbytes[k] long (rbytes, roff: P each, filled);
 * NULL when rank 0's exchanges broke (dist_broken; the buffers are left to
 * the pending messages). */
void *dist_alltoallv(const void *send, const size_t *sbytes, const size_t *soff, size_t *rbytes,
		     size_t *roff, const char *what);
/* Rank 0's bytes of buf to every rank's buf. */
void dist_bcast(void *buf, size_t bytes, const char *what);
/* The collective steps of a multi-file snapshot (output.h's struct
 * out_snap_comm; ctx unused): the sum of n counts (exact below 2^53), the
 * maximum of n doubles, rank 0's n values, the minimum of one int, each
 * over the ranks and on every rank. 0, or NB_ERUNTIME when rank 0's
 * exchanges broke (dist_broken). */
int dist_cb_sum_u64(void *ctx, uint64_t *v, int n);
int dist_cb_max_f64(void *ctx, double *v, int n);
int dist_cb_bcast_u64(void *ctx, uint64_t *v, int n);
int dist_cb_min_int(void *ctx, int *v);
/* Seconds this rank spent waiting for the exchanges above to complete
 * (the messages' time on the wire and the other ranks' lateness). */
double dist_wait_seconds(void);
/* Bytes this rank sent and received through the calls above. */
void dist_bytes(uint64_t *sent, uint64_t *received);

/* ---- domains along the Morton curve (dist/domain.c) ----------------------- */
struct dist_domain {
	size_t n;
	int P;
	uint32_t *order; /* n: body indices in Morton order (ties by index) */
	size_t *cut;     /* P + 1: rank r owns order[cut[r] .. cut[r+1]) */
	uint64_t *key;   /* n, scratch */
};
/* 0 or NB_ERUNTIME (logged). */
int dist_domain_init(struct dist_domain *d, size_t n, int P);
void dist_domain_free(struct dist_domain *d);
/* Morton order of pos (63-bit keys, 21 bits an axis, over the bodies'
 * bounding cube, as sim/tree.c's), then cut: rank r gets the bodies whose
 * running sum of w (n; NULL: 1 each) starts in [r W / P, (r+1) W / P).
 * Deterministic: the same on every rank for the same pos and w. */
int dist_domain_cut(struct dist_domain *d, const double *pos, const double *w);
/* max / mean of work[0..P-1] (1 when all are 0). */
double dist_imbalance(const double *work, int P);
/* New cuts out[0..P] of the slots 0..cut[P] so that each rank's share of
 * the measured cost is 1/P: rank r's old stretch [cut[r], cut[r+1]) took
 * t[r] (any unit), taken as spread evenly over its slots. Monotone,
 * out[0] = 0, out[P] = cut[P]; nothing measured: equal stretches. The
 * same on every rank for the same input (GPU ranks, dist/sim.c). */
void dist_cut_by_time(const size_t *cut, const double *t, int P, size_t *out);

/* ---- domains that own their bodies (simulation.ranks: domains) ---------------
 * The scheme of issue 31 beside the replicated one above (docs/PHYSICS.md,
 * "Over MPI ranks"): rank r holds only the bodies of its domain, a stretch
 * [bound[r], bound[r+1]) of the Morton curve over the GLOBAL bounding cube
 * (reduced over the ranks at every force call), cut by measured work
 * (dist/own.c, from histograms summed over the ranks: no rank gathers the
 * keys). At every force call, after the drift, the bodies whose key left
 * the domain move to their owner (dist/migrate.c), then the forces of the
 * own bodies are computed from every rank's bodies without any rank
 * holding them all (direct: dist/ring.c; Barnes-Hut: locally essential
 * trees, dist/let_force.c, on the CPU or on each rank's GPU). The
 * engine's state on each rank IS its own bodies (dist/domains.c); with
 * GPUs the state and the steps stay on the host and each force call
 * builds, exchanges and walks the trees on the device. What is not
 * written yet is refused before any work (dist_ranks_refuse). */
#define DIST_KEY_END ((uint64_t)1 << 63) /* past the largest 63-bit key */
/* The Morton key of p (21 bits an axis, x lowest) in the cube from lo
 * whose side is 2^21 / scale (dist_own_box). (dist/own.c) */
uint64_t dist_morton_key(const double p[3], const double lo[3], double scale);
/* The bounding cube of every rank's bodies (pos 3n, this rank's): lo and
 * the scale of dist_morton_key, as dist_domain_cut makes them from the
 * whole state. A collective call. */
void dist_own_box(const double *pos, size_t n, double lo[3], double *scale);
/* Cuts bound[0..P] of the key range (bound[0] = 0, bound[P] =
 * DIST_KEY_END, monotone) so that each of P domains carries 1/P of the
 * work: key (n, ascending) and w (n; NULL: 1 each) are this rank's, the
 * histograms are summed over the dist_size() ranks (P need not equal it:
 * one process cuts for P domains alone). The same on every rank. */
void dist_own_cut(const uint64_t *key, const double *w, size_t n, int P, uint64_t *bound);
/* qsort over the threads (dist/psort.c) for records whose first 8 bytes
 * are a uint64_t key that cmp orders first (ties then by cmp): a radix
 * sort on the key, then each run of one key by cmp; with a comparator
 * that orders every pair (ties broken by an id) the same result as qsort.
 * Falls back to qsort when n is small or scratch memory (n * size) is
 * short. Returns 0. */
int dist_psort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* The rank r whose stretch [bound[r], bound[r+1]) holds key. */
int dist_own_owner(const uint64_t *bound, int P, uint64_t key);
/* What travels with the engine's state of one rank: per body its key and
 * its work at the last force call (n = the state's). */
struct dist_owned {
	uint64_t *key;
	double *work;
	unsigned char *lev; /* each body's time-step level (individual steps), or NULL */
};
/* Move every body of st (this rank's, with o's key, work and lev) to the
 * rank that owns its key under bound (P + 1): st's arrays (pos vel acc mass
 * pot id comp) and o's are replaced by this rank's bodies, sorted by (key,
 * id); pot zeroed; o->lev travels when it is not NULL (then on every rank:
 * a rank without it would send bodies without their levels). *sent:
 * bodies this rank sent away. A collective call. 0, or
 * NB_ERUNTIME (logged; rank 0 when the exchange broke: st is left empty).
 * st->pid must be NULL. */
int dist_migrate(struct sim_state *st, struct dist_owned *o, const uint64_t *bound, int P,
		 size_t *sent);
/* The direct sum on st's own bodies (this rank's) from every rank's
 * bodies: st->acc and st->pot (per unit mass) written, work[i] the pairs
 * of body i; each: each own body's softening (p->soft_mixed) or NULL;
 * active: NULL (every own body), or the own bodies to compute (individual
 * time steps: the others' acc, pot and work are left as they were; every
 * rank takes part whatever its own count). *held: the bytes it held beside
 * the state at most. state: the solver's own between calls (NULL at the
 * first; dist_dom_release's to free). A collective call. 0 or NB_ERUNTIME
 * (logged). */
int dist_ring_direct(void **state, const struct sim_state *st, const struct sim_params *p,
		     const double *each, const unsigned char *active, double *work, size_t *held);
/* The Barnes-Hut forces on st's own bodies (this rank's) by locally
 * essential trees (dist/let_force.c): the same contract as
 * dist_ring_direct; the trees on the CPU (sim/let.h; work[i] body i's
 * interactions) or on this rank's GPU (gpu.h's gpu_let_*, kept in *state;
 * work[i] the rank's device time over the bodies it walked; one Plummer
 * length). */
int dist_let_force(void **state, const struct sim_state *st, const struct sim_params *p,
		   const double *each, const unsigned char *active, double *work, size_t *held);
int dist_let_force_gpu(void **state, const struct sim_state *st, const struct sim_params *p,
		       const double *each, const unsigned char *active, double *work, size_t *held);
/* The GPU row's state: freed; its device bytes now. */
void dist_let_release(void **state);
size_t dist_let_device_bytes(void *state);
/* render_adaptive_h_state (render/adaptive.h) of this rank's bodies st
 * (simulation.ranks: domains), the neighbours searched over every rank's
 * drawn bodies: each rank receives the others' drawn bodies within reach
 * of its own (a halo, dist/halo.c), so each h is one process's bit for bit,
 * render.h_cap's median included (over every rank). A collective call. 0,
 * or NB_ERUNTIME (logged). */
int dist_halo_h(const struct scene *sc, const struct sim_state *st, const struct sim_units *u,
		double *h);
/* Lengths kept between frames, for st's bodies now: h_then[k] was
 * computed for the body of id id_then[k] (n_then, this rank's bodies at
 * that time); out[i] gets the length of body st->id[i], asked of the rank
 * that held it then when this rank did not (the ids missing here are
 * allgathered, each rank answers those it holds: one all-to-all). A
 * collective call. 0, or NB_ERUNTIME (logged). */
int dist_halo_follow(const uint32_t *id_then, const double *h_then, size_t n_then,
		     const struct sim_state *st, double *out);
/* The runs over ranks: what they do not do yet, each refused with its
 * key (NB_EINPUT, logged through scene_fail_key): on GPU ranks
 * (simulation.backend cuda) the direct sum, the spline kernel and lengths
 * per component (CPU ranks take them), film mode (solver none), a snapshot entry beside made bodies (a scene of snapshots only is
 * read a share a rank: dist_snapin_build), snapshot output of bodies read
 * from snapshots (adaptive smoothing, dust and the diffuse layers are
 * written: dist_halo_h, the CPU renderer), the state CSVs (they
 * hold every body) and snapshots whose output.snapshots.files is not the
 * number of ranks (each rank writes its own part of the set). Over more
 * than one rank with simulation.ranks: replicate, individual time steps
 * (domains take them). For the run and --dry-run alike (app_preflight),
 * before any work. */
int dist_ranks_refuse(const struct scene *sc, int backend_cli);
/* 1 when GPU ranks can take sc's domains (none of the GPU rows above
 * asks): backend auto then takes the GPUs, else the CPU. */
int dist_domains_gpu(const struct scene *sc);
/* simulation.ranks: domains: 1 when each rank can make only its own bodies
 * (dist/create.c): no entry of sc is model: snapshot (a scene of snapshots
 * only is read a share a rank by dist/snapin.c). */
int dist_create_takes(const struct scene *sc);
/* This rank's bodies of such a scene into st: rank r of P makes bodies
 * [r n / P, (r + 1) n / P) of the n that sim_ic_build makes, the same bit
 * for bit at any P (sim_ic_build_range: ids, components' first and count
 * the whole scene's), never holding the others; *total gets n. The slices
 * dist_domains_create keeps of a whole state, so dist_domains_create_own
 * takes st from here. A refusal on any rank fails every rank with it
 * (dist_agree; rank 0's message). A collective call. 0, NB_EINPUT or
 * NB_ERUNTIME (st zeroed on error). */
int dist_create_build(const struct scene *sc, struct sim_state *st, size_t *total);

/* ---- the direct sum for some bodies (dist/direct.c) ----------------------- */
/* acc and potential of the bodies rows[0..nrows-1] from every body,
 * out[4 k + 0..3] = ax ay az phi of rows[k]. For each body i the terms are
 * summed exactly as sim_direct_accel on one thread sums them (the bodies
 * j < i as reactions in order of j, then those j > i in order, then the
 * two sums added), so the result is bit for bit sim_direct_accel's
 * whenever that runs on one thread (n < 1000, or OMP_NUM_THREADS=1).
 * Twice the flops of each-pair-once: every pair is met by both owners.
 * A stop request (sim_stop_requested) skips the rows left: out is then
 * incomplete, and the caller must check sim_stop_requested() itself. */
void dist_direct_rows(const double *pos, const double *mass, size_t n, double eps,
		      const uint32_t *rows, size_t nrows, double *out);
/* dist_direct_rows with the softening s (sim.h's struct sim_soft: kernel
 * and each body's length), in the same order, so bit for bit
 * sim_direct_accel_soft on one thread; plummer without each: exactly
 * dist_direct_rows. */
void dist_direct_rows_soft(const double *pos, const double *mass, size_t n,
			   const struct sim_soft *s, const uint32_t *rows, size_t nrows,
			   double *out);

/* ---- one simulation over the ranks (dist/sim.c) --------------------------- */
struct dist_sim;
struct dist_stats {
	long steps, rebalances;
	double t_force, t_exchange, t_rebalance; /* seconds on this rank, the steps' (the
						  * first evaluation's are apart below) */
	double t_first_force, t_first_exchange;  /* the first evaluation (with the
						  * potential, first allocations, NCCL's
						  * connections): not a step's cost */
	double work_imbalance;                   /* max/mean of the last step's work */
	double work_imbalance_max;               /* the worst over the run */
	uint64_t bytes_sent, bytes_received;     /* this rank, force exchanges */
	size_t owned;                            /* bodies this rank owns now */
	/* simulation.ranks: domains */
	double t_migrate;                        /* seconds: the migrations (t_rebalance:
						  * box, keys and cuts; t_exchange: the
						  * force's exchanges, waited for) */
	size_t migrated;                         /* bodies this rank sent away, all calls */
	size_t held_bytes;                       /* the state and dist/'s buffers now, and
						  * the force's exchange buffers at most */
};
/* 1 if this run's ranks take their GPUs (engine_create_ranks): the
 * backend (backend_cli, -1: the scene's) is cuda, or auto and every rank
 * has a usable GPU (agreed over the ranks: all or none). A collective
 * call. */
int dist_use_gpus(const struct scene *sc, int backend_cli);
/* For scene sc and its bodies st (already made the same on every rank):
 * the domains and buffers. gpu: for GPU ranks (dist_sim_gpu_ranks; the
 * renderer then draws every body on rank 0, which holds them all), else
 * for the CPU ranks' force function. Refuses (NB_EINPUT, logged) what is
 * not written over ranks: on CPU ranks dust and render.diffuse, and
 * individual time steps (dist_ranks_refuse said so first). */
int dist_sim_create(const struct scene *sc, const struct sim_state *st, int gpu,
		    struct dist_sim **out);
/* GPU ranks: the callbacks for engine_create_ranks (owned by ds). */
const struct gpu_ranks *dist_sim_gpu_ranks(struct dist_sim *ds);
/* 1 when ds runs on GPU ranks. */
int dist_sim_on_gpus(const struct dist_sim *ds);
/* The replicas: every rank's st (as engine_sync leaves it) hashed, the
 * hashes compared on rank 0. 0 when all agree (logged), NB_ERUNTIME when
 * one differs (logged, naming it). Every rank must call. */
int dist_sim_check_replicas(const struct dist_sim *ds, const struct sim_state *st);
/* The CPU ranks' force (struct engine_split's; ctx: the dist_sim;
 * dist_sim_split): the solver, softening and opening of P, the engine's. */
int dist_sim_force(void *ctx, const struct sim_params *p, const double *pos, const double *mass,
		   size_t n, double *acc, double *pot);
void dist_sim_stats(const struct dist_sim *ds, struct dist_stats *s);
/* Log the ranks' figures (rank 0 prints; every rank must call). */
void dist_sim_report(const struct dist_sim *ds);
/* CPU ranks: what engine_create_split takes (ctx ds, which must outlive
 * the engine): dist_sim_force, this rank's bodies (dist_sim_subset), the
 * frame sum over the ranks (dist_sum_floats) and the description. The
 * renderer reaches the ranks through the engine this way, with no
 * process-wide state. */
void dist_sim_split(struct dist_sim *ds, struct engine_split *out);
void dist_sim_free(struct dist_sim **ds);
/* simulation.ranks: domains (dist_ranks_refuse passed): ds for the state
 * st, which holds every body of the scene alike on every rank (--restart
 * only: other runs make or read only their own, dist_create_build and
 * dist_snapin_build, for dist_domains_create_own), of which this rank
 * keeps the consecutive indices [r n / P, (r + 1) n / P) and frees the
 * rest: from here st is this rank's own bodies, and the first force call
 * moves them to their owners. ds keeps st (it must outlive ds) and
 * changes its bodies at every force call (migration). dist_sim_split then
 * gives the domains' force, bodies (st itself), sum and diagnostics.
 * gpu (dist_use_gpus): the forces on each rank's GPU (bound at the first
 * force call); the state and the steps stay on the host. 0, NB_EINPUT or
 * NB_ERUNTIME (logged). */
int dist_domains_create(const struct scene *sc, struct sim_state *st, int gpu,
			struct dist_sim **out);
/* dist_domains_create for a state st that holds this rank's own bodies
 * already (dist_snapin_build, dist_create_build), of TOTAL bodies over
 * every rank: nothing is sliced off; the first force call moves them to
 * their owners. */
int dist_domains_create_own(const struct scene *sc, struct sim_state *st, size_t total, int gpu,
			    struct dist_sim **out);
/* 1 when every entry of sc is model: snapshot: each rank of
 * simulation.ranks: domains then reads its own share (dist/snapin.c). */
int dist_snapin_takes(const struct scene *sc);
/* This rank's bodies of such a scene into st: share rank of size of each
 * entry (sim_snap_load_share; of a multi-file set only the parts its
 * share reaches are read again), placed as sim_ic_build places them; ids
 * and components' first and count the whole scene's (body i of the state
 * one process would make has id i); *total the bodies of every rank.
 * Every part's header checked on every rank; a value refused on one rank,
 * or the whole entry's checks on the ranks' sums (rank 0 logs), fail every
 * rank with that error (dist_agree). A collective call. 0, NB_EINPUT or
 * NB_ERUNTIME (st zeroed on error). */
int dist_snapin_build(const struct scene *sc, struct sim_state *st, size_t *total);
/* 1 when ds holds domains (dist_domains_create). */
int dist_sim_domains(const struct dist_sim *ds);
/* dist_sim_report for domains: each rank's owned bodies, bytes a body,
 * force and migration time and volume (rank 0 prints; every rank must
 * call). */
void dist_domains_report(const struct dist_sim *ds);
/* The bodies over every rank (st->n of one rank is its own). */
size_t dist_sim_total(const struct dist_sim *ds);
/* This rank's bodies of st (st as the engine leaves it) as a state of
 * their own for the renderer: *sub points into buffers ds owns (valid until
 * the next call); h (n or NULL) gives *sub_h. 0 or NB_ERUNTIME. */
int dist_sim_subset(struct dist_sim *ds, const struct sim_state *st, const double *h,
		    struct sim_state *sub, const double **sub_h);

/* ---- batch shares (dist/shard.c; no MPI needed) --------------------------- */
/* "K/N", 0 <= K < N <= 100000. 0 or NB_EINPUT (logged). */
int dist_shard_parse(const char *s, int *k, int *n);
/* From SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT (and _MIN, default 0):
 * 1 and the share when both are set, 0 when not, NB_EINPUT when bad. */
int dist_shard_from_env(int *k, int *n);

#endif
