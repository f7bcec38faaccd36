#version 450
// Each invocation mixes its element `rounds` times (work of a known size);
// the host computes the same.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { uint v[]; } data;
layout(push_constant) uniform Push { uint rounds; uint salt; } push;

void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
    uint x = data.v[i];
    for (uint r = 0u; r < push.rounds; r++)
        x = x * 1664525u + 1013904223u + push.salt;
    data.v[i] = x;
}
