#version 450
// Damping: every velocity loses a sixteenth of itself.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Pos { uint pos[]; };
layout(std430, set = 0, binding = 1) buffer Vel { uint vel[]; };

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(vel.length()))
        vel[i] -= vel[i] >> 4;
}
