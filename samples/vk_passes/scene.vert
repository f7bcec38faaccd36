#version 450
// A cube instance: the corner positions (binding 0) scaled and placed by
// the instance's offset and size (binding 1).
layout(location = 0) in vec3 corner;
layout(location = 1) in vec4 instance; // xyz offset, w size

void main()
{
    vec3 p = corner * instance.w + instance.xyz;
    gl_Position = vec4(p.xy, 0.5 + 0.4 * p.z, 1.0);
}
