/* Structures shared by the Vulkan context's files. */
#ifndef GZ_VK_INTERNAL_H
#define GZ_VK_INTERNAL_H

#include <pthread.h>

#include "gz_client.h"
#include "gz_handle_map.h"
#include "gz_vk.h"

#define GZ_VK_MAX_QUEUES 64
/* Result entries of a queue come in pages: one timestamp query pool and one
 * host-visible results buffer each. A queue starts with one page and adds
 * more while its submissions are in flight faster than they complete, up to
 * GZ_VK_MAX_PAGES; a page is reused once all it holds has been read back.
 * Pages have GZ_VK_PAGE_ENTRIES entries, or a larger power of two (up to
 * GZ_VK_PAGE_MAX) when one execution's label values need more. */
#define GZ_VK_PAGE_ENTRIES 1024u
#define GZ_VK_PAGE_MAX 8192u
#define GZ_VK_MAX_PAGES 64u
/* The timestamp-only command buffers of a page are recorded on first use,
 * a block at a time. */
#define GZ_VK_TS_BLOCK 32u
/* A batch's bracket entries may be split over this many runs (pages). */
#define GZ_VK_BATCH_RUNS 8u
/* Label timestamps live in device-wide query pools handed out in chunks;
 * a pool is added when every chunk is taken (command buffers recorded and
 * kept, or thousands in one batch), up to GZ_VK_LABEL_POOLS. A label query
 * is named by its global index: pool * GZ_VK_LABEL_POOL_QUERIES + query. */
#define GZ_VK_LABEL_CHUNK 16u
#define GZ_VK_LABEL_POOL_QUERIES 65536u
#define GZ_VK_LABEL_POOLS 8u
#define GZ_VK_NO_QUERY UINT32_MAX
#define GZ_VK_LABEL_DEPTH 64u
/* One execution's label timestamps land in one page: a recording with more
 * than this many (its secondaries' included) has its labels untimed. */
#define GZ_VK_MAX_EXEC_LABELS (GZ_VK_PAGE_MAX - 2)

typedef enum label_op_kind { LABEL_BEGIN, LABEL_END } label_op_kind;

/* A result as copied by the GPU: the timestamp, then its availability. */
#define GZ_VK_RESULT_SIZE (2 * sizeof(uint64_t))

/* Host-visible, mapped results (vk_hostbuf.c). */
typedef struct gz_vk_hostbuf {
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint64_t *results; /* entries * 2 words: value, availability */
    uint32_t entries;
} gz_vk_hostbuf;

/* Why a recording's labels are not timed (none: they are). Counted and
 * said once per reason in the summary. */
typedef enum gz_vk_untimed {
    GZ_VK_TIMED = 0,
    GZ_VK_UNTIMED_LEVEL,     /* GPUZONES_LEVEL below labels: not a loss */
    GZ_VK_UNTIMED_FAMILY,    /* queue family without resets/copies (transfer-only) */
    GZ_VK_UNTIMED_SIM_SECONDARY, /* a SIMULTANEOUS_USE secondary may run twice at once */
    GZ_VK_UNTIMED_POOL,      /* label query pool missing or exhausted */
    GZ_VK_UNTIMED_TOO_MANY,  /* more than GZ_VK_MAX_EXEC_LABELS in one execution */
} gz_vk_untimed;

typedef struct gz_vk_label_op {
    uint16_t kind;    /* label_op_kind */
    uint16_t untimed; /* gz_vk_untimed: why this op has no timestamp */
    uint32_t name;    /* interned, for LABEL_BEGIN */
    /* Index of its timestamp among the execution's label values, or
     * GZ_VK_NO_QUERY. While recording, ops taken from a secondary hold
     * the secondary's own index, and `block` says which secondary. */
    uint32_t value;
    uint32_t block; /* 0: own query; b > 0: the (b-1)-th executed secondary */
} gz_vk_label_op;

/* A range of label queries written by one execution, in value order. */
typedef struct gz_vk_label_range {
    uint32_t first_query; /* in the device's label pool */
    uint32_t count;
} gz_vk_label_range;

typedef struct gz_vk_recording gz_vk_recording;

/* What one recording of a command buffer did with labels. Immutable once
 * the recording ends (apart from the atomic counters); shared by the
 * command buffer and every submission of it that has not been read back
 * yet (reference counted). */
struct gz_vk_recording {
    uint32_t refs;      /* atomic */
    uint32_t family;
    bool secondary, simultaneous;
    gz_vk_untimed untimed; /* why its own labels are not timed (GZ_VK_TIMED: they are) */
    gz_vk_label_op *ops;
    uint32_t nops, ops_cap;
    uint32_t *chunks; /* label pool chunks holding this recording's own queries */
    uint32_t nchunks, chunks_cap;
    uint32_t own_queries; /* queries written by this recording itself */
    gz_vk_recording **secs; /* executed secondaries (referenced), in order */
    uint32_t nsecs, secs_cap;
    /* Set at vkEndCommandBuffer: what an execution writes and must reset
     * and copy, own chunks first, then each timed secondary's. */
    gz_vk_label_range *ranges;
    uint32_t nranges;
    uint32_t nvalues; /* label values of one execution */
    bool ended;
    /* Executions submitted and not yet read back, and on which queue the
     * newest went: an execution on a second queue while one is unread may
     * overwrite its timestamps. Every execution whose serial is at most
     * conflict_upto is counted as lost (under the device lock). */
    uint32_t pending;
    const void *pending_queue;
    uint64_t last_batch; /* the queue's batch number of the newest execution */
    struct gz_vk_entry *last_entry; /* and its entry */
    /* The result entry that its batch writes last (NULL: none to look at):
     * once written, that execution and every earlier one on its queue have
     * run, and cannot overwrite anyone's values any more. */
    const gz_vk_hostbuf *last_done_buf;
    uint32_t last_done_entry;
    uint64_t next_serial, conflict_upto;
    uint32_t default_name; /* "cmdbuf: <first label>", interned at its end; 0: none */
};

struct gz_vk_cmdbuf {
    gz_handle_node node; /* in vk_cmdbuf.c's map, by handle */
    gz_vk_cmdpool *pool;
    uint32_t pool_index; /* in pool->cbs */
    gz_vk_device *dev;
    VkCommandBuffer handle;
    uint32_t family;
    bool secondary;
    uint32_t name; /* interned debug name, 0 = none */
    gz_vk_recording *rec;
    bool recording; /* atomic: between vkBegin- and vkEndCommandBuffer */
};

/* One result entry of a queue, in a page: what it holds for the batch that
 * owns it. Written by the submitting thread before the batch's record is
 * published, read by the worker after (the queue's lock orders both). */
struct gz_vk_entry {
    uint32_t name;        /* bracket: zone name of the command buffer after it */
    gz_vk_recording *rec; /* bracket: that command buffer's recording (referenced) */
    uint64_t serial;      /* the execution's serial in rec */
    uint16_t label_page;  /* where the execution's label values were copied */
    uint16_t labels_timed; /* the execution's label values are its own */
    uint32_t label_first;
};
typedef struct gz_vk_entry gz_vk_entry;

typedef struct gz_vk_page {
    uint32_t size; /* entries */
    VkQueryPool pool;
    gz_vk_hostbuf results; /* entry i's copied result (queues that can copy) */
    VkCommandBuffer *ts; /* prerecorded: writes entry i's timestamp */
    /* Recorded at submit time when entry i's bracket also resets label
     * queries or ends a batch with its copies; allocated on first use and
     * recorded again only once the batch that used it was read back. */
    VkCommandBuffer *dyn;
    uint64_t *dyn_digest; /* what dyn[i] holds (dyn_digest() in vk_queue.c), 0: nothing */
    bool *block_ready;
    gz_vk_entry *entries;
    uint32_t next;        /* bump allocator: entries below are taken or skipped */
    uint32_t outstanding; /* taken and not yet released */
} gz_vk_page;

typedef struct gz_vk_run {
    uint16_t page;
    uint16_t first;
    uint16_t count;
} gz_vk_run;

/* REC_FRAME: a vkQueuePresentKHR; the frame ends with the batches before it. */
typedef enum record_kind { REC_BATCH, REC_QLABEL_BEGIN, REC_QLABEL_END, REC_FRAME } record_kind;

/* One entry of a queue's submission log, read back in order. */
typedef struct gz_vk_record {
    uint8_t kind;      /* record_kind */
    bool submitted;    /* the call down returned success (pending until then) */
    uint8_t nruns;
    uint32_t name;
    uint32_t nbrackets;      /* timestamps: cmdbufs + 1, or 2 at the submit level */
    uint32_t batch, cmdbufs; /* index in its call, command buffers */
    gz_vk_run runs[GZ_VK_BATCH_RUNS]; /* the bracket entries, in order */
    gz_vk_run label_runs[GZ_VK_BATCH_RUNS]; /* entries taken for label values */
    uint8_t nlabel_runs;
    uint64_t flow;
    uint64_t submit_ns;
    VkFence fence;    /* the call's */
    uint64_t done_ns; /* when a wait of the app's saw it complete (0: none) */
    uint64_t wait_flow; /* flow to that wait, from the batch's end (0: none) */
    uint64_t call;    /* the submit call that put it on the log (0: a queue label) */
} gz_vk_record;

typedef struct label_frame {
    uint32_t name;
    uint64_t begin_ticks;
    bool waiting;    /* a queue label whose begin is the next batch's start */
    bool untimed;    /* no timestamp by design: no zone, not a drop */
    bool lost;       /* its timestamp was lost: counted as dropped at its end */
} label_frame;

struct gz_vk_submit {
    gz_vk_queue *q;
    uint32_t name;
    VkFence fence;
    uint64_t submit_ns;
    uint64_t call;     /* this call's number on the queue */
    uint32_t nrecords; /* records this call added to the log */
};

/* Sync points for devices without calibrated timestamps (vk_sync.c). The
 * host half of one runs on the spinner thread; the fields it shares are
 * atomic. */
typedef struct gz_vk_sync {
    bool ready;
    bool failed;        /* atomic */
    VkQueryPool pool;
    VkEvent go;         /* set by the host: the GPU waits for it */
    VkCommandBuffer cb; /* arrival word, wait for go, timestamp, copy */
    gz_vk_hostbuf result; /* entry 0: the timestamp; entry 1: the arrival */
    VkFence fence;      /* signalled once cb has run */
    bool used;          /* fence submitted at least once */
    uint32_t go_set;    /* atomic: go was set (by whoever came first) */
    bool cancelled;     /* atomic: cb was not submitted after all */
    uint64_t submitted_ns; /* atomic: when cb was submitted (0: not yet) */
    bool pending;       /* atomic: submitted, not read back yet */
    uint32_t spinning;  /* atomic: the spinner still watches it */
    uint32_t watchers;  /* atomic: app threads watching it in a wait */
    VkFence app_fence;  /* the fence of the app's submit that carried it */
    uint64_t before, seen; /* the bracket (0: none), published by spinning = 0 */
    uint64_t last_ns;   /* app's thread: when the last one started */
} gz_vk_sync;

/* What a queue's family can run, for the commands the layer adds. */
typedef enum gz_vk_queue_mode {
    GZ_VK_QUEUE_UNTIMED = 0, /* no timestamps, or none we may reset */
    GZ_VK_QUEUE_COPY,        /* graphics/compute: resets, copies and events in the queue */
    GZ_VK_QUEUE_HOST,        /* transfer-only: timestamps only; host reset and host reads */
} gz_vk_queue_mode;

struct gz_vk_queue {
    gz_vk_device *dev;
    VkQueue handle;
    uint32_t family, index;
    uint16_t track, label_track;
    char name[256]; /* the track's name: "VkQueue f.i device" or the app's name */
    uint32_t valid_bits;
    gz_vk_queue_mode mode;
    pthread_mutex_t lock; /* pages, log, dynamic ring: the submitting thread vs the worker */

    bool ring_ready, ring_failed;
    VkCommandPool cmd_pool; /* ours; recorded only by the submitting thread */
    gz_vk_page *pages[GZ_VK_MAX_PAGES];
    uint32_t npages, cur_page;

    gz_vk_record *log; /* ring of records */
    uint32_t log_cap, log_head, log_count;

    /* read-back state (worker only): the queue's label stack in submission order */
    label_frame labels[GZ_VK_LABEL_DEPTH];
    uint32_t label_depth, label_overflow;
    uint64_t last_ticks;
    bool have_last;
    /* Frames (presents on this queue): the first batch after a present
     * opens one at its begin, the next present ends it at the last batch's
     * end. Frame zones go on a track of their own, created at the first
     * present (one zone after another, never nested in the queue's). */
    uint16_t frame_track;
    bool frame_open;
    uint64_t frame_begin_ticks;
    uint64_t *values; /* scratch for one batch's timestamps */
    uint32_t values_cap;

    gz_vk_submit submit; /* the call in progress */
    uint64_t batch_seq;  /* batches taken on this queue (submitting thread) */
    uint64_t call_seq;   /* submit calls on this queue */
    gz_vk_sync sync;

    gz_item *scratch; /* items of one batch */
    uint32_t scratch_cap;
};

struct gz_vk_device {
    gz_vk_device_info info;
    uint32_t *valid_bits;  /* copy of info.family_valid_bits */
    uint32_t *family_flags; /* copy of info.family_flags */
    int collector;
    bool lost; /* device lost or a query read failed: timing stops */
    gz_level level;

    pthread_mutex_t lock; /* queues list, label pool chunks, recordings' conflicts */
    gz_vk_queue *queues[GZ_VK_MAX_QUEUES];
    uint32_t nqueues;

    bool labels_ready, labels_failed;
    VkQueryPool label_pools[GZ_VK_LABEL_POOLS]; /* written under lock before their chunks */
    uint32_t nlabel_pools;
    uint32_t *free_chunks; /* chunk ids (global query / GZ_VK_LABEL_CHUNK) */
    uint32_t nfree_chunks;

    uint64_t untimed_labels[GZ_VK_UNTIMED_TOO_MANY + 1]; /* atomic: label zones not timed, by reason */
    uint64_t last_calibration_ns; /* the worker's periodic samples */
    uint64_t families_warned; /* families told to have no timestamps (bit = family) */
};

/* Device lost or results unreadable: timing stops. Set by whichever thread
 * saw it (submit or readback), read by all. */
static inline bool gz_vk_device_lost(const gz_vk_device *dev)
{
    return __atomic_load_n(&dev->lost, __ATOMIC_RELAXED);
}
static inline void gz_vk_device_set_lost(gz_vk_device *dev)
{
    __atomic_store_n(&dev->lost, true, __ATOMIC_RELAXED);
}

/* The mode of a queue family of dev (flags and timestamp bits). */
gz_vk_queue_mode gz_vk_family_mode(const gz_vk_device *dev, uint32_t family);

/* vk_hostbuf.c */
bool gz_vk_hostbuf_create(gz_vk_device *dev, uint32_t entries, gz_vk_hostbuf *out);
void gz_vk_hostbuf_destroy(gz_vk_device *dev, gz_vk_hostbuf *b);
/* The same for a context that is not a gz_vk_device (vk_explicit.c). */
bool gz_vk_hostbuf_create_on(const gz_vk_fns *f, VkDevice d,
                             const VkPhysicalDeviceMemoryProperties *mp, uint32_t entries,
                             gz_vk_hostbuf *out);
void gz_vk_hostbuf_destroy_on(const gz_vk_fns *f, VkDevice d, gz_vk_hostbuf *b);
/* Marks entries not written before the submission that will fill them. */
void gz_vk_hostbuf_clear(gz_vk_hostbuf *b, uint32_t first, uint32_t count);
/* Whether all count entries were written by the GPU since their clear. */
bool gz_vk_hostbuf_ready(const gz_vk_hostbuf *b, uint32_t first, uint32_t count);
/* Values of count entries, or false when any is not written yet. */
bool gz_vk_hostbuf_read(const gz_vk_hostbuf *b, uint32_t first, uint32_t count, uint64_t *values);
/* Records the copy of count results into the buffer (waiting for them). */
void gz_vk_cmd_copy_results(const gz_vk_fns *f, VkCommandBuffer cb, VkQueryPool pool,
                            uint32_t first_query, uint32_t count, const gz_vk_hostbuf *b,
                            uint32_t first_entry);
/* Makes the copies recorded before it visible to the host. */
void gz_vk_cmd_results_to_host(const gz_vk_fns *f, VkCommandBuffer cb);
/* Values of count timestamp queries read on the host, without waiting:
 * false when any is not available yet (or the read failed: *lost). */
bool gz_vk_query_read(const gz_vk_fns *f, VkDevice d, VkQueryPool pool, uint32_t first,
                      uint32_t count, uint64_t *values, bool *lost);

/* vk_device.c */
static inline VkQueryPool gz_vk_label_pool(const gz_vk_device *dev, uint32_t query)
{
    return dev->label_pools[query / GZ_VK_LABEL_POOL_QUERIES];
}
static inline uint32_t gz_vk_label_query(uint32_t query)
{
    return query % GZ_VK_LABEL_POOL_QUERIES;
}
bool gz_vk_label_chunk_alloc(gz_vk_device *dev, uint32_t *chunk);
void gz_vk_label_chunk_free(gz_vk_device *dev, uint32_t chunk);
/* Calibrated pairs from vkGetCalibratedTimestampsEXT, one reader for this
 * device context and the explicit one (vk_explicit.c). Whether a periodic
 * sample is due: force, or a period since *last_ns (now noted there). */
bool gz_vk_calibration_due(uint64_t *last_ns, bool force);
/* The tightest of a few (device ticks, CLOCK_MONOTONIC ns) pairs against
 * host_domain (from gz_vk_pick_host_domain); false when no read succeeded.
 * *lost (may be NULL): whether a read returned VK_ERROR_DEVICE_LOST. */
bool gz_vk_sample_calibrated(PFN_vkGetCalibratedTimestampsEXT get, VkDevice device,
                             VkTimeDomainEXT host_domain, gz_calib_pair *best, bool *lost);
/* The worker's periodic samples, sent to every queue's track. */
void gz_vk_calibrate(gz_vk_device *dev, bool force);
/* One sample for one new track, from the thread creating it: it reaches
 * the queue before any zone of the track can. */
void gz_vk_calibrate_track(gz_vk_device *dev, uint16_t track);
bool gz_vk_can_calibrate(const gz_vk_device *dev);
/* Our own command buffers are dispatchable objects the loader did not make. */
void gz_vk_own_cmdbufs(gz_vk_device *dev, VkCommandBuffer *cbs, uint32_t n);

/* vk_cmdbuf.c */
/* Whether the layer saw cb begin and not end: 1 recording, 0 not, -1 the
 * layer does not track it (or is not loaded). */
int gz_vk_cmdbuf_recording(VkCommandBuffer cb);
void gz_vk_recording_ref(gz_vk_recording *rec);
void gz_vk_recording_unref(gz_vk_device *dev, gz_vk_recording *rec);
/* Records the resets of an execution's label queries. */
void gz_vk_recording_cmd_reset(gz_vk_device *dev, const gz_vk_recording *rec, VkCommandBuffer cb);
/* Records the copies of an execution's label values to entries of page. */
void gz_vk_recording_cmd_copy(gz_vk_device *dev, const gz_vk_recording *rec, VkCommandBuffer cb,
                              const gz_vk_hostbuf *results, uint32_t first_entry);

/* vk_pages.c: under the queue's lock unless said otherwise */
bool gz_vk_pages_init(gz_vk_queue *q);
void gz_vk_pages_destroy(gz_vk_queue *q);
/* A run of up to want entries (at least min, contiguous in one page); a
 * new page is added when none has room. False when every page is full. */
bool gz_vk_pages_take(gz_vk_queue *q, uint32_t want, uint32_t min, gz_vk_run *out);
/* Gives entries back (their batch was read back or never submitted). */
void gz_vk_pages_give(gz_vk_queue *q, const gz_vk_run *run);
/* Prepares entries for their batch: host reset of their queries, results
 * marked unwritten, timestamp-only command buffers recorded. Called by the
 * submitting thread without the lock (it owns the entries). */
bool gz_vk_pages_prepare(gz_vk_queue *q, const gz_vk_run *run);
static inline gz_vk_entry *gz_vk_entry_at(gz_vk_queue *q, uint32_t page, uint32_t i)
{
    return &q->pages[page]->entries[i];
}

/* vk_sync.c */
/* Starts the sync-point thread (for a device without calibrated timestamps). */
void gz_vk_sync_prepare(void);
/* Submits a sync point when one is due and the queue is idle (inside the
 * app's vkQueueSubmit, whose fence is app_fence: the queue is ours to use;
 * no lock held). */
void gz_vk_sync_maybe(gz_vk_queue *q, bool idle, VkFence app_fence);
/* The app is about to wait: for work submitted after our sync point
 * (covers: its thread then watches the sync point, which cannot delay the
 * wait), or for something else (the sync point's event is set at once). */
void gz_vk_sync_wait(gz_vk_queue *q, bool covers);
/* Sets the event a sync point's GPU side waits for, if the spinner has not
 * within GO_LATE (or at once: now, before the app waits for its work). */
void gz_vk_sync_release(gz_vk_queue *q, bool now);
/* Reads a finished sync point back (worker; final: the last time). */
void gz_vk_sync_collect(gz_vk_queue *q, bool final);
void gz_vk_sync_destroy(gz_vk_queue *q);

/* vk_registry.c: the queues the layer times, by handle, process-wide (an
 * explicit context on the same VkQueue joins the queue's track). */
typedef struct gz_vk_queue_share {
    uint16_t track;
    uint32_t valid_bits;
    bool host_query_reset;
} gz_vk_queue_share;
void gz_vk_registry_add(gz_vk_queue *q);
void gz_vk_registry_remove(gz_vk_queue *q);
bool gz_vk_queue_find(VkQueue handle, gz_vk_queue_share *out);

/* vk_queue.c */
/* The app saw work of q complete at done_ns: all of it (fences NULL), or
 * the submits that carried one of fences. */
void gz_vk_queue_waited(gz_vk_queue *q, const VkFence *fences, uint32_t nfences, bool all,
                        uint64_t done_ns);
gz_vk_queue *gz_vk_queue_new(gz_vk_device *dev, VkQueue handle, uint32_t family, uint32_t index);
void gz_vk_queue_collect(gz_vk_queue *q, bool final);
void gz_vk_queue_destroy(gz_vk_queue *q);

#endif
