/* volk's implementation: Debian's libvulkan-volk-dev ships it as a source
 * file next to volk.h, for the program to build itself. */
#include <volk.c>
