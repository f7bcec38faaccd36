/* The app's command pools and buffers as the context tracks them: by
 * handle (so that the explicit API finds them as the layer's hooks do) and
 * by pool (destroying or resetting a pool reaches its command buffers), and
 * the entry points the layer calls while a command buffer records, which
 * hand the work to its recording (vk_recording.c). */
#include <stdlib.h>
#include <string.h>

#include "gz_intern.h"
#include "gz_vk_internal.h"

/* VkCommandBuffer -> gz_vk_cmdbuf, for the layer's hooks and for the
 * explicit API's checks, which see only handles. */
static gz_handle_map cmdbufs = GZ_HANDLE_MAP_INITIALIZER; /* no once-check per lookup */

/* Each thread remembers the command buffer it looked up last: a recording
 * thread asks for the same one call after call. Any removal from the map
 * makes every thread's memory stale (the handle may come back as another
 * command buffer). */
static uint64_t removals; /* atomic */
static __thread struct {
    VkCommandBuffer handle;
    gz_vk_cmdbuf *cb;
    uint64_t removals;
} last_found;

static void removed(void)
{
    __atomic_add_fetch(&removals, 1, __ATOMIC_ACQ_REL);
}

/* A pool's command buffers. The app synchronizes the calls on a pool
 * (Vulkan's rule): no lock. */
struct gz_vk_cmdpool {
    gz_vk_device *dev;
    uint32_t family;
    bool protected_pool;
    void *user;
    gz_vk_cmdbuf **cbs;
    uint32_t count, cap;
};

gz_vk_cmdpool *gz_vk_cmdpool_new(gz_vk_device *dev, uint32_t family, bool protected_pool,
                                 void *user)
{
    gz_vk_cmdpool *p = calloc(1, sizeof *p);
    if (p) {
        p->dev = dev;
        p->family = family;
        p->protected_pool = protected_pool;
        p->user = user;
    }
    return p;
}

static bool pool_add(gz_vk_cmdpool *pool, gz_vk_cmdbuf *cb)
{
    if (pool->count == pool->cap) {
        uint32_t cap = pool->cap ? pool->cap * 2 : 8;
        gz_vk_cmdbuf **cbs = realloc(pool->cbs, cap * sizeof *cbs);
        if (!cbs)
            return false;
        pool->cbs = cbs;
        pool->cap = cap;
    }
    cb->pool = pool;
    cb->pool_index = pool->count;
    pool->cbs[pool->count++] = cb;
    return true;
}

static void pool_remove(gz_vk_cmdbuf *cb)
{
    gz_vk_cmdpool *pool = cb->pool;
    gz_vk_cmdbuf *last = pool->cbs[--pool->count];
    pool->cbs[cb->pool_index] = last;
    last->pool_index = cb->pool_index;
}

static void cmdbuf_free(gz_vk_cmdbuf *cb)
{
    gz_vk_cmdbuf_reset(cb);
    free(cb);
}

void gz_vk_cmdpool_free(gz_vk_cmdpool *p)
{
    if (!p)
        return;
    /* Destroying a pool frees its command buffers. */
    for (uint32_t i = 0; i < p->count; i++)
        gz_handle_map_remove_node(&cmdbufs, &p->cbs[i]->node);
    removed();
    for (uint32_t i = 0; i < p->count; i++)
        cmdbuf_free(p->cbs[i]);
    free(p->cbs);
    free(p);
}

void gz_vk_cmdpool_reset(gz_vk_cmdpool *p)
{
    for (uint32_t i = 0; p && i < p->count; i++)
        gz_vk_cmdbuf_reset(p->cbs[i]);
}

void gz_vk_cmdbuf_new(gz_vk_cmdpool *p, VkCommandBuffer handle, bool secondary)
{
    gz_vk_cmdbuf *cb = calloc(1, sizeof *cb);
    if (!cb || !pool_add(p, cb)) {
        /* Untracked: its submissions are still timed (by brackets), with a
         * default name and without labels. */
        free(cb);
        return;
    }
    cb->dev = p->dev;
    cb->handle = handle;
    cb->family = p->family;
    cb->secondary = secondary;
    cb->protected_pool = p->protected_pool;
    cb->user = p->user;
    gz_handle_node *old = gz_handle_map_put(&cmdbufs, GZ_HANDLE_KEY(handle), &cb->node);
    if (old) {
        /* A handle the app freed without telling us (its pool reset by the
         * driver's rules, or an untracked free): the stale record goes. */
        gz_vk_cmdbuf *stale = gz_container_of(old, gz_vk_cmdbuf, node);
        removed();
        pool_remove(stale);
        cmdbuf_free(stale);
    }
}

void gz_vk_cmdbuf_free(VkCommandBuffer handle)
{
    gz_handle_node *n = handle ? gz_handle_map_remove(&cmdbufs, GZ_HANDLE_KEY(handle)) : NULL;
    if (!n)
        return;
    gz_vk_cmdbuf *cb = gz_container_of(n, gz_vk_cmdbuf, node);
    removed();
    pool_remove(cb);
    cmdbuf_free(cb);
}

gz_vk_cmdbuf *gz_vk_cmdbuf_find(VkCommandBuffer handle)
{
    uint64_t now = __atomic_load_n(&removals, __ATOMIC_ACQUIRE);
    if (handle && last_found.handle == handle && last_found.removals == now)
        return last_found.cb;
    gz_handle_node *n = gz_handle_map_get(&cmdbufs, GZ_HANDLE_KEY(handle));
    gz_vk_cmdbuf *cb = n ? gz_container_of(n, gz_vk_cmdbuf, node) : NULL;
    if (cb) {
        last_found.handle = handle;
        last_found.cb = cb;
        last_found.removals = now;
    }
    return cb;
}

void *gz_vk_cmdbuf_user(const gz_vk_cmdbuf *cb)
{
    return cb->user;
}

int gz_vk_cmdbuf_recording(VkCommandBuffer handle)
{
    gz_vk_cmdbuf *cb = gz_vk_cmdbuf_find(handle);
    if (!cb)
        return -1;
    return __atomic_load_n(&cb->recording, __ATOMIC_ACQUIRE) ? 1 : 0;
}

void gz_vk_cmdbuf_set_name(gz_vk_cmdbuf *cb, const char *name)
{
    cb->name = name && *name ? gz_intern_cstr(name) : 0;
}

/* ---- recording ---------------------------------------------------------- */

void gz_vk_cmdbuf_reset(gz_vk_cmdbuf *cb)
{
    __atomic_store_n(&cb->recording, false, __ATOMIC_RELEASE);
    gz_vk_recording_unref(cb->rec);
    cb->rec = NULL;
}

void gz_vk_cmdbuf_begin(gz_vk_cmdbuf *cb, const VkCommandBufferBeginInfo *info)
{
    gz_vk_cmdbuf_reset(cb);
    /* At the submit level nothing is written into recordings. */
    if (cb->dev->level >= GZ_LEVEL_CMDBUF)
        cb->rec = gz_vk_recording_new(cb, info);
    __atomic_store_n(&cb->recording, true, __ATOMIC_RELEASE);
}

/* cb's recording while it records (NULL: none, or the app's error). */
static gz_vk_recording *recording(gz_vk_cmdbuf *cb)
{
    return cb && cb->rec && !cb->rec->ended ? cb->rec : NULL;
}

void gz_vk_cmdbuf_end(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_end(rec, cb->handle, cb->name_cache);
    __atomic_store_n(&cb->recording, false, __ATOMIC_RELEASE);
}

void gz_vk_cmdbuf_action(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec && !rec->acted)
        gz_vk_recording_action(rec, cb->handle);
    else if (rec)
        rec->point_valid = false; /* work follows the last timestamp */
}

void gz_vk_cmdbuf_label_begin(gz_vk_cmdbuf *cb, const char *name)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_label(rec, cb->handle, OP_LABEL_BEGIN, gz_intern_cstr(name));
}

void gz_vk_cmdbuf_label_end(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_label(rec, cb->handle, OP_LABEL_END, 0);
}

void gz_vk_cmdbuf_render_pass_begin(gz_vk_cmdbuf *cb, const VkRenderPassBeginInfo *info)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_render_pass_begin(rec, cb->handle, info);
}

bool gz_vk_cmdbuf_describes(const gz_vk_cmdbuf *cb)
{
    const gz_vk_recording *rec = cb->rec;
    return rec && gz_vk_recording_describes(rec);
}

void gz_vk_cmdbuf_command(gz_vk_cmdbuf *cb, const gz_vk_desc *desc)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_command(rec, cb->handle, desc);
}

void gz_vk_cmdbuf_bind_pipeline(gz_vk_cmdbuf *cb, VkPipelineBindPoint point, VkPipeline pipeline)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_bind_pipeline(rec, point, pipeline);
}

void gz_vk_cmdbuf_render_pass_begun(gz_vk_cmdbuf *cb, VkRenderPass pass, bool secondary_contents)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_render_pass_begun(rec, pass, secondary_contents);
}

void gz_vk_cmdbuf_subpass_ending(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_subpass_ending(rec, cb->handle);
}

void gz_vk_cmdbuf_next_subpass(gz_vk_cmdbuf *cb, bool secondary_contents)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_next_subpass(rec, secondary_contents);
}

void gz_vk_cmdbuf_render_pass_end(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_render_pass_end(rec, cb->handle);
}

void gz_vk_cmdbuf_rendering_begin(gz_vk_cmdbuf *cb, const VkRenderingInfo *info)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_rendering_begin(rec, cb->handle, info);
}

void gz_vk_cmdbuf_rendering_begun(gz_vk_cmdbuf *cb, const VkRenderingInfo *info)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_rendering_begun(rec, info->flags, info->viewMask);
}

void gz_vk_cmdbuf_rendering_ending(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_rendering_ending(rec, cb->handle);
}

void gz_vk_cmdbuf_rendering_end(gz_vk_cmdbuf *cb)
{
    gz_vk_recording *rec = recording(cb);
    if (rec)
        gz_vk_recording_rendering_end(rec, cb->handle);
}

void gz_vk_cmdbuf_execute(gz_vk_cmdbuf *primary, gz_vk_cmdbuf *const *secondaries, uint32_t n)
{
    gz_vk_recording *rec = recording(primary);
    if (!rec)
        return;
    gz_vk_recording *stack[16] = {0};
    gz_vk_recording **secs = n <= 16 ? stack : malloc(n * sizeof *secs);
    if (!secs) {
        gz_vk_recording_action(rec, primary->handle);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        secs[i] = secondaries[i] ? secondaries[i]->rec : NULL;
    gz_vk_recording_execute(rec, primary->handle, secs, n);
    if (secs != stack)
        free(secs);
}
