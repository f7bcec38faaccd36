/* Shared between the files of the OpenCL context. */
#ifndef GZ_CL_INTERNAL_H
#define GZ_CL_INTERNAL_H

#include "gz_cl.h"

/* The references the context holds, per event (cl_holds.c). */
void gz_cl_holds_add(cl_event ev);
void gz_cl_holds_remove(cl_event ev);
/* References taken and given back since the start; equal at exit. */
void gz_cl_holds_totals(uint64_t *taken, uint64_t *returned);

#endif
