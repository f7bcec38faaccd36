/* Every enqueue gets an event: the application's own (we take one more
 * reference, given back after readback, and hidden from its
 * CL_EVENT_REFERENCE_COUNT) or one of ours when it passed NULL. Zones are
 * named after the kernel or the command. */
#include <string.h>

#include "gz_cl_layer.h"

typedef struct enq {
    gz_cl_queue *ctx;
    cl_event *app;
    cl_event local;
    uint32_t name;
    uint64_t before_ns;
} enq;

/* The event pointer to pass down. name: taken before the host time, so the
 * lookup stays outside the bracket around the call. */
static cl_event *enq_begin(enq *e, cl_command_queue q, cl_event *app, uint32_t name)
{
    *e = (enq){.ctx = gz_cl_layer_queue(q), .app = app, .name = name};
    if (!e->ctx)
        return app;
    e->before_ns = gz_host_now_ns();
    return app ? app : &e->local;
}

static void enq_end(enq *e, cl_int err, bool blocking)
{
    if (!e->ctx)
        return;
    uint64_t after = gz_host_now_ns();
    if (err != CL_SUCCESS)
        return; /* no event was made */
    cl_event ev = e->app ? *e->app : e->local;
    if (!ev)
        return;
    if (e->app && gz_cl_next->clRetainEvent(ev) != CL_SUCCESS)
        return;
    if (!gz_cl_queue_add(e->ctx, ev, e->name, false, GZ_ZONE_SUBMIT, e->before_ns, after)) {
        gz_cl_next->clReleaseEvent(ev);
        return;
    }
    if (blocking)
        gz_cl_queue_collect(e->ctx);
}

/* Interned once per command name. */
#define COMMAND_NAME(s)                                                     \
    __extension__({                                                         \
        static uint32_t id_;                                                \
        uint32_t v_ = __atomic_load_n(&id_, __ATOMIC_RELAXED);              \
        if (!v_) {                                                          \
            v_ = gz_intern_cstr(s);                                         \
            __atomic_store_n(&id_, v_, __ATOMIC_RELAXED);                   \
        }                                                                   \
        v_;                                                                 \
    })

static uint32_t kernel_name(cl_kernel k)
{
    char buf[256];
    size_t len = 0;
    if (gz_cl_next->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof buf, buf, &len) !=
            CL_SUCCESS ||
        len == 0)
        return COMMAND_NAME("kernel");
    buf[sizeof buf - 1] = 0;
    return gz_intern_cstr(buf);
}

/* The common shape: (…, num_events_in_wait_list, event_wait_list, event). */
#define WRAP(fn, NAME, BLOCKING, PARAMS, ARGS)                                              \
    static cl_int CL_API_CALL hook_##fn PARAMS                                              \
    {                                                                                       \
        enq e_;                                                                             \
        cl_event *ev_ = enq_begin(&e_, command_queue, event, NAME);                         \
        cl_int err_ = gz_cl_next->fn ARGS;                                                  \
        enq_end(&e_, err_, BLOCKING);                                                       \
        return err_;                                                                        \
    }

#define WAIT_PARAMS cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event
#define WAIT_ARGS num_events_in_wait_list, event_wait_list, ev_

WRAP(clEnqueueNDRangeKernel, kernel_name(kernel), false,
     (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
      const size_t *global_work_offset, const size_t *global_work_size,
      const size_t *local_work_size, WAIT_PARAMS),
     (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
      WAIT_ARGS))
WRAP(clEnqueueTask, kernel_name(kernel), false,
     (cl_command_queue command_queue, cl_kernel kernel, WAIT_PARAMS),
     (command_queue, kernel, WAIT_ARGS))
WRAP(clEnqueueNativeKernel, COMMAND_NAME("NativeKernel"), false,
     (cl_command_queue command_queue, void(CL_CALLBACK *user_func)(void *), void *args,
      size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list,
      const void **args_mem_loc, WAIT_PARAMS),
     (command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
      WAIT_ARGS))
WRAP(clEnqueueReadBuffer, COMMAND_NAME("ReadBuffer"), blocking_read,
     (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset,
      size_t size, void *ptr, WAIT_PARAMS),
     (command_queue, buffer, blocking_read, offset, size, ptr, WAIT_ARGS))
WRAP(clEnqueueWriteBuffer, COMMAND_NAME("WriteBuffer"), blocking_write,
     (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset,
      size_t size, const void *ptr, WAIT_PARAMS),
     (command_queue, buffer, blocking_write, offset, size, ptr, WAIT_ARGS))
WRAP(clEnqueueReadBufferRect, COMMAND_NAME("ReadBufferRect"), blocking_read,
     (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
      const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
      size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
      size_t host_slice_pitch, void *ptr, WAIT_PARAMS),
     (command_queue, buffer, blocking_read, buffer_origin, host_origin, region,
      buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, WAIT_ARGS))
WRAP(clEnqueueWriteBufferRect, COMMAND_NAME("WriteBufferRect"), blocking_write,
     (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
      const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
      size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
      size_t host_slice_pitch, const void *ptr, WAIT_PARAMS),
     (command_queue, buffer, blocking_write, buffer_origin, host_origin, region,
      buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, WAIT_ARGS))
WRAP(clEnqueueCopyBuffer, COMMAND_NAME("CopyBuffer"), false,
     (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,
      size_t dst_offset, size_t size, WAIT_PARAMS),
     (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, WAIT_ARGS))
WRAP(clEnqueueCopyBufferRect, COMMAND_NAME("CopyBufferRect"), false,
     (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
      const size_t *src_origin, const size_t *dst_origin, const size_t *region,
      size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
      size_t dst_slice_pitch, WAIT_PARAMS),
     (command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region, src_row_pitch,
      src_slice_pitch, dst_row_pitch, dst_slice_pitch, WAIT_ARGS))
WRAP(clEnqueueFillBuffer, COMMAND_NAME("FillBuffer"), false,
     (cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size,
      size_t offset, size_t size, WAIT_PARAMS),
     (command_queue, buffer, pattern, pattern_size, offset, size, WAIT_ARGS))
WRAP(clEnqueueReadImage, COMMAND_NAME("ReadImage"), blocking_read,
     (cl_command_queue command_queue, cl_mem image, cl_bool blocking_read,
      const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch,
      void *ptr, WAIT_PARAMS),
     (command_queue, image, blocking_read, origin, region, row_pitch, slice_pitch, ptr,
      WAIT_ARGS))
WRAP(clEnqueueWriteImage, COMMAND_NAME("WriteImage"), blocking_write,
     (cl_command_queue command_queue, cl_mem image, cl_bool blocking_write,
      const size_t *origin, const size_t *region, size_t input_row_pitch,
      size_t input_slice_pitch, const void *ptr, WAIT_PARAMS),
     (command_queue, image, blocking_write, origin, region, input_row_pitch,
      input_slice_pitch, ptr, WAIT_ARGS))
WRAP(clEnqueueCopyImage, COMMAND_NAME("CopyImage"), false,
     (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image,
      const size_t *src_origin, const size_t *dst_origin, const size_t *region, WAIT_PARAMS),
     (command_queue, src_image, dst_image, src_origin, dst_origin, region, WAIT_ARGS))
WRAP(clEnqueueFillImage, COMMAND_NAME("FillImage"), false,
     (cl_command_queue command_queue, cl_mem image, const void *fill_color,
      const size_t *origin, const size_t *region, WAIT_PARAMS),
     (command_queue, image, fill_color, origin, region, WAIT_ARGS))
WRAP(clEnqueueCopyImageToBuffer, COMMAND_NAME("CopyImageToBuffer"), false,
     (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer,
      const size_t *src_origin, const size_t *region, size_t dst_offset, WAIT_PARAMS),
     (command_queue, src_image, dst_buffer, src_origin, region, dst_offset, WAIT_ARGS))
WRAP(clEnqueueCopyBufferToImage, COMMAND_NAME("CopyBufferToImage"), false,
     (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset,
      const size_t *dst_origin, const size_t *region, WAIT_PARAMS),
     (command_queue, src_buffer, dst_image, src_offset, dst_origin, region, WAIT_ARGS))
WRAP(clEnqueueUnmapMemObject, COMMAND_NAME("UnmapMemObject"), false,
     (cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr, WAIT_PARAMS),
     (command_queue, memobj, mapped_ptr, WAIT_ARGS))
WRAP(clEnqueueMigrateMemObjects, COMMAND_NAME("MigrateMemObjects"), false,
     (cl_command_queue command_queue, cl_uint num_mem_objects, const cl_mem *mem_objects,
      cl_mem_migration_flags flags, WAIT_PARAMS),
     (command_queue, num_mem_objects, mem_objects, flags, WAIT_ARGS))
WRAP(clEnqueueMarkerWithWaitList, COMMAND_NAME("Marker"), false,
     (cl_command_queue command_queue, WAIT_PARAMS), (command_queue, WAIT_ARGS))
WRAP(clEnqueueBarrierWithWaitList, COMMAND_NAME("Barrier"), false,
     (cl_command_queue command_queue, WAIT_PARAMS), (command_queue, WAIT_ARGS))
WRAP(clEnqueueSVMFree, COMMAND_NAME("SVMFree"), false,
     (cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[],
      void(CL_CALLBACK *pfn_free_func)(cl_command_queue queue, cl_uint num_svm_pointers,
                                       void *svm_pointers[], void *user_data),
      void *user_data, WAIT_PARAMS),
     (command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data, WAIT_ARGS))
WRAP(clEnqueueSVMMemcpy, COMMAND_NAME("SVMMemcpy"), blocking_copy,
     (cl_command_queue command_queue, cl_bool blocking_copy, void *dst_ptr, const void *src_ptr,
      size_t size, WAIT_PARAMS),
     (command_queue, blocking_copy, dst_ptr, src_ptr, size, WAIT_ARGS))
WRAP(clEnqueueSVMMemFill, COMMAND_NAME("SVMMemFill"), false,
     (cl_command_queue command_queue, void *svm_ptr, const void *pattern, size_t pattern_size,
      size_t size, WAIT_PARAMS),
     (command_queue, svm_ptr, pattern, pattern_size, size, WAIT_ARGS))
WRAP(clEnqueueSVMMap, COMMAND_NAME("SVMMap"), blocking_map,
     (cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags, void *svm_ptr,
      size_t size, WAIT_PARAMS),
     (command_queue, blocking_map, flags, svm_ptr, size, WAIT_ARGS))
WRAP(clEnqueueSVMUnmap, COMMAND_NAME("SVMUnmap"), false,
     (cl_command_queue command_queue, void *svm_ptr, WAIT_PARAMS),
     (command_queue, svm_ptr, WAIT_ARGS))
WRAP(clEnqueueSVMMigrateMem, COMMAND_NAME("SVMMigrateMem"), false,
     (cl_command_queue command_queue, cl_uint num_svm_pointers, const void **svm_pointers,
      const size_t *sizes, cl_mem_migration_flags flags, WAIT_PARAMS),
     (command_queue, num_svm_pointers, svm_pointers, sizes, flags, WAIT_ARGS))

/* OpenCL 1.0's marker: its event is not optional. */
static cl_int CL_API_CALL hook_clEnqueueMarker(cl_command_queue command_queue, cl_event *event)
{
    enq e;
    cl_event *ev = enq_begin(&e, command_queue, event, COMMAND_NAME("Marker"));
    cl_int err = gz_cl_next->clEnqueueMarker(command_queue, ev);
    enq_end(&e, err, false);
    return err;
}

/* Maps return the pointer and report errors through errcode_ret. */
static void *CL_API_CALL hook_clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
                                                 cl_bool blocking_map, cl_map_flags map_flags,
                                                 size_t offset, size_t size, WAIT_PARAMS,
                                                 cl_int *errcode_ret)
{
    enq e;
    cl_event *ev = enq_begin(&e, command_queue, event, COMMAND_NAME("MapBuffer"));
    cl_int err = CL_SUCCESS;
    void *p = gz_cl_next->clEnqueueMapBuffer(command_queue, buffer, blocking_map, map_flags,
                                             offset, size, num_events_in_wait_list,
                                             event_wait_list, ev, &err);
    enq_end(&e, err, blocking_map);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

static void *CL_API_CALL hook_clEnqueueMapImage(cl_command_queue command_queue, cl_mem image,
                                                cl_bool blocking_map, cl_map_flags map_flags,
                                                const size_t *origin, const size_t *region,
                                                size_t *image_row_pitch,
                                                size_t *image_slice_pitch, WAIT_PARAMS,
                                                cl_int *errcode_ret)
{
    enq e;
    cl_event *ev = enq_begin(&e, command_queue, event, COMMAND_NAME("MapImage"));
    cl_int err = CL_SUCCESS;
    void *p = gz_cl_next->clEnqueueMapImage(command_queue, image, blocking_map, map_flags, origin,
                                            region, image_row_pitch, image_slice_pitch,
                                            num_events_in_wait_list, event_wait_list, ev, &err);
    enq_end(&e, err, blocking_map);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

void gz_cl_layer_enqueue_hooks(struct _cl_icd_dispatch *d)
{
#define HOOK(fn) d->fn = hook_##fn
    HOOK(clEnqueueNDRangeKernel);
    HOOK(clEnqueueTask);
    HOOK(clEnqueueNativeKernel);
    HOOK(clEnqueueReadBuffer);
    HOOK(clEnqueueWriteBuffer);
    HOOK(clEnqueueReadBufferRect);
    HOOK(clEnqueueWriteBufferRect);
    HOOK(clEnqueueCopyBuffer);
    HOOK(clEnqueueCopyBufferRect);
    HOOK(clEnqueueFillBuffer);
    HOOK(clEnqueueReadImage);
    HOOK(clEnqueueWriteImage);
    HOOK(clEnqueueCopyImage);
    HOOK(clEnqueueFillImage);
    HOOK(clEnqueueCopyImageToBuffer);
    HOOK(clEnqueueCopyBufferToImage);
    HOOK(clEnqueueUnmapMemObject);
    HOOK(clEnqueueMigrateMemObjects);
    HOOK(clEnqueueMarkerWithWaitList);
    HOOK(clEnqueueBarrierWithWaitList);
    HOOK(clEnqueueMarker);
    HOOK(clEnqueueMapBuffer);
    HOOK(clEnqueueMapImage);
    HOOK(clEnqueueSVMFree);
    HOOK(clEnqueueSVMMemcpy);
    HOOK(clEnqueueSVMMemFill);
    HOOK(clEnqueueSVMMap);
    HOOK(clEnqueueSVMUnmap);
    HOOK(clEnqueueSVMMigrateMem);
#undef HOOK
}
