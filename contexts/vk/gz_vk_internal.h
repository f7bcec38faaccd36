/* Structures shared by the Vulkan context's files.
 *
 * How a submission is timed (README, "How it works"):
 * - A command buffer's own timestamps go inside its recording: the
 *   recording takes timestamp queries from the device's chunks
 *   (vk_queries.c) and writes them at its first action command (its
 *   begin), around its labels, and at vkEndCommandBuffer (its end). Nothing
 *   is added between the app's command buffers for them.
 * - Where a recording has no begin or end of its own (the submit level,
 *   SIMULTANEOUS_USE command buffers, untracked ones), small command
 *   buffers of the queue's own, recorded once per slot (vk_brackets.c),
 *   write a timestamp between the app's.
 * - Results are read by the worker once the layer's timeline semaphore,
 *   signalled by the app's own submission, says the work completed: from the
 *   queries on the host, or, on drivers whose host read waits for the whole
 *   device (lavapipe), from a host-visible buffer the recording copied them
 *   into at its end (vk_readback.c).
 * - A recording's queries are reset on the host before each use but the
 *   first (they come reset), once the previous use completed; devices
 *   without host query reset get a command buffer of ours before each use
 *   that resets them on the GPU. */
#ifndef GZ_VK_INTERNAL_H
#define GZ_VK_INTERNAL_H

#include <pthread.h>

#include "gz_client.h"
#include "gz_handle_map.h"
#include "gz_vk.h"

#define GZ_VK_MAX_QUEUES 64
/* Timestamp queries come in chunks of GZ_VK_CHUNK from device-wide pools of
 * GZ_VK_POOL_QUERIES, added as needed up to GZ_VK_MAX_POOLS. A query is
 * named by its global index: pool * GZ_VK_POOL_QUERIES + query. */
#define GZ_VK_CHUNK 16u
#define GZ_VK_POOL_QUERIES 8192u
#define GZ_VK_MAX_POOLS 64u
#define GZ_VK_NO_QUERY UINT32_MAX
#define GZ_VK_LABEL_DEPTH 64u
/* Values one recording may hold (its labels and its secondaries'): beyond
 * it, its labels are untimed. */
#define GZ_VK_MAX_VALUES 65536u
/* Bracket slots of a queue (one timestamp query and one command buffer
 * each), recorded a block at a time, up to GZ_VK_MAX_SLOTS in flight. */
#define GZ_VK_SLOT_BLOCK 32u
#define GZ_VK_MAX_SLOTS 16384u
#define GZ_VK_NO_SLOT UINT32_MAX

/* A result as copied by the GPU: the timestamp, then its availability. */
#define GZ_VK_RESULT_SIZE (2 * sizeof(uint64_t))

/* Host-visible, mapped results (vk_hostbuf.c). */
typedef struct gz_vk_hostbuf {
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint64_t *results; /* entries * 2 words: value, availability */
    uint32_t entries;
} gz_vk_hostbuf;

/* How a queue's results come back (GPUZONES_VK_READBACK). */
typedef enum gz_vk_readback {
    GZ_VK_READ_HOST = 0, /* vkGetQueryPoolResults on the worker, no wait */
    GZ_VK_READ_COPY,     /* copied by the GPU into host memory at each recording's end */
} gz_vk_readback;

/* Why a zone of a recording is not timed (none: it is). Counted and said
 * once per reason in the summary. */
typedef enum gz_vk_untimed {
    GZ_VK_TIMED = 0,
    GZ_VK_UNTIMED_LEVEL,        /* GPUZONES_LEVEL below it: not a loss */
    GZ_VK_UNTIMED_FAMILY,       /* queue family without usable timestamps */
    GZ_VK_UNTIMED_SIMULTANEOUS, /* a SIMULTANEOUS_USE secondary may run twice at once */
    GZ_VK_UNTIMED_POOL,         /* timestamp queries exhausted */
    GZ_VK_UNTIMED_TOO_MANY,     /* more than GZ_VK_MAX_VALUES in one recording */
    GZ_VK_UNTIMED_SUSPENDED,    /* between a suspended render pass and its resumption */
    GZ_VK_UNTIMED_MULTIVIEW,    /* a multiview subpass with more views than a chunk holds */
    GZ_VK_UNTIMED_PROTECTED,    /* a protected command pool: no queries allowed */
    GZ_VK_UNTIMED_REUSED,       /* the recording ran again before this run was read */
    GZ_VK_UNTIMED_DEVICE_GROUP, /* a batch with device masks (VkDeviceGroupSubmitInfo) */
    GZ_VK_UNTIMED_OVERLAP,      /* a SIMULTANEOUS_USE primary ran again while still running */
    GZ_VK_UNTIMED_COUNT
} gz_vk_untimed;

/* What a recording does that becomes zones, in recording order: label
 * regions, render pass instances and commands (passes, commands levels). A
 * command's end is the next timestamp point after it (OP_CMD_END). */
typedef enum op_kind {
    OP_LABEL_BEGIN,
    OP_LABEL_END,
    OP_PASS_BEGIN, /* name: its description (a desc index) */
    OP_PASS_END,
    OP_CMD_BEGIN,  /* name: its description */
    OP_CMD_END,
} op_kind;
/* In the bits above the kind: a render pass instance resumed from the
 * command buffer before (its begin is not a begin), or suspended to the
 * next (its end is not an end). */
#define OP_F_RESUMES 0x100u
#define OP_F_SUSPENDS 0x200u
#define OP_KIND(op) ((op)->kind & 0xffu)
#define GZ_VK_NO_DESC UINT32_MAX

typedef struct gz_vk_op {
    uint16_t kind;    /* op_kind, and OP_F_* */
    uint16_t untimed; /* gz_vk_untimed: why this op has no timestamp */
    uint32_t name;    /* interned, for label begins; a desc index for passes and commands */
    /* Index of its timestamp among the execution's values, or
     * GZ_VK_NO_QUERY. While recording, ops taken from a secondary hold the
     * secondary's own index, and `block` says which secondary. */
    uint32_t value;
    uint32_t block; /* 0: own; b > 0: the (b-1)-th executed secondary */
} gz_vk_op;

/* A run of written queries of a set, in value order. */
typedef struct gz_vk_range {
    uint32_t first; /* global query index */
    uint32_t count;
} gz_vk_range;

/* The timestamp queries one recording writes: whole chunks, of which the
 * ranges are written by every execution (vk_queries.c). */
typedef struct gz_vk_qset {
    uint32_t *chunks;
    uint32_t nchunks, chunks_cap;
    uint32_t next; /* queries taken in the last chunk */
    gz_vk_range *ranges;
    uint32_t nranges, ranges_cap;
    uint32_t nvalues; /* queries written, the ranges' total */
} gz_vk_qset;

typedef struct gz_vk_recording gz_vk_recording;

/* What became of one use (execution) of a recording's queries. */
enum { USE_PENDING = 0, USE_SNAPSHOT, USE_LOST };
typedef struct gz_vk_use {
    gz_vk_recording *rec;
    uint32_t refs;   /* atomic: the batch that runs it, and rec while it is rec's newest */
    uint32_t index;  /* 0 for the first use of rec's queries */
    uint32_t state;  /* atomic: USE_* */
    bool copied;     /* the GPU copies its values into the pools' host buffers */
    bool clean;      /* it began on reset queries (and copies marked unwritten) */
    bool gpu_reset;  /* its queries are reset by a command buffer of ours just before it */
    uint8_t lost_why; /* USE_LOST: the gz_vk_untimed reason */
    struct gz_vk_queue *queue; /* the queue of the batch that runs it */
    uint64_t call;   /* the submit call that used it (per queue) */
    uint64_t value;  /* its batch's timeline value */
    uint64_t *snap;  /* USE_SNAPSHOT: its values, read before the next use */
} gz_vk_use;

/* One recording of a command buffer: its queries, what its labels do, and
 * its uses. Immutable once the recording ends, but for the use bookkeeping;
 * shared by the command buffer and every submission of it not yet read back
 * (reference counted). */
struct gz_vk_recording {
    uint32_t refs; /* atomic */
    gz_vk_device *dev;
    uint32_t family;
    bool secondary, simultaneous;
    bool one_time;         /* ONE_TIME_SUBMIT: one use only */
    bool timed;            /* writes timestamps of its own (a begin, an end, labels) */
    gz_vk_untimed untimed; /* why its labels are not timed (GZ_VK_TIMED: they are) */
    gz_vk_qset set;
    uint32_t begin_value, end_value; /* its command buffer zone's values, or GZ_VK_NO_QUERY */
    gz_vk_untimed cmdbuf_untimed;    /* why it has none */
    /* Recording state (the app's recording thread). */
    bool acted;       /* an action command was recorded: its begin is placed */
    bool resumes;     /* its first action resumed a suspended render pass */
    bool suspended;   /* a render pass instance is suspended now */
    bool suspending;  /* the dynamic render pass instance open now suspends at its end */
    bool rendering;   /* inside vkCmdBeginRendering..End */
    VkRenderPass pass; /* the classic render pass open now, and its subpass */
    uint32_t subpass;
    bool in_pass;     /* inside a render pass (either kind) */
    bool copied;      /* copy readback: its end copies its values and its secondaries' */
    uint32_t view_mask; /* the current subpass's views (multiview), 0 without */
    uint32_t first_pending; /* ops from here wait for the first action's timestamp */
    gz_vk_op *ops;
    uint32_t nops, ops_cap;
    gz_vk_desc *descs; /* what its passes and commands do (passes, commands levels) */
    uint32_t ndescs, descs_cap;
    gz_vk_untimed passes_untimed; /* why its passes and commands are not timed */
    bool point_valid;       /* nothing recorded since the last timestamp ... */
    uint32_t point_value;   /* ... whose value this is: the next point shares it */
    uint8_t point_label;    /* the label op kind that used the point last (0xff: none) */
    bool open_cmd;          /* a command's zone is open, until the next point */
    VkPipeline bound[2];    /* the graphics and compute pipelines bound now */
    uint32_t bound_name[2], bound_number[2];
    gz_vk_recording **secs; /* executed secondaries that write values (referenced), in order */
    uint32_t *sec_offset;   /* each one's first value in an execution's layout */
    uint32_t nsecs, secs_cap;
    uint32_t nvalues; /* values of one execution: own, then each secondary's */
    bool ended;
    uint32_t default_name; /* "cmdbuf: <first label>", interned at its end; 0: none */
    /* Uses: the queries are reused by every execution (vk_uses.c). */
    uint32_t uses;   /* atomic: uses begun */
    gz_vk_use *last; /* the newest use (under the device's use lock) */
    gz_vk_use first; /* the first use lives here */
    /* The command buffers of ours that reset this recording's queries (and
     * its secondaries') just before an execution: before each one on
     * devices without host query reset, and before a SIMULTANEOUS_USE
     * primary's execution that its previous one may still be running
     * under. One per queue family it ran on (two at most), recorded at the
     * first such submission there, from queue reset_q[i]'s pool. */
    VkCommandBuffer reset_cb[2];
    struct gz_vk_queue *reset_q[2];
    gz_vk_recording *next_spare; /* in the device's spares, once gone */
};

struct gz_vk_cmdbuf {
    gz_handle_node node; /* in vk_cmdbuf.c's map, by handle */
    gz_vk_cmdpool *pool;
    uint32_t pool_index; /* in pool->cbs */
    gz_vk_device *dev;
    VkCommandBuffer handle;
    uint32_t family;
    bool secondary;
    bool protected_pool;
    void *user;    /* the pool's */
    uint32_t name; /* interned debug name, 0 = none */
    uint32_t name_cache[2]; /* its last first label and the zone name made of it */
    gz_vk_recording *rec;
    bool recording; /* atomic: between vkBegin- and vkEndCommandBuffer */
};

/* One command buffer of a batch, as the worker reads it back. */
enum { EXEC_PRIMARY = 0, EXEC_SECONDARY };
typedef struct gz_vk_exec {
    uint8_t kind;       /* EXEC_* */
    uint16_t untimed;   /* primaries: why its labels have no values (GZ_VK_TIMED: none) */
    uint32_t name;      /* primaries: the command buffer zone's name */
    uint32_t slot;      /* primaries: bracket slot just before it, or GZ_VK_NO_SLOT */
    gz_vk_recording *rec; /* referenced; NULL: untracked */
    gz_vk_use *use;     /* its values; NULL: none */
} gz_vk_exec;

/* REC_FRAME: a vkQueuePresentKHR; the frame ends with the batches before it. */
typedef enum record_kind { REC_BATCH, REC_QLABEL_BEGIN, REC_QLABEL_END, REC_FRAME } record_kind;

/* One entry of a queue's submission log, read back in order. */
typedef struct gz_vk_record {
    uint8_t kind;   /* record_kind */
    bool submitted; /* the call down returned success (pending until then) */
    uint32_t name;
    uint32_t batch, cmdbufs; /* index in its call, command buffers */
    uint32_t first_exec, nexecs; /* in the queue's exec ring */
    uint32_t end_slot;           /* bracket slot after the last command buffer */
    uint64_t flow;
    uint64_t submit_ns;
    uint64_t value;   /* the timeline value that says it completed (0: none) */
    VkFence fence;    /* the call's */
    uint64_t done_ns; /* when a wait of the app's saw it complete (0: none) */
    uint64_t wait_flow; /* flow from the batch's end to that wait (0: none) */
    uint64_t call;    /* the submit call that put it on the log (0: a queue label) */
} gz_vk_record;

/* Names made for descriptions lately (vk_describe.c), per queue. */
#define GZ_VK_DESCRIBED 256u
typedef struct gz_vk_described {
    gz_vk_desc desc;
    uint32_t name, detail;
} gz_vk_described;

/* A render pass instance or command zone begun and not yet ended, while a
 * queue's batches are read back. */
typedef struct open_zone {
    bool open;
    uint64_t begin_ticks;
    uint32_t name, detail;
} open_zone;

typedef struct label_frame {
    uint32_t name;
    uint64_t begin_ticks;
    bool waiting; /* a queue label whose begin is the next batch's start */
    bool untimed; /* no timestamp by design: no zone, not a drop */
    bool lost;    /* its timestamp was lost: counted as dropped at its end */
} label_frame;

struct gz_vk_submit {
    gz_vk_queue *q;
    uint32_t name;
    VkFence fence;
    uint64_t submit_ns;
    uint64_t call;     /* this call's number on the queue */
    uint64_t value;    /* the timeline value this call signals (0: none) */
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

/* A queue's bracket slots (vk_brackets.c): slot i writes query
 * queries[i] with command buffer cbs[i]. */
typedef struct gz_vk_slots {
    uint32_t *queries;
    VkCommandBuffer *cbs;
    uint32_t count, cap;   /* recorded */
    uint32_t *free;        /* stack of free slot indices */
    uint32_t nfree;
} gz_vk_slots;

struct gz_vk_queue {
    gz_vk_device *dev;
    VkQueue handle;
    uint32_t family, index;
    uint16_t track, label_track, passes_track;
    char name[256]; /* the track's name: "VkQueue f.i device" or the app's name */
    uint32_t valid_bits;
    gz_vk_queue_mode mode;
    gz_vk_readback readback; /* how its brackets' and its recordings' values come back */
    pthread_mutex_t lock; /* log, exec ring, slots, our pool: the submitting thread vs the worker */

    bool ring_ready, ring_failed;
    VkCommandPool cmd_pool; /* ours (brackets, resets, the sync point), under lock */
    gz_vk_slots slots;
    VkSemaphore timeline; /* ours, signalled by the app's submissions; NULL: none */
    uint64_t timeline_next; /* the value the next signalling call takes */
    uint64_t timeline_seen; /* worker: the newest value read */

    gz_vk_record *log; /* ring of records */
    uint32_t log_cap, log_head, log_count;
    uint32_t log_done; /* records from the log's head that a wait of the app's saw complete */
    gz_vk_exec *execs; /* ring of the records' command buffers */
    uint32_t exec_cap, exec_head, exec_count;

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
    gz_vk_exec *exec_scratch; /* one batch's command buffers, copied out of the ring */
    uint32_t exec_scratch_cap;
    void *primaries; /* vk_harvest.c's scratch */
    uint32_t primaries_cap;
    open_zone pass, cmd; /* the render pass instance and command being read back */
    gz_vk_described described[GZ_VK_DESCRIBED];

    gz_vk_submit submit; /* the call in progress */
    uint64_t call_seq;   /* submit calls on this queue */
    gz_vk_sync sync;

    gz_item *scratch; /* items of one batch */
    uint32_t scratch_cap;
};

/* The device's timestamp queries (vk_queries.c). */
typedef struct gz_vk_queries {
    pthread_mutex_t lock;
    VkQueryPool pools[GZ_VK_MAX_POOLS];
    gz_vk_hostbuf results[GZ_VK_MAX_POOLS]; /* copy readback: one entry per query */
    uint32_t npools;
    uint32_t *clean; /* chunks ready for a first use */
    uint32_t nclean;
    uint32_t *dirty; /* chunks given back, to reset before they are used again */
    uint32_t ndirty;
    bool failed;     /* a pool could not be made: said once */
} gz_vk_queries;

struct gz_vk_device {
    gz_vk_device_info info;
    uint32_t *valid_bits;  /* copy of info.family_valid_bits */
    uint32_t *family_flags; /* copy of info.family_flags */
    int collector;
    bool lost; /* device lost or a query read failed: timing stops */
    gz_level level;
    gz_vk_readback readback; /* for families that may copy (graphics, compute) */

    pthread_mutex_t lock; /* queues list */
    gz_vk_queue *queues[GZ_VK_MAX_QUEUES];
    uint32_t nqueues;

    gz_vk_queries queries;
    pthread_mutex_t use_lock; /* recordings' newest uses */
    pthread_mutex_t spare_lock;
    gz_vk_recording *spare; /* recordings gone, their arrays kept (vk_recording.c) */
    uint32_t nspare;

    uint64_t untimed[GZ_VK_UNTIMED_COUNT]; /* atomic: label zones not timed, by reason */
    uint64_t untimed_cmdbufs[GZ_VK_UNTIMED_COUNT]; /* atomic: command buffer zones, by reason */
    uint64_t last_calibration_ns; /* the worker's periodic samples */
    uint64_t families_warned; /* families told to have no timestamps (bit = family) */
    uint32_t pipelines_seen;  /* atomic: pipelines numbered (vk_objects.c) */
    uint64_t untimed_passes[GZ_VK_UNTIMED_COUNT]; /* atomic: pass and command zones, by reason */
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
/* How results of a family come back: copies where the device reads them
 * that way and the family may copy, else host reads. */
gz_vk_readback gz_vk_family_readback(const gz_vk_device *dev, uint32_t family);
/* Whether the family may reset and copy queries in command buffers. */
bool gz_vk_family_can_copy(const gz_vk_device *dev, uint32_t family);

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
/* Records the copy of count results into the buffer. The copy waits for
 * them on the GPU: used only where the host read would wait for the whole
 * device instead (copy readback), and by the explicit API's collect. */
void gz_vk_cmd_copy_results(const gz_vk_fns *f, VkCommandBuffer cb, VkQueryPool pool,
                            uint32_t first_query, uint32_t count, const gz_vk_hostbuf *b,
                            uint32_t first_entry);
/* Makes the copies recorded before it visible to the host. */
void gz_vk_cmd_results_to_host(const gz_vk_fns *f, VkCommandBuffer cb);
/* Values of count timestamp queries read on the host, without waiting:
 * false when any is not available yet (or the read failed: *lost). */
bool gz_vk_query_read(const gz_vk_fns *f, VkDevice d, VkQueryPool pool, uint32_t first,
                      uint32_t count, uint64_t *values, bool *lost);

/* vk_queries.c */
bool gz_vk_queries_init(gz_vk_device *dev);
void gz_vk_queries_destroy(gz_vk_device *dev);
static inline VkQueryPool gz_vk_query_pool(const gz_vk_device *dev, uint32_t query)
{
    return dev->queries.pools[query / GZ_VK_POOL_QUERIES];
}
static inline uint32_t gz_vk_query_index(uint32_t query)
{
    return query % GZ_VK_POOL_QUERIES;
}
static inline gz_vk_hostbuf *gz_vk_query_results(gz_vk_device *dev, uint32_t query)
{
    return &dev->queries.results[query / GZ_VK_POOL_QUERIES];
}
/* A chunk reset and ready for its first use, or false when every pool is
 * full. */
bool gz_vk_chunk_take(gz_vk_device *dev, uint32_t *chunk);
/* Chunks whose last use has completed and been read: reset before their
 * next use (gz_vk_queries_recycle). */
void gz_vk_chunks_give(gz_vk_device *dev, const uint32_t *chunks, uint32_t n);
/* Worker: resets the chunks given back and makes them ready again. */
void gz_vk_queries_recycle(gz_vk_device *dev);
/* The set's next n queries (contiguous, one chunk): the global index of the
 * first, and its value index in *value; GZ_VK_NO_QUERY when none is left. */
uint32_t gz_vk_qset_take(gz_vk_device *dev, gz_vk_qset *set, uint32_t n, uint32_t *value);
/* Resets the set's queries on the host (host query reset) and marks their
 * copies unwritten, before a use: the previous use has completed. */
void gz_vk_qset_reset_host(gz_vk_device *dev, const gz_vk_qset *set);
/* Records the set's resets into cb (a graphics or compute command buffer,
 * outside any render pass). */
void gz_vk_qset_cmd_reset(gz_vk_device *dev, const gz_vk_qset *set, VkCommandBuffer cb);
/* Records the copies of the set's written queries into the pools' host
 * buffers (copy readback). */
void gz_vk_qset_cmd_copy(gz_vk_device *dev, const gz_vk_qset *set, VkCommandBuffer cb);
/* Marks the copies of the set's queries unwritten. */
void gz_vk_qset_clear_copies(gz_vk_device *dev, const gz_vk_qset *set);
/* The set's values in value order: from the host buffers (copied) or the
 * queries. False when any is not written yet (or the read failed: *lost). */
bool gz_vk_qset_read(gz_vk_device *dev, const gz_vk_qset *set, bool copied, uint64_t *values,
                     bool *lost);

/* vk_device.c */
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
/* Zones not timed, by reason (said in the summary). */
typedef enum untimed_kind { UNTIMED_LABELS, UNTIMED_CMDBUFS, UNTIMED_PASSES } untimed_kind;
static inline void gz_vk_count_untimed(gz_vk_device *dev, untimed_kind kind, gz_vk_untimed why,
                                       uint64_t n)
{
    uint64_t *c = kind == UNTIMED_CMDBUFS   ? dev->untimed_cmdbufs
                  : kind == UNTIMED_PASSES ? dev->untimed_passes
                                           : dev->untimed;
    if (n && why > GZ_VK_UNTIMED_LEVEL && why < GZ_VK_UNTIMED_COUNT)
        __atomic_add_fetch(&c[why], n, __ATOMIC_RELAXED);
}

/* vk_recording.c: recordings of the app's command buffers */
gz_vk_recording *gz_vk_recording_new(gz_vk_cmdbuf *cb, const VkCommandBufferBeginInfo *info);
void gz_vk_recording_ref(gz_vk_recording *rec);
void gz_vk_recording_unref(gz_vk_recording *rec);
/* What the app records into cb (rec is cb's recording): an action command
 * is about to be recorded; a label op; render pass instances (begin before
 * the call down, the rest after); secondaries executed (before the call
 * down); vkEndCommandBuffer (before the call down). */
void gz_vk_recording_action(gz_vk_recording *rec, VkCommandBuffer cb);
void gz_vk_recording_label(gz_vk_recording *rec, VkCommandBuffer cb, op_kind kind, uint32_t name);
void gz_vk_recording_execute(gz_vk_recording *rec, VkCommandBuffer cb,
                             gz_vk_recording *const *secs, uint32_t n);
void gz_vk_recording_end(gz_vk_recording *rec, VkCommandBuffer cb, uint32_t name_cache[2]);
/* Shared with vk_passes.c: an op at the end; the timestamp point now (a new
 * timestamp unless nothing was recorded since the last one; closes the open
 * command); the first action (resumes: it resumes a suspended render pass);
 * a description kept (GZ_VK_NO_DESC without memory). */
gz_vk_op *gz_vk_rec_op(gz_vk_recording *rec);
uint32_t gz_vk_rec_stamp(gz_vk_recording *rec, VkCommandBuffer cb, gz_vk_untimed *why);
void gz_vk_rec_first_action(gz_vk_recording *rec, VkCommandBuffer cb, bool resumes);
uint32_t gz_vk_rec_desc(gz_vk_recording *rec, const gz_vk_desc *d);

/* vk_passes.c: render pass instances and commands */
void gz_vk_recording_render_pass_begin(gz_vk_recording *rec, VkCommandBuffer cb,
                                       const VkRenderPassBeginInfo *info);
void gz_vk_recording_command(gz_vk_recording *rec, VkCommandBuffer cb, const gz_vk_desc *d);
bool gz_vk_recording_describes(const gz_vk_recording *rec);
void gz_vk_recording_bind_pipeline(gz_vk_recording *rec, VkPipelineBindPoint point,
                                   VkPipeline pipeline);
void gz_vk_recording_rendering_ending(gz_vk_recording *rec, VkCommandBuffer cb);
void gz_vk_recording_rendering_begin(gz_vk_recording *rec, VkCommandBuffer cb,
                                     const VkRenderingInfo *info);
void gz_vk_recording_rendering_begun(gz_vk_recording *rec, VkRenderingFlags flags,
                                     uint32_t view_mask);
void gz_vk_recording_rendering_end(gz_vk_recording *rec, VkCommandBuffer cb);
void gz_vk_recording_render_pass_begun(gz_vk_recording *rec, VkRenderPass pass);
void gz_vk_recording_next_subpass(gz_vk_recording *rec);
void gz_vk_recording_render_pass_end(gz_vk_recording *rec, VkCommandBuffer cb);

/* vk_describe.c: a description's zone name and details (worker) */
void gz_vk_describe(gz_vk_queue *q, const gz_vk_desc *d, uint32_t *name, uint32_t *detail);

/* vk_objects.c: render passes, image views, pipelines, their names */
bool gz_vk_render_pass_views(VkRenderPass pass, uint32_t subpass, uint32_t *mask);
/* The pass's attachments' formats (the first GZ_VK_DESC_FORMATS into
 * formats): how many it has. */
uint32_t gz_vk_render_pass_formats(VkRenderPass pass, uint32_t *formats);
uint32_t gz_vk_image_view_format(VkImageView view);
uint32_t gz_vk_object_name(uint32_t type, uint64_t handle);
/* The pipeline's number (1, 2, … in the order first bound on any device)
 * and its debug name in *name (0: none). */
uint32_t gz_vk_pipeline_number(gz_vk_device *dev, VkPipeline pipeline, uint32_t *name);
/* Frees the recordings kept for reuse (the device is going). */
void gz_vk_recordings_destroy(gz_vk_device *dev);

/* vk_uses.c: each execution of a recording is a use of its queries */
/* A new use of rec by a submission of call on q (the submitting thread,
 * before the call down): what the previous use left unread is read now,
 * and the queries are reset for this one. NULL when rec has no values. */
gz_vk_use *gz_vk_use_begin(gz_vk_queue *q, gz_vk_recording *rec, uint64_t call, bool simultaneous);
void gz_vk_use_unref(gz_vk_use *use);
/* Worker: the values of a use (rec->set.nvalues of them) into values:
 * OK, LOST (a later use overwrote them before they were read), or NOT_READY
 * (not all written yet; *lost: the read failed for good). */
typedef enum use_read { USE_READ_OK, USE_READ_LOST, USE_READ_NOT_READY } use_read;
use_read gz_vk_use_read(gz_vk_use *use, uint64_t *values, bool *lost);

/* vk_cmdbuf.c */
/* Whether the layer saw cb begin and not end: 1 recording, 0 not, -1 the
 * layer does not track it (or is not loaded). */
int gz_vk_cmdbuf_recording(VkCommandBuffer cb);

/* vk_brackets.c: the queue's own command buffers, under the queue's lock
 * unless said otherwise */
bool gz_vk_brackets_init(gz_vk_queue *q);
void gz_vk_brackets_destroy(gz_vk_queue *q);
/* A free slot (its command buffer recorded), or GZ_VK_NO_SLOT. */
uint32_t gz_vk_slot_take(gz_vk_queue *q);
/* Worker: the slot's batch was read back (or never submitted). */
void gz_vk_slot_give(gz_vk_queue *q, uint32_t slot);
/* The command buffer that resets rec's queries and its secondaries',
 * recorded on first use (devices without host query reset). */
VkCommandBuffer gz_vk_reset_cb(gz_vk_queue *q, gz_vk_recording *rec);
/* Frees rec's reset command buffer (rec is gone: no use is pending). */
void gz_vk_reset_cb_free(gz_vk_recording *rec);
/* Allocates one of our command buffers from q's pool (under the lock). */
VkCommandBuffer gz_vk_own_cmdbuf_alloc(gz_vk_queue *q);

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
/* The log and the queue's own objects, made on first submission (under the
 * lock). */
bool gz_vk_queue_ready(gz_vk_queue *q);
gz_vk_record *gz_vk_log_push(gz_vk_queue *q);
gz_vk_record *gz_vk_log_at(gz_vk_queue *q, uint32_t i);
/* n entries at the exec ring's tail (under the lock); false without memory. */
bool gz_vk_execs_push(gz_vk_queue *q, const gz_vk_exec *execs, uint32_t n, uint32_t *first);
void gz_vk_record_release(gz_vk_queue *q, const gz_vk_record *r);

/* vk_harvest.c: completed batches into zones (worker) */
typedef enum harvest_status { HARVEST_DONE, HARVEST_LATER } harvest_status;
/* A submitted batch: its zones emitted (or counted as lost), or LATER when
 * its work has not completed yet (or the queue has no room now). */
harvest_status gz_vk_harvest_batch(gz_vk_queue *q, const gz_vk_record *r,
                                   const gz_vk_exec *execs, bool final);
/* A queue label or a present, in its place among the batches. */
void gz_vk_harvest_qlabel(gz_vk_queue *q, const gz_vk_record *r);
/* A batch that will never be read: its zones count as dropped. */
void gz_vk_harvest_drop(gz_vk_queue *q, const gz_vk_record *r);
/* The queue is going: labels left open are lost. */
void gz_vk_harvest_end(gz_vk_queue *q);

#endif
