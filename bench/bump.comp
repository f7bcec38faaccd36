#version 450
// The smallest useful dispatch: one workgroup adds one to 64 words.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };

void main()
{
    data[gl_GlobalInvocationID.x] += 1u;
}
