/* The public API of include/gpuzones/gpuzones.h: thin entry points over
 * the client. Exported with their public names; the GPU zone macros of the
 * per-API headers build on the source location ids made here. */
#define GPUZONES_ENABLE 1
#include "gpuzones/gpuzones.h"

#include <string.h>

#include "gz_client.h"
#include "gz_srcloc.h"

int gpuzones_startup(void)
{
    return gz_client_start();
}

void gpuzones_shutdown(void)
{
    gz_client_stop();
}

int gpuzones_is_enabled(void)
{
    return gz_client_running();
}

void gpuzones_frame_mark(const char *name)
{
    if (!gz_client_start())
        return;
    static uint32_t frame;
    gz_frame_mark(name && name[0] ? gz_intern_cstr(name) : gz_intern_once(&frame, "frame"));
}

void gpuzones_message(const char *text, size_t len)
{
    if (!text || !gz_client_start())
        return;
    gz_item it = {.type = GZ_ITEM_MESSAGE,
                  .name = gz_intern(text, len),
                  .cpu = {.begin_ns = gz_host_now_ns(), .tid = gz_thread_id()}};
    gz_emit(&it);
}

uint32_t gpuzones_srcloc_id(const gpuzones_srcloc *loc)
{
    if (!loc)
        return 0;
    return gz_srcloc_intern(loc->name, loc->name ? strlen(loc->name) : 0, loc->function,
                            loc->file, loc->line, loc->color);
}

uint32_t gpuzones_srcloc_transient(const char *name, size_t name_len, const char *function,
                                   const char *file, uint32_t line, uint32_t color)
{
    return gz_srcloc_intern(name, name_len, function, file, line, color);
}
