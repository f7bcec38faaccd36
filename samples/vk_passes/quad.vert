#version 450
// Two triangles over the lower half of the target, no vertex buffer.
void main()
{
    const vec2 corners[6] = vec2[](vec2(-1, 0), vec2(1, 0), vec2(1, 1),
                                   vec2(-1, 0), vec2(1, 1), vec2(-1, 1));
    gl_Position = vec4(corners[gl_VertexIndex], 0.9, 1.0);
}
