#version 450
// One integration step of a toy particle system in integer units:
// vel += acc, pos += vel.  Unsigned math wraps the same on GPU and host, so
// the host can check every element exactly.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Pos { uint pos[]; };
layout(std430, set = 0, binding = 1) buffer Vel { uint vel[]; };
layout(push_constant) uniform Push { uint acc; } pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(pos.length()))
        return;
    uint v = vel[i] + pc.acc + (i & 7u);
    vel[i] = v;
    pos[i] += v;
}
