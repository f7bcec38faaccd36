/* Entry points of the ocl-icd layer: the loader calls clGetLayerInfo, then
 * clInitLayer with the dispatch table below us, and calls through the
 * table we hand back. Our table is a copy of the one below with the hooks
 * of queues.c and enqueue.c put in. */
#include <string.h>

#include <CL/cl_layer.h>

#include "gz_cl_layer.h"

const struct _cl_icd_dispatch *gz_cl_next;
static struct _cl_icd_dispatch table;

#define LAYER_NAME "gpuzones timing layer"

GZ_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name,
                                                         size_t param_value_size,
                                                         void *param_value,
                                                         size_t *param_value_size_ret)
{
    const void *src;
    size_t size;
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        src = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        src = LAYER_NAME;
        size = sizeof LAYER_NAME;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, src, size);
    }
    if (param_value_size_ret)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

GZ_EXPORT CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                                      const cl_icd_dispatch *target_dispatch,
                                                      cl_uint *num_entries_ret,
                                                      const cl_icd_dispatch **layer_dispatch_ret)
{
    const cl_uint ours = sizeof table / sizeof(void *);
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret)
        return CL_INVALID_VALUE;
    /* A shorter table from an older loader: the entries past its end would
     * be read out of bounds. */
    if (num_entries < ours) {
        gz_log("opencl: the loader's dispatch table has %u entries, fewer than the %u this "
               "layer was built for: the layer stays out of the way",
               num_entries, ours);
        return CL_INVALID_VALUE;
    }
    gz_client_note_frontend(GZ_FRONTEND_OPENCL);
    gz_cl_next = target_dispatch;
    memcpy(&table, target_dispatch, sizeof table);
    gz_cl_layer_queue_hooks(&table);
    gz_cl_layer_enqueue_hooks(&table);
    *num_entries_ret = ours;
    *layer_dispatch_ret = &table;
    return CL_SUCCESS;
}
