#version 450
// Each invocation scrambles its element with its index; the host computes
// the same.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { uint v[]; } data;
layout(push_constant) uniform Push { uint rounds; uint salt; } push;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    data.v[i] = data.v[i] ^ (i * 2654435761u) ^ push.salt;
}
