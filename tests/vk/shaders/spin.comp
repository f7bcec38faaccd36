#version 450
// The "known workload": each invocation runs a serial integer recurrence for
// pc.iterations steps and stores the result, so the dispatch's duration
// scales with the number of workgroups and the program can calibrate it to
// ~20 ms.  The host recomputes some results, so nothing can be skipped.
// llvmpipe stops any loop after 65535 iterations per invocation (a gallivm
// safety limit), which is why the work is spread over invocations rather
// than put in one long loop.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Work { uint data[]; };
layout(push_constant) uniform Push { uint iterations; uint seed; } pc;

void main()
{
    uint gid = gl_GlobalInvocationID.x;
    uint x = pc.seed + gid;
    for (uint i = 0u; i < pc.iterations; i++) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 13;
    }
    if (gid < uint(data.length()))
        data[gid] = x;
}
