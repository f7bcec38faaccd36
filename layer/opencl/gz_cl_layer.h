/* The OpenCL layer (ocl-icd OPENCL_LAYERS): interception only; timing is
 * done by contexts/cl. */
#ifndef GZ_CL_LAYER_H
#define GZ_CL_LAYER_H

#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include "gz_cl.h"
#include <CL/cl_icd.h>

/* The layer below us (another layer or the loader's dispatch to the ICD). */
extern const struct _cl_icd_dispatch *gz_cl_next;

/* queues.c: the queues the application created and what it asked for. */
void gz_cl_layer_queue_hooks(struct _cl_icd_dispatch *d);
/* The timeline of q, or NULL (not ours, or the client is off). */
gz_cl_queue *gz_cl_layer_queue(cl_command_queue q);

/* enqueue.c */
void gz_cl_layer_enqueue_hooks(struct _cl_icd_dispatch *d);

#endif
