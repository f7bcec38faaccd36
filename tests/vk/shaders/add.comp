#version 450
// Small real work for the test programs: every element of the storage
// buffer becomes data * 3 + a.  Integer math so results are exact.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Work { uint data[]; };
layout(push_constant) uniform Push { uint a; uint b; } pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(data.length()))
        data[i] = data[i] * 3u + pc.a;
}
