#version 450
// A flat color from the push constants.
layout(push_constant) uniform Push { vec4 color; } push;
layout(location = 0) out vec4 result;

void main()
{
    result = push.color;
}
