/* Structures shared by the Vulkan context's files. */
#ifndef GZ_VK_INTERNAL_H
#define GZ_VK_INTERNAL_H

#include <pthread.h>

#include "gz_client.h"
#include "gz_vk.h"

#define GZ_VK_MAX_QUEUES 64
/* Timestamp slots per queue: a batch of k command buffers takes k + 1.
 * Their command buffers are recorded on first use, a block at a time. */
#define GZ_VK_RING_SLOTS 1024u
#define GZ_VK_SLOT_BLOCK 32u
/* Label timestamps live in one device-wide pool handed out in chunks. */
#define GZ_VK_LABEL_CHUNK 64u
#define GZ_VK_LABEL_CHUNKS 1024u
#define GZ_VK_NO_QUERY UINT32_MAX
#define GZ_VK_LABEL_DEPTH 64u

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

typedef struct gz_vk_label_op {
    uint16_t kind;    /* label_op_kind */
    uint16_t untimed; /* never meant to be timed (from a secondary) */
    uint32_t name; /* interned, for LABEL_BEGIN */
    uint32_t query; /* index in the label pool, GZ_VK_NO_QUERY when not timed */
} gz_vk_label_op;

/* What one recording of a command buffer did with labels. Immutable once
 * the recording ends; shared by the command buffer and every submission of
 * it that has not been read back yet (reference counted). */
typedef struct gz_vk_recording {
    uint32_t refs;
    uint32_t in_flight; /* submissions not yet read back */
    gz_vk_label_op *ops;
    uint32_t nops, ops_cap;
    uint32_t *chunks; /* label pool chunks holding this recording's queries */
    uint32_t nchunks, chunks_cap;
    uint32_t used_in_chunk; /* queries used in the last chunk */
    bool timed; /* label timestamps are written (not for simultaneous use etc.) */
} gz_vk_recording;

/* Queries the recording uses in its chunk c: all but in the last one. */
static inline uint32_t gz_vk_recording_chunk_used(const gz_vk_recording *rec, uint32_t c)
{
    return c + 1 < rec->nchunks ? GZ_VK_LABEL_CHUNK : rec->used_in_chunk;
}

struct gz_vk_cmdbuf {
    gz_vk_device *dev;
    VkCommandBuffer handle;
    uint32_t family;
    bool secondary;
    uint32_t name; /* interned debug name, 0 = none */
    uint32_t default_name; /* "VkCommandBuffer 0x…", interned on first submit */
    gz_vk_recording *rec;
    bool recording; /* atomic: between vkBegin- and vkEndCommandBuffer */
};

/* What a slot's timestamp is followed by in its batch. */
typedef struct gz_vk_slot {
    VkCommandBuffer cb;    /* prerecorded: writes this slot's timestamp */
    uint32_t name;         /* zone name of the command buffer after it */
    gz_vk_recording *rec;  /* its recording (label ops), referenced */
    bool labels_timed;     /* rec's label queries belong to this execution alone */
} gz_vk_slot;

typedef enum record_kind { REC_BATCH, REC_QLABEL_BEGIN, REC_QLABEL_END } record_kind;

/* One entry of a queue's submission log, read back in order. */
typedef struct gz_vk_record {
    uint32_t kind; /* record_kind */
    uint32_t name;
    uint32_t first, nslots, waste; /* REC_BATCH: slots used, and skipped at the ring's end */
    uint32_t batch, cmdbufs;       /* REC_BATCH: index in its call, command buffers */
    uint64_t flow;
    uint64_t submit_ns;
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
    uint64_t submit_ns;
    uint32_t nrecords; /* records this call added at the log's tail */
};

struct gz_vk_queue {
    gz_vk_device *dev;
    VkQueue handle;
    uint32_t family, index;
    uint16_t track, label_track;
    char name[256]; /* the track's name: "VkQueue f.i device" or the app's name */
    uint32_t valid_bits;
    pthread_mutex_t lock; /* ring and log: the submitting thread vs the worker */

    bool ring_ready, ring_failed;
    VkQueryPool pool;
    gz_vk_hostbuf results_buf; /* slot i's result at entry i; the sync point's after them */
    VkCommandPool cmd_pool;
    gz_vk_slot slots[GZ_VK_RING_SLOTS];
    bool block_ready[GZ_VK_RING_SLOTS / GZ_VK_SLOT_BLOCK];
    uint32_t head, used; /* next free slot, slots in use (incl. skipped) */

    gz_vk_record *log; /* ring of records */
    uint32_t log_cap, log_head, log_count;

    /* read-back state: the queue's label stack in submission order */
    label_frame labels[GZ_VK_LABEL_DEPTH];
    uint32_t label_depth, label_overflow;
    uint64_t last_ticks;
    bool have_last;

    gz_vk_submit submit; /* the call in progress (under lock) */

    /* Sync points, for devices without calibrated timestamps (vk_sync.c). */
    struct {
        bool ready, failed;
        VkQueryPool pool;
        VkEvent go;         /* set by the host: the GPU waits for it */
        VkEvent event;      /* set by the GPU after the timestamp */
        VkCommandBuffer cb; /* waits for go, writes the timestamp, sets event */
        bool pending;       /* submitted, value not read yet */
        uint64_t before, seen; /* host times around it (seen 0: not seen) */
        uint64_t last_ns;
    } sync;

    gz_item *scratch; /* items of one batch */
    uint32_t scratch_cap;
};


struct gz_vk_device {
    gz_vk_device_info info;
    uint32_t *valid_bits; /* copy of info.family_valid_bits */
    int collector;
    bool lost; /* device lost or a query read failed: timing stops */
    gz_level level;

    pthread_mutex_t lock; /* queues list, label pool chunks */
    gz_vk_queue *queues[GZ_VK_MAX_QUEUES];
    uint32_t nqueues;

    bool labels_ready, labels_failed;
    VkQueryPool label_pool;
    gz_vk_hostbuf label_results; /* label query q's result at entry q */
    uint32_t free_chunks[GZ_VK_LABEL_CHUNKS];
    uint32_t nfree_chunks;

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

/* vk_hostbuf.c */
bool gz_vk_hostbuf_create(gz_vk_device *dev, uint32_t entries, gz_vk_hostbuf *out);
void gz_vk_hostbuf_destroy(gz_vk_device *dev, gz_vk_hostbuf *b);
/* The same for a context that is not a gz_vk_device (vk_explicit.c). */
bool gz_vk_hostbuf_create_on(const gz_vk_fns *f, VkDevice d,
                             const VkPhysicalDeviceMemoryProperties *mp, uint32_t entries,
                             gz_vk_hostbuf *out);
void gz_vk_hostbuf_destroy_on(const gz_vk_fns *f, VkDevice d, gz_vk_hostbuf *b);
/* Marks entries unavailable before the submission that will fill them. */
void gz_vk_hostbuf_clear(gz_vk_hostbuf *b, uint32_t first, uint32_t count);
/* Whether all count entries are available. */
bool gz_vk_hostbuf_ready(const gz_vk_hostbuf *b, uint32_t first, uint32_t count);
/* Values of count entries, or false when any is not available yet. */
bool gz_vk_hostbuf_read(const gz_vk_hostbuf *b, uint32_t first, uint32_t count, uint64_t *values);
/* Records the copy of count results into the buffer, made visible to the
 * host. Outside a render pass. */
void gz_vk_cmd_copy_results(const gz_vk_fns *f, VkCommandBuffer cb, VkQueryPool pool,
                            uint32_t first_query, uint32_t count, const gz_vk_hostbuf *b,
                            uint32_t first_entry);

/* vk_device.c */
bool gz_vk_label_chunk_alloc(gz_vk_device *dev, uint32_t *chunk);
void gz_vk_label_chunk_free(gz_vk_device *dev, uint32_t chunk);
/* The worker's periodic samples, sent to every queue's track. */
void gz_vk_calibrate(gz_vk_device *dev, bool force);
/* One sample for one new track, from the thread creating it: it reaches
 * the queue before any zone of the track can. */
void gz_vk_calibrate_track(gz_vk_device *dev, uint16_t track);
bool gz_vk_can_calibrate(const gz_vk_device *dev);

/* vk_cmdbuf.c */
void gz_vk_recording_unref(gz_vk_device *dev, gz_vk_recording *rec);
/* Host reset of the recording's label queries before an execution. */
void gz_vk_recording_reset_queries(gz_vk_device *dev, gz_vk_recording *rec);

/* vk_sync.c: under the queue's lock */
void gz_vk_sync_point(gz_vk_queue *q);
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
/* Whether the layer saw cb begin and not end: 1 recording, 0 not, -1 the
 * layer does not track it (or is not loaded). */
int gz_vk_cmdbuf_recording(VkCommandBuffer cb);

/* vk_queue.c */
gz_vk_queue *gz_vk_queue_new(gz_vk_device *dev, VkQueue handle, uint32_t family, uint32_t index);
void gz_vk_queue_collect(gz_vk_queue *q, bool final);
void gz_vk_queue_destroy(gz_vk_queue *q);

#endif
