/* The app's objects that name render pass and command zones: render passes
 * (their attachments' formats, the views of their subpasses), framebuffers
 * and pipelines (their debug names, a pipeline's number in the order first
 * bound), image views (their formats). One map, by type and handle, filled
 * from the layer's create, destroy and naming hooks; only what a zone will
 * ask for is kept (multiview render passes always, the rest at the passes
 * level and up). */
#include <stdlib.h>
#include <string.h>

#include "gz_intern.h"
#include "gz_vk_internal.h"

typedef struct object {
    gz_handle_node node;
    uint32_t type;     /* VkObjectType */
    uint64_t handle;
    uint32_t name;     /* interned debug name, 0: none */
    uint32_t number;   /* pipelines: 1, 2, … in the order first bound */
    uint32_t format;   /* image views: VkFormat */
    uint32_t nformats; /* render passes: attachments */
    uint32_t formats[GZ_VK_DESC_FORMATS];
    uint32_t subpasses;
    uint32_t view_masks[]; /* render passes: each subpass's views (multiview) */
} object;

static gz_handle_map objects = GZ_HANDLE_MAP_INITIALIZER;
/* One lock around finding and changing an entry (the map's own lock covers
 * single calls only). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t key_of(uint32_t type, uint64_t handle)
{
    return handle ^ ((uint64_t)type * 0x9e3779b97f4a7c15ull);
}

/* Under the lock: the entry of (type, handle), NULL when none. */
static object *find(uint32_t type, uint64_t handle)
{
    gz_handle_node *n = gz_handle_map_get(&objects, key_of(type, handle));
    object *o = n ? gz_container_of(n, object, node) : NULL;
    return o && o->type == type && o->handle == handle ? o : NULL;
}

/* Under the lock: the entry, made with room for subpasses if it is new. */
static object *find_or_add(uint32_t type, uint64_t handle, uint32_t subpasses)
{
    object *o = find(type, handle);
    if (o && o->subpasses >= subpasses)
        return o;
    object *n = calloc(1, sizeof *n + subpasses * sizeof n->view_masks[0]);
    if (!n) {
        static int once;
        gz_log_once(&once, "out of memory for the layer's record of an object; zones name it "
                           "less well");
        return o;
    }
    n->type = type;
    n->handle = handle;
    n->subpasses = subpasses;
    if (o) {
        n->name = o->name;
        n->number = o->number;
        n->format = o->format;
        n->nformats = o->nformats;
        memcpy(n->formats, o->formats, sizeof n->formats);
    }
    gz_handle_node *old = gz_handle_map_put(&objects, key_of(type, handle), &n->node);
    if (old)
        free(gz_container_of(old, object, node));
    return n;
}

void gz_vk_object_named(uint32_t type, uint64_t handle, const char *name)
{
    if (type != VK_OBJECT_TYPE_RENDER_PASS && type != VK_OBJECT_TYPE_FRAMEBUFFER &&
        type != VK_OBJECT_TYPE_PIPELINE)
        return;
    uint32_t id = name && *name ? gz_intern_cstr(name) : 0;
    pthread_mutex_lock(&lock);
    object *o = find(type, handle);
    if (!o && id)
        o = find_or_add(type, handle, 0);
    if (o)
        o->name = id;
    pthread_mutex_unlock(&lock);
}

void gz_vk_object_gone(uint32_t type, uint64_t handle)
{
    if (!handle)
        return;
    pthread_mutex_lock(&lock);
    object *o = find(type, handle);
    if (o) {
        gz_handle_map_remove_node(&objects, &o->node);
        free(o);
    }
    pthread_mutex_unlock(&lock);
}

uint32_t gz_vk_object_name(uint32_t type, uint64_t handle)
{
    pthread_mutex_lock(&lock);
    const object *o = handle ? find(type, handle) : NULL;
    uint32_t name = o ? o->name : 0;
    pthread_mutex_unlock(&lock);
    return name;
}

void gz_vk_render_pass_add(gz_vk_device *dev, VkRenderPass pass, const uint32_t *view_masks,
                           uint32_t subpasses, const VkFormat *formats, uint32_t nformats)
{
    bool multiview = false;
    for (uint32_t i = 0; view_masks && i < subpasses; i++)
        multiview |= view_masks[i] != 0;
    /* Multiview passes at every level (a timestamp there takes one query
     * per view); the rest only where passes are zones. */
    if (!pass || (!multiview && dev->level < GZ_LEVEL_PASSES))
        return;
    pthread_mutex_lock(&lock);
    object *o = find_or_add(VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)(uintptr_t)pass,
                            multiview ? subpasses : 0);
    if (o) {
        for (uint32_t i = 0; multiview && i < subpasses; i++)
            o->view_masks[i] = view_masks[i];
        o->nformats = nformats;
        for (uint32_t i = 0; i < nformats && i < GZ_VK_DESC_FORMATS; i++)
            o->formats[i] = (uint32_t)formats[i];
    }
    pthread_mutex_unlock(&lock);
}

void gz_vk_render_pass_remove(VkRenderPass pass)
{
    gz_vk_object_gone(VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)(uintptr_t)pass);
}

bool gz_vk_render_pass_views(VkRenderPass pass, uint32_t subpass, uint32_t *mask)
{
    pthread_mutex_lock(&lock);
    const object *o = pass ? find(VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)(uintptr_t)pass) : NULL;
    *mask = o && subpass < o->subpasses ? o->view_masks[subpass] : 0;
    pthread_mutex_unlock(&lock);
    return o != NULL;
}

uint32_t gz_vk_render_pass_formats(VkRenderPass pass, uint32_t *formats)
{
    pthread_mutex_lock(&lock);
    const object *o = pass ? find(VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)(uintptr_t)pass) : NULL;
    uint32_t n = o ? o->nformats : 0;
    if (o)
        memcpy(formats, o->formats, sizeof o->formats);
    pthread_mutex_unlock(&lock);
    return n;
}

void gz_vk_image_view_add(gz_vk_device *dev, VkImageView view, VkFormat format)
{
    if (!view || dev->level < GZ_LEVEL_PASSES)
        return;
    pthread_mutex_lock(&lock);
    object *o = find_or_add(VK_OBJECT_TYPE_IMAGE_VIEW, (uint64_t)(uintptr_t)view, 0);
    if (o)
        o->format = (uint32_t)format;
    pthread_mutex_unlock(&lock);
}

uint32_t gz_vk_image_view_format(VkImageView view)
{
    pthread_mutex_lock(&lock);
    const object *o = view ? find(VK_OBJECT_TYPE_IMAGE_VIEW, (uint64_t)(uintptr_t)view) : NULL;
    uint32_t f = o ? o->format : 0;
    pthread_mutex_unlock(&lock);
    return f;
}

uint32_t gz_vk_pipeline_number(gz_vk_device *dev, VkPipeline pipeline, uint32_t *name)
{
    pthread_mutex_lock(&lock);
    object *o = find_or_add(VK_OBJECT_TYPE_PIPELINE, (uint64_t)(uintptr_t)pipeline, 0);
    if (o && !o->number)
        o->number = __atomic_add_fetch(&dev->pipelines_seen, 1, __ATOMIC_RELAXED);
    uint32_t number = o ? o->number : 0;
    *name = o ? o->name : 0;
    pthread_mutex_unlock(&lock);
    return number;
}
