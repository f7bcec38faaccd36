/* The explicit Vulkan context behind include/gpuzones/vulkan.h (Tracy's
 * TracyVkContext): its own ring of timestamp queries, written by the app's
 * zones inside the app's command buffers and copied to host memory by the
 * collect command buffer; read back by the worker or the next collect,
 * never waiting and never through vkGetQueryPoolResults.
 *
 * Zone i (a 64-bit sequence number) owns slot i % GZ_VKX_SLOTS, which is
 * queries 2 * slot (begin) and 2 * slot + 1 (end). Counters, in order:
 *   freed <= tail <= head
 * head: next zone to hand out (lock-free, any thread); tail: every zone
 * before it has been read back (or given up); freed: every zone before it
 * has its queries reset, so its slot may be handed out again.
 *
 * A context holds GZ_VKX_ZONES zones between two collects, on a ring of
 * twice that: the zones of the frame before are read back (and their slots
 * freed) only at the next collect, after the zones recorded meanwhile. With
 * a ring of GZ_VKX_ZONES, a program recording 2000 zones a frame (collect,
 * submit and wait each) lost every other frame's zones: 19 520 of 40 000. */
#ifndef GZ_VK_EXPLICIT_H
#define GZ_VK_EXPLICIT_H

#define GPUZONES_ENABLE 1
#include "gpuzones/vulkan.h"
#include "gz_vk_internal.h"

#define GZ_VKX_ZONES 2048u               /* zones between two collects */
#define GZ_VKX_SLOTS (2u * GZ_VKX_ZONES)  /* the ring */
/* Collect copies in flight (more supersede the oldest: each covers every
 * zone unread when it was recorded). */
#define GZ_VKX_COPIES 8u
/* A copy's region: two results per zone of the ring, then its marker. */
#define GZ_VKX_REGION (2 * GZ_VKX_SLOTS + 1)
#define GZ_VKX_CALIB_QUERY (2 * GZ_VKX_SLOTS) /* the initial sync point's query */

enum { ZS_FREE = 0, ZS_OPEN, ZS_ENDED, ZS_DONE };

/* What one collect command buffer copies: zones [first, first + count). */
typedef struct gz_vkx_copy {
    uint64_t first;
    uint32_t count;
    uint32_t id; /* written as the region's marker after the copy: nonzero */
} gz_vkx_copy;

typedef struct gz_vkx {
    gz_vk_fns f;
    VkDevice device;
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    uint16_t track;
    bool shared;     /* the layer's queue track: its clock model, no calibration of ours */
    bool host_reset; /* queries reset on the host at read-back */
    VkTimeDomainEXT host_domain; /* calibrated pairs: 0 = none */
    uint64_t last_calibration_ns;
    int collector;

    VkQueryPool pool;
    gz_vk_hostbuf buf; /* GZ_VKX_COPIES regions, then the sync point's entry */

    uint64_t head;  /* atomic */
    uint64_t collected; /* atomic: head at the last collect with a command buffer */
    uint64_t tail;  /* under lock */
    uint64_t freed; /* atomic: written under lock */
    uint8_t *state; /* atomic per slot */
    uint64_t *seq;  /* the zone a slot holds */
    uint32_t *srcloc;
    uint64_t *begin, *end;
    uint8_t *have; /* bit 0: begin read, bit 1: end read */

    pthread_mutex_t lock; /* copies, tail, freed, read-back */
    gz_vkx_copy copies[GZ_VKX_COPIES]; /* region i belongs to copies[i] */
    uint32_t next_copy_id;
    uint64_t copies_made;
    gz_item *scratch;
    uint32_t scratch_cap;
    uint64_t dropped;
} gz_vkx;

/* vk_explicit_zones.c */
/* Reads back what the executed copies hold and emits finished zones; then
 * resets the read queries on the host when it can. Under lock. */
void gz_vkx_harvest(gz_vkx *c, bool final);
/* Everything still open or unread when the context goes: counted lost. */
void gz_vkx_drop_pending(gz_vkx *c);

/* vk_explicit.c */
gz_vkx *gz_vkx_from_handle(gpuzones_vk_ctx *h, const char *what);
void gz_vkx_calibrate(gz_vkx *c, bool force);

#endif
